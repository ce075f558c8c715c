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
    for key, value in expected["config"].items():
        assert getattr(model.config, key) == value, key
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


@pytest.mark.parametrize("case", sorted(EXPECTED["tokenizers"]))
def test_tokenizer_ids_and_decoding_equal_transformers(case):
    from mindnlp.transformers import AutoTokenizer

    expected = EXPECTED["tokenizers"][case]
    tokenizer = AutoTokenizer.from_pretrained(FIXTURES, gguf_file=f"{case}.gguf")
    ids = [tokenizer(sentence)["input_ids"] for sentence in EXPECTED["sentences"]]
    assert ids == expected["ids"]
    assert [tokenizer.decode(i, skip_special_tokens=True) for i in ids] == expected["decoded"]


def test_tokenizer_keeps_the_chat_template_and_special_tokens():
    from mindnlp.transformers import AutoTokenizer

    llama = AutoTokenizer.from_pretrained(FIXTURES, gguf_file="llama_tokenizer.gguf")
    assert (llama.bos_token, llama.eos_token, llama.unk_token) == ("<s>", "</s>", "<unk>")
    assert llama.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == "hi"
    qwen = AutoTokenizer.from_pretrained(FIXTURES, gguf_file="qwen2_tokenizer.gguf")
    assert qwen.eos_token == "<|endoftext|>"
    assert qwen("<|im_start|>hi<|im_end|>")["input_ids"][0] == qwen.convert_tokens_to_ids("<|im_start|>")
