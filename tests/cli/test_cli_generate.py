"""`mindnlp generate` and `mindnlp embed` on the tiny fixture models.

Expected texts are HF's: tests/fixtures/text_generation/calls.json holds HF's pipeline output
for the same greedy generations, and tests/fixtures/cli/embed.json HF's mean-pooled,
normalised embeddings (made by tests/fixtures/make_cli_fixtures.py).
"""
import json
from pathlib import Path

import numpy as np
import pytest

from mindnlp.cli import main

from ..transformers.models.seq2seq_parity import tiny_marian_translator
from .conftest import REPO_ROOT
from .hub_server import LocalHub

FIXTURES = REPO_ROOT / "tests" / "fixtures"
GPT2_DIR = FIXTURES / "gpt2" / "gpt2" / "model"
LLAMA_DIR = FIXTURES / "text_generation" / "llama_chat"
ENCODER_DIR = FIXTURES / "encoders" / "distilbert" / "checkpoint"
CALLS = json.loads((FIXTURES / "text_generation" / "calls.json").read_text(encoding="utf-8"))["calls"]
EMBED = json.loads((FIXTURES / "cli" / "embed.json").read_text(encoding="utf-8"))


def _hf_output(model, inputs, **kwargs):
    for record in CALLS:
        if record["model"] == model and record["inputs"] == inputs and record["kwargs"] == kwargs:
            return record["output"][0]["generated_text"]
    raise LookupError(f"no recorded HF call for {model} {inputs} {kwargs}")


HELLO_WORLD = _hf_output("gpt2", "Hello world", do_sample=False, max_new_tokens=8)


def test_generate_prints_prompt_and_greedy_continuation(capsys):
    assert main(["generate", str(GPT2_DIR), "--prompt", "Hello world", "--max-new-tokens", "8"]) == 0
    assert capsys.readouterr().out == HELLO_WORLD + "\n"


def test_generate_stream_prints_the_same_text(capsys):
    assert main(["generate", str(GPT2_DIR), "--prompt", "Hello world", "--max-new-tokens", "8", "--stream"]) == 0
    assert capsys.readouterr().out == HELLO_WORLD + "\n"


def test_generate_chat_prints_the_reply(capsys):
    reply = _hf_output("llama_chat", [{"role": "user", "content": "Hello"}], do_sample=False, max_new_tokens=4,
                       return_full_text=False)
    assert main(["generate", str(LLAMA_DIR), "--prompt", "Hello", "--max-new-tokens", "4", "--chat"]) == 0
    assert capsys.readouterr().out == reply + "\n"


def test_generate_sampling_is_reproducible_with_a_seed(capsys):
    command = ["generate", str(GPT2_DIR), "--prompt", "I like", "--max-new-tokens", "6", "--do-sample",
               "--temperature", "1.5", "--top-k", "50", "--top-p", "0.95", "--seed", "3"]
    assert main(command) == 0
    first = capsys.readouterr().out
    assert main(command) == 0
    assert capsys.readouterr().out == first
    assert first.startswith("I like")


@pytest.mark.parametrize("drafts", [["--assistant", str(GPT2_DIR)], ["--prompt-lookup", "3"]])
def test_generate_with_assisted_decoding_prints_the_greedy_text(drafts, capsys):
    """Drafts checked by the model change the speed, never the greedy text."""
    assert main(["generate", str(GPT2_DIR), "--prompt", "Hello world", "--max-new-tokens", "8", *drafts]) == 0
    assert capsys.readouterr().out == HELLO_WORLD + "\n"


def test_generate_rejects_bad_requests(capsys):
    assert main(["generate", str(GPT2_DIR), "--prompt", "x", "--max-new-tokens", "0"]) == 2
    assert "--max-new-tokens must be at least 1" in capsys.readouterr().err
    assert main(["generate", str(GPT2_DIR), "--prompt", "x", "--prompt-lookup", "0"]) == 2
    assert "--prompt-lookup must be at least 1" in capsys.readouterr().err
    assert main(["generate", str(GPT2_DIR), "--prompt", "x", "--chat"]) == 1
    assert "has no chat template" in capsys.readouterr().err


def test_generate_from_a_hub_id_through_an_endpoint(hf_home, capsys):
    files = {path.name: path.read_bytes() for path in Path(GPT2_DIR).iterdir()}
    with LocalHub() as hub:
        hub.add_repo("tiny/gpt2", files)
        code = main(["generate", "tiny/gpt2", "--endpoint", hub.url, "--prompt", "Hello world",
                     "--max-new-tokens", "8"])
    assert code == 0
    assert capsys.readouterr().out == HELLO_WORLD + "\n"
    assert any((hf_home / "hub").glob("models--tiny--gpt2/snapshots/*/model.safetensors"))


def test_generate_as_a_console_command(run):
    result = run("generate", str(GPT2_DIR), "--prompt", "Hello world", "--max-new-tokens", "8")
    assert result.returncode == 0, result.stderr
    assert result.stdout == HELLO_WORLD + "\n"


def test_embed_prints_hf_sentence_embeddings_as_json(capsys):
    assert main(["embed", str(ENCODER_DIR), *EMBED["texts"]]) == 0
    vectors = np.array(json.loads(capsys.readouterr().out))
    np.testing.assert_allclose(vectors, np.array(EMBED["embeddings"]), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_embed_similarity_matrix(capsys):
    assert main(["embed", str(ENCODER_DIR), *EMBED["texts"], "--similarity"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [f"[{i}] {text}" for i, text in enumerate(EMBED["texts"])]
    rows = [[float(v) for v in line.split("]", 1)[1].split()] for line in lines[4:]]
    np.testing.assert_allclose(rows, np.array(EMBED["similarity"]), atol=1e-4)


@pytest.mark.parametrize("command", ["generate", "embed"])
def test_unknown_mirror_is_a_clear_error(command, capsys):
    args = [command, str(GPT2_DIR), "--mirror", "nowhere"]
    args += ["--prompt", "x"] if command == "generate" else ["text"]
    assert main(args) == 2
    assert "unknown mirror 'nowhere'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory):
    """A tiny Marian translator saved with its tokenizer, as a Hub folder holds them."""
    model, tokenizer = tiny_marian_translator()
    folder = tmp_path_factory.mktemp("marian")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _translation(folder, prompt, **settings):
    from mindnlp.transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    model = AutoModelForSeq2SeqLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = model.generate(**tokenizer(prompt, return_tensors="pt"), pad_token_id=tokenizer.pad_token_id, **settings)
    return tokenizer.decode(ids[0], skip_special_tokens=True)


@pytest.mark.parametrize("extra", [[], ["--stream"], ["--prompt-lookup", "2"]])
def test_generate_with_a_seq2seq_model_prints_its_output(marian_dir, extra, capsys):
    """The prompt is the encoder's input: only the decoder's text is printed, streamed or not,
    and drafts checked by the model do not change it."""
    expected = _translation(marian_dir, "Hello world", max_new_tokens=6)
    assert main(["generate", str(marian_dir), "--prompt", "Hello world", "--max-new-tokens", "6", *extra]) == 0
    assert capsys.readouterr().out == expected + "\n"
    assert not expected.startswith("Hello world")


def test_generate_with_a_seq2seq_assistant(marian_dir, capsys):
    expected = _translation(marian_dir, "Hello world", max_new_tokens=6)
    assert main(["generate", str(marian_dir), "--prompt", "Hello world", "--max-new-tokens", "6",
                 "--assistant", str(marian_dir)]) == 0
    assert capsys.readouterr().out == expected + "\n"
