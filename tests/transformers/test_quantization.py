"""Weight-only quantization through from_pretrained (QuantoConfig, BitsAndBytesConfig), saving
and reloading quantized models, and QLoRA (prepare_model_for_kbit_training + LoRA).

The tiny Llama and GPT-2 checkpoints are the decoder fixtures saved by HF transformers. A
quantized model is checked against the same model with every weight replaced by its
dequantized value (model.dequantize()), which isolates the kernels from the rounding.
"""
import json
import os

import numpy as np
import pytest
from safetensors.numpy import load_file

from mindnlp import core
from mindnlp.core import nn
from mindnlp.peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from mindnlp.transformers import AutoModelForCausalLM, BitsAndBytesConfig, QuantoConfig

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
LLAMA = os.path.join(FIXTURES, "decoders", "llama", "model")
GPT2 = os.path.join(FIXTURES, "gpt2", "gpt2", "model")
IDS = core.tensor([[1, 5, 9, 17, 3, 22, 7, 8, 9, 10, 11, 12]])
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
    assert np.abs(quantized - float_logits).max() < (0.01 if config.weight_bits == 8 else 0.1) * spread

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
    its codebook in blocks of 64, the block scales rounded to 8 bits with double quantization."""
    quanto = _quantized_layers(AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=QuantoConfig(
        weights="int4")))
    assert all(m.scheme == "affine" and m.weight_offset is not None for m in quanto.values())
    assert {m.group_size for m in quanto.values()} <= {128, 64, 32}
    fp4 = _quantized_layers(AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=BitsAndBytesConfig(
        load_in_4bit=True)))  # bitsandbytes' default quant type
    assert {m.scheme for m in fp4.values()} == {"fp4"} and {m.group_size for m in fp4.values()} <= {64, 32}
    bnb = {dq: _quantized_layers(AutoModelForCausalLM.from_pretrained(LLAMA, quantization_config=BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=dq))) for dq in (False, True)}
    for name, plain in bnb[False].items():
        nested = bnb[True][name]
        assert plain.scheme == "nf4" and plain.weight_offset is None
        np.testing.assert_array_equal(nested.weight.numpy(), plain.weight.numpy())
        scales, rounded = plain.weight_scale.numpy(), nested.weight_scale.numpy()
        # 8-bit rounding of the scales, centred on their mean: within half a level of the spread
        bound = np.abs(scales - scales.mean()).max() / 127 / 2 * (1 + 1e-5) + 1e-7
        assert np.abs(rounded - scales).max() <= bound


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
        expected = nn.QuantizedLinear.from_float(weight, None, *formats[name_in_peft])
        np.testing.assert_array_equal(layer.weight.numpy(), expected.weight.numpy())
        np.testing.assert_allclose(layer.dequantized_weight().numpy(), expected.dequantized_weight().numpy(),
                                   rtol=0, atol=1e-7)
    spread = np.abs(unmerged).max()
    assert np.abs(_logits(merged) - unmerged).max() < (0.01 if CONFIGS[name]().weight_bits == 8 else 0.1) * spread
