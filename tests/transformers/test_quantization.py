"""Weight-only quantization through from_pretrained (QuantoConfig, BitsAndBytesConfig), saving
and reloading quantized models, and QLoRA (prepare_model_for_kbit_training + LoRA).

The tiny Llama and GPT-2 checkpoints are the decoder fixtures saved by HF transformers. A
quantized model is checked against the same model with every weight replaced by its
dequantized value (model.dequantize()), which isolates the kernels from the rounding.
"""
import copy
import json
import os

import numpy as np
import pytest
from safetensors.numpy import load_file

from mindnlp import core
from mindnlp.core import nn
from mindnlp.peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from mindnlp.core.nn import functional as F
from mindnlp.transformers import AutoModelForCausalLM, BitsAndBytesConfig, QuantoConfig
from mindnlp.transformers.integrations.bitsandbytes import Linear4bit, Linear8bitLt

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
LLAMA = os.path.join(FIXTURES, "decoders", "llama", "model")
GPT2 = os.path.join(FIXTURES, "gpt2", "gpt2", "model")
IDS_BNB = [[1, 5, 9, 17, 3, 22, 7, 8, 9, 10, 11, 12]]  # make_bitsandbytes_fixtures.py's
IDS = core.tensor(IDS_BNB)
CONFIGS = {
    "quanto-int8": lambda: QuantoConfig(weights="int8"),
    "quanto-int4": lambda: QuantoConfig(weights="int4"),
    "bnb-8bit": lambda: BitsAndBytesConfig(load_in_8bit=True),
    "bnb-4bit": lambda: BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                           bnb_4bit_compute_dtype="bfloat16"),
    "bnb-4bit-double-quant": lambda: BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                        bnb_4bit_use_double_quant=True),
}


def _logits(model, ids=IDS):
    with core.no_grad():
        return model(ids).logits.numpy()


def _quantized_layers(model):
    return {name: m for name, m in model.named_modules() if isinstance(m, nn.QuantizedLinear)}


def test_configs_keep_hf_fields_and_round_trip():
    bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype="bfloat16",
                             bnb_4bit_use_double_quant=True, llm_int8_skip_modules=["mlp"])
    saved = bnb.to_dict()
    assert saved["quant_method"] == "bitsandbytes" and saved["load_in_4bit"] and not saved["load_in_8bit"]
    assert saved["bnb_4bit_compute_dtype"] == "bfloat16" and saved["bnb_4bit_quant_storage"] == "uint8"
    assert BitsAndBytesConfig.from_dict(saved) == bnb
    quanto = QuantoConfig(weights="int4", modules_to_not_convert=["lm_head"])
    assert quanto.to_dict() == {"quant_method": "quanto", "weights": "int4", "activations": None,
                                "modules_to_not_convert": ["lm_head"]}
    assert QuantoConfig.from_dict(quanto.to_dict()) == quanto


def test_config_errors_are_clear():
    with pytest.raises(ValueError, match="only one can be used"):
        BitsAndBytesConfig(load_in_8bit=True, load_in_4bit=True)
    with pytest.raises(ValueError, match="Only support weights"):
        QuantoConfig(weights="int3")
    with pytest.raises(NotImplementedError, match="no CPU kernel"):
        QuantoConfig(weights="float8")
    with pytest.raises(NotImplementedError, match="activations stay float32"):
        QuantoConfig(activations="int8")
    with pytest.raises(ValueError, match="quantizes nothing"):
        AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=BitsAndBytesConfig())


