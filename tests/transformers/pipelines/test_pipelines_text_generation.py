"""pipeline("text-generation") against Hugging Face's, call by call.

tests/fixtures/make_text_generation_fixtures.py ran HF's pipeline on a tiny GPT-2 (prompts,
batches, beams, token ids, a stop sequence, a chat through a template set on the tokenizer) and a tiny Llama
with a chat template (chats, batched chats, a continued assistant message), greedily. The
same calls here must give the same outputs exactly.
"""
import json
import os

import pytest

from mindnlp import core
from mindnlp.transformers import GPT2LMHeadModel, GPT2Model, pipeline
from mindnlp.transformers.pipelines import TextGenerationPipeline

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
GPT2_DIR = os.path.join(FIXTURES, "gpt2", "gpt2", "model")
LLAMA_DIR = os.path.join(FIXTURES, "text_generation", "llama_chat")

with open(os.path.join(FIXTURES, "text_generation", "calls.json"), encoding="utf-8") as fh:
    CALLS = json.load(fh)["calls"]


def make_pipeline(model_key, init):
    directory = GPT2_DIR if model_key == "gpt2" else LLAMA_DIR
    init = dict(init)
    template = init.pop("chat_template", None)
    pipe = pipeline("text-generation", model=directory, **init)
    if template is not None:
        pipe.tokenizer.chat_template = template
    if pipe.tokenizer.pad_token_id is None:
        pipe.tokenizer.pad_token = pipe.tokenizer.eos_token
    return pipe


@pytest.mark.parametrize("record", CALLS, ids=[f"{r['model']}-{i}" for i, r in enumerate(CALLS)])
def test_matches_hf_pipeline(record):
    pipe = make_pipeline(record["model"], record["init"])
    assert isinstance(pipe, TextGenerationPipeline)
    assert pipe(record["inputs"], **record["kwargs"]) == record["output"]


def test_pipeline_defaults_apply_only_where_nothing_is_set():
    """256 new tokens and sampling at 0.7 unless the call (or the model's generation config) says
    otherwise; the sampling default is dropped when not sampling; the tokenizer's pad id is added."""
    pipe = make_pipeline("gpt2", {})
    assert pipe._generate_kwargs({}) == {"max_new_tokens": 256, "do_sample": True, "temperature": 0.7,
                                         "pad_token_id": 0}
    assert pipe._generate_kwargs({"do_sample": False, "max_length": 20}) == {"do_sample": False, "max_length": 20,
                                                                            "pad_token_id": 0}
    pipe.model.generation_config.temperature = 0.3
    assert "temperature" not in pipe._generate_kwargs({})


def test_model_instance_and_generator_input():
    model = GPT2LMHeadModel.from_pretrained(GPT2_DIR)
    pipe = pipeline("text-generation", model=model)
    expected = pipe("Hello world", do_sample=False, max_new_tokens=3)
    streamed = list(pipe((text for text in ["Hello world", "Hello world"]), do_sample=False, max_new_tokens=3))
    assert streamed == [expected, expected]


def test_invalid_inputs_are_rejected():
    pipe = make_pipeline("gpt2", {})
    with pytest.raises(ValueError, match="'role' and 'content'"):
        pipe([{"role": "user", "content": "hi"}, {"text": "no role"}])
    with pytest.raises(ValueError, match="mutually exclusive"):
        pipe("Hello", return_full_text=True, return_tensors=True)
    with pytest.raises(TypeError, match="text-generation takes a string"):
        pipe(core.tensor([1, 2]))
    with pytest.raises(ValueError, match="cannot generate text"):
        pipeline("text-generation", model=GPT2Model.from_pretrained(GPT2_DIR), tokenizer=GPT2_DIR)