@pytest.mark.parametrize("path", [LLAMA, GPT2], ids=["llama", "gpt2"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_load_quantized_then_save_and_reload(tmp_path, path, name):
    config = CONFIGS[name]()
    model = AutoModelForCausalLM.from_pretrained(path, quantization_config=config)
    layers = _quantized_layers(model)
    linear_count = sum(isinstance(m, nn.Linear) for m in AutoModelForCausalLM.from_pretrained(path).modules())
    conv1d_count = 8 if path == GPT2 else 0
    # Every projection is quantized; lm_head (the output embeddings) stays float, as in HF.
    assert len(layers) == linear_count + conv1d_count - 1 and "lm_head" not in layers
    assert isinstance(model.lm_head, nn.Linear)
    assert {(m.bits, m.scheme) for m in layers.values()} == {(config.weight_bits, config.scheme)}
    assert model.is_quantized and model.config.quantization_config is config
    quantized = _logits(model)
    float_logits = _logits(AutoModelForCausalLM.from_pretrained(path))
    spread = np.abs(float_logits).max()
    # a sanity bound (each format's values are checked against its library below)
    assert np.abs(quantized - float_logits).max() < (0.01 if config.weight_bits == 8 else 0.2) * spread

    model.save_pretrained(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["quantization_config"] == config.to_dict()
    tensors = load_file(tmp_path / "model.safetensors")
    layer_name = next(iter(layers))
    prefix = "" if any(k.startswith(layer_name) for k in tensors) else model.base_model_prefix + "."
    assert tensors[prefix + layer_name + ".weight"].dtype == (np.int8 if config.weight_bits == 8 else np.uint8)
    reloaded = AutoModelForCausalLM.from_pretrained(tmp_path)
    assert set(_quantized_layers(reloaded)) == set(layers)
    np.testing.assert_allclose(_logits(reloaded), quantized, rtol=0, atol=1e-6)
    greedy = dict(max_new_tokens=6, do_sample=False)
    assert model.generate(IDS, **greedy).tolist() == reloaded.generate(IDS, **greedy).tolist()


def test_each_config_gets_its_librarys_format():
    """quanto int4: affine in groups of 128 (64 where 128 does not divide); bitsandbytes 4-bit:
    its codebook, one absmax per block of 64 weights (two rows of a 32-wide layer), nested
    with double quantization."""
    quanto = _quantized_layers(AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=QuantoConfig(
        weights="int4")))
    assert all(m.scheme == "affine" and m.weight_offset is not None for m in quanto.values())
    assert {m.group_size for m in quanto.values()} <= {128, 64, 32}
    fp4 = _quantized_layers(AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=BitsAndBytesConfig(
        load_in_4bit=True)))  # bitsandbytes' default quant type
    assert {type(m) for m in fp4.values()} == {Linear4bit} and {m.scheme for m in fp4.values()} == {"fp4"}
    q_proj = fp4["model.layers.0.self_attn.q_proj"]
    assert q_proj.group_size == 32 and q_proj.blocksize == 64
    scales = q_proj.weight_scale.numpy()
    np.testing.assert_array_equal(scales[0::2], scales[1::2])  # rows 2i and 2i+1 share a block
    nested = _quantized_layers(AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True)))
    for layer in nested.values():
        assert layer.compress_statistics and layer.absmax_codes.dtype == core.uint8
        decoded = F.quantized.dequantize_blockwise(layer.absmax_codes, layer.nested_absmax, layer.nested_quant_map)
        np.testing.assert_array_equal(np.unique(layer.weight_scale.numpy()),
                                      np.unique(decoded.numpy() + layer.nested_offset.numpy()))


BNB = os.path.join(FIXTURES, "bitsandbytes")
BNB_CASES = {"nf4_double": dict(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True),
             "fp4": dict(load_in_4bit=True, bnb_4bit_quant_type="fp4"), "int8": dict(load_in_8bit=True),
             "nf4_bf16": dict(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                              bnb_4bit_quant_storage="bfloat16", bnb_4bit_compute_dtype="bfloat16")}
BNB_DTYPES = {"nf4_bf16": "bfloat16"}  # make_bitsandbytes_fixtures.py's


@pytest.fixture(scope="module")
def bnb_expected():
    return np.load(os.path.join(BNB, "expected.npz"))


@pytest.mark.parametrize("case", list(BNB_CASES))
def test_bitsandbytes_checkpoints_saved_by_transformers_load(case, bnb_expected):
    """A checkpoint HF saved with BitsAndBytesConfig (bitsandbytes' format) loads; every
    layer reads back as HF dequantizes it, and the logits are HF's (its 8-bit product also
    rounds the activations to int8, so 8-bit is compared with HF's dequantized model)."""
    model = AutoModelForCausalLM.from_pretrained(os.path.join(BNB, case))
    layers = _quantized_layers(model)
    assert {type(m) for m in layers.values()} == {Linear8bitLt if case == "int8" else Linear4bit}
    if case in BNB_DTYPES:  # a bfloat16 model: HF multiplies in bfloat16, mindnlp in float32 (then bfloat16)
        assert model.dtype == core.bfloat16
        with core.no_grad():  # in bfloat16, as loaded: the quantized layers return their input's dtype
            logits = model(core.tensor(IDS_BNB)).logits.float().numpy()
        np.testing.assert_allclose(logits, bnb_expected[f"{case}/logits"], rtol=0, atol=2e-2)
        return
    compared = [name for name in layers if f"{case}/{name}" in bnb_expected]
    assert len(compared) == 2
    for name in compared:
        layer, expected = layers[name], bnb_expected[f"{case}/{name}"]
        np.testing.assert_allclose(layer.dequantized_weight().numpy(), expected, rtol=2.4e-7 if case == "int8" else 0,
                                   atol=0)
    logits = _logits(model, core.tensor(IDS_BNB))
    np.testing.assert_allclose(logits, bnb_expected[f"{case}/dequantized_logits"], rtol=0, atol=1e-5)
    if case != "int8":
        np.testing.assert_allclose(logits, bnb_expected[f"{case}/logits"], rtol=0, atol=1e-5)


def _saved_tensors(folder):
    """The file's arrays (bfloat16 ones too, which safetensors' NumPy reader refuses)."""
    from mindnlp.core import serialization

    return {k: v.numpy() for k, v in serialization.load_safetensors(os.path.join(folder, "model.safetensors")).items()}


def _assert_same_bnb_files(ours, theirs, nested_rtol=0.0):
    """Equal tensors (a quant_state compared as JSON); nested_rtol for the double quantization's
    float32 statistics, whose last bit follows the order of torch's float32 arithmetic."""
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        if "quant_state" in key:
            mine, reference = json.loads(bytes(ours[key])), json.loads(bytes(value))
            assert mine.pop("nested_offset", 0) == pytest.approx(reference.pop("nested_offset", 0), rel=nested_rtol)
            assert mine == reference, key
        elif "nested" in key:
            np.testing.assert_allclose(ours[key], value, rtol=nested_rtol, atol=0, err_msg=key)
        else:  # byte for byte: a zero's sign and a NaN's payload count
            assert ours[key].dtype == value.dtype and ours[key].shape == value.shape, key
            np.testing.assert_array_equal(ours[key].view(np.uint8), value.view(np.uint8), err_msg=key)


@pytest.mark.parametrize("case", list(BNB_CASES))
def test_bitsandbytes_models_save_the_file_transformers_saves(tmp_path, case):
    """Reloaded and saved again, a bitsandbytes checkpoint is the same file (tensor for tensor);
    quantized here from the float model, it is the file HF + bitsandbytes write (HF loading
    both is recorded in interop.json by the fixture script)."""
    reference = _saved_tensors(os.path.join(BNB, case))
    AutoModelForCausalLM.from_pretrained(os.path.join(BNB, case)).save_pretrained(tmp_path / "reload")
    _assert_same_bnb_files(_saved_tensors(tmp_path / "reload"), reference)
    model = AutoModelForCausalLM.from_pretrained(os.path.join(BNB, "float"), dtype=BNB_DTYPES.get(case),
                                                 quantization_config=BitsAndBytesConfig(**BNB_CASES[case]))
    model.save_pretrained(tmp_path / "from_float")
    _assert_same_bnb_files(_saved_tensors(tmp_path / "from_float"), reference,
                           nested_rtol=1e-6 if BNB_CASES[case].get("bnb_4bit_use_double_quant") else 0.0)
    with open(os.path.join(BNB, "interop.json")) as f:
        interop = json.load(f)
    assert interop[f"{case}/reload"] == {"same_tensors": True, "max_logit_difference": 0.0}
    assert interop[f"{case}/from_float"]["max_logit_difference"] < 1e-6


def test_bitsandbytes_layers_state_dict_is_bitsandbytes_format():
    model = AutoModelForCausalLM.from_pretrained(os.path.join(BNB, "nf4_double"))
    keys = {k for k in model.state_dict() if k.startswith("model.layers.0.self_attn.q_proj.")}
    prefix = "model.layers.0.self_attn.q_proj.weight"
    assert keys == {prefix, f"{prefix}.absmax", f"{prefix}.quant_map", f"{prefix}.nested_absmax",
                    f"{prefix}.nested_quant_map", f"{prefix}.quant_state.bitsandbytes__nf4"}
    other = AutoModelForCausalLM.from_pretrained(os.path.join(BNB, "float"),
                                                 quantization_config=BitsAndBytesConfig(**BNB_CASES["nf4_double"]))
    assert np.abs(_logits(other) - _logits(model)).max() > 0  # quantized from float: not the same rounding
    other.load_state_dict(model.state_dict())  # torch's API reads the same layout
    np.testing.assert_array_equal(_logits(other), _logits(model))


def test_a_bitsandbytes_file_that_does_not_fit_the_layer_is_an_error(tmp_path):
    AutoModelForCausalLM.from_pretrained(os.path.join(BNB, "fp4")).save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["quantization_config"]["bnb_4bit_quant_type"] = "nf4"
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(RuntimeError, match="checkpoint lacks .*bitsandbytes__nf4"):
        AutoModelForCausalLM.from_pretrained(tmp_path)


def test_quantized_model_equals_its_dequantized_weights():
    model = AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=QuantoConfig(weights="int4"))
    quantized = _logits(model)
    dense = model.dequantize()
    assert not _quantized_layers(dense) and "quantization_config" not in dense.config.to_dict()
    np.testing.assert_allclose(_logits(dense), quantized, rtol=1e-5, atol=1e-5)


def test_skip_modules_follow_hf_matching():
    model = AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=QuantoConfig(
        weights="int8", modules_to_not_convert=["lm_head", "down_proj", "model.layers.1", "mlp"]))
    # A pattern matches a name's ending, or its start (as a regex, or a prefix before a dot).
    names = set(_quantized_layers(model))
    assert names == {f"model.layers.0.{m}" for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                                     "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj")}


def test_passed_config_does_not_requantize_a_saved_quantized_model(tmp_path, caplog):
    AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=QuantoConfig(weights="int4")).save_pretrained(
        tmp_path)
    reloaded = AutoModelForCausalLM.from_pretrained(tmp_path, quantization_config=QuantoConfig(weights="int8"))
    assert {m.bits for m in _quantized_layers(reloaded).values()} == {4}
    assert "already quantized" in caplog.text


def _lora_config():
    return LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"], task_type="CAUSAL_LM")


@pytest.mark.parametrize("name", ["bnb-4bit", "bnb-8bit"])
def test_qlora_trains_adapters_on_a_quantized_base_and_saves_peft_format(tmp_path, name):
    core.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=CONFIGS[name]())
    base = prepare_model_for_kbit_training(base)
    assert not any(p.requires_grad for p in base.parameters()) and base.is_gradient_checkpointing
    model = get_peft_model(base, _lora_config())
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    frozen_before = {n: t.numpy().copy() for n, t in model.state_dict().items() if "lora_" not in n}
    model.train()
    optimizer = core.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    losses = []
    for _ in range(5):
        loss = model(input_ids=IDS, labels=IDS).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    for key, value in model.state_dict().items():
        if key in frozen_before:
            np.testing.assert_array_equal(value.numpy(), frozen_before[key])

    model.save_pretrained(tmp_path / "qlora")
    plain = get_peft_model(AutoModelForCausalLM.from_pretrained(LLAMA), _lora_config())
    plain.save_pretrained(tmp_path / "lora")
    quantized_adapter = load_file(tmp_path / "qlora" / "adapter_model.safetensors")
    plain_adapter = load_file(tmp_path / "lora" / "adapter_model.safetensors")
    assert {k: (v.shape, v.dtype) for k, v in quantized_adapter.items()} == \
        {k: (v.shape, v.dtype) for k, v in plain_adapter.items()}


@pytest.mark.parametrize("name", ["quanto-int4", "bnb-4bit", "bnb-8bit"])
def test_lora_merges_into_a_quantized_base_by_requantizing(name):
    """merge_and_unload on a quantized base (HF peft's way for bitsandbytes layers): each
    adapted layer's weight dequantized, the adapter added, the sum quantized again in the
    layer's format. The merged model differs from the unmerged one by that last rounding only."""
    core.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=CONFIGS[name]()),
                           _lora_config())
    with core.no_grad():  # a trained adapter: B is zero at initialisation
        for module in model.modules():
            if hasattr(module, "lora_B") and "default" in module.lora_B:
                module.lora_B["default"].weight.normal_(0, 0.02)
    adapted = {n: m for n, m in model.named_modules() if hasattr(m, "lora_B") and "default" in m.lora_B}
    merged_weights = {n: m.get_base_layer().dequantized_weight() + m.get_delta_weight("default")
                      for n, m in adapted.items()}
    formats = {n: (m.get_base_layer().bits, m.get_base_layer().group_size, m.get_base_layer().scheme)
               for n, m in adapted.items()}
    unmerged = _logits(model)
    merged = model.merge_and_unload()
    layers = _quantized_layers(merged)
    for name_in_peft, weight in merged_weights.items():
        layer = layers[name_in_peft.removeprefix("base_model.model.")]
        assert (layer.bits, layer.group_size, layer.scheme) == formats[name_in_peft]
        expected = copy.deepcopy(layer).requantize_(weight)
        np.testing.assert_array_equal(layer.weight.numpy(), expected.weight.numpy())
        np.testing.assert_allclose(layer.dequantized_weight().numpy(), expected.dequantized_weight().numpy(),
                                   rtol=0, atol=1e-7)
    spread = np.abs(unmerged).max()
    assert np.abs(_logits(merged) - unmerged).max() < (0.01 if CONFIGS[name]().weight_bits == 8 else 0.1) * spread
