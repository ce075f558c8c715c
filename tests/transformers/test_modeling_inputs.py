"""Wrong inputs to models, generate() and tokenizers fail at once with a message naming the
argument and the fix, for every family (the checks live in PreTrainedModel and
GenerationMixin, not in the model files)."""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer
from mindnlp.transformers.modeling_inputs import InputOutOfRangeError

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
CHECKPOINTS = {
    "gpt2": os.path.join(FIXTURES, "gpt2", "gpt2", "model"),
    "llama": os.path.join(FIXTURES, "text_generation", "llama_chat"),
    "roberta": os.path.join(FIXTURES, "encoders", "roberta", "checkpoint"),
    "distilbert": os.path.join(FIXTURES, "encoders", "distilbert", "checkpoint"),
}
IDS = core.tensor([[5, 6, 7, 8]])


@pytest.fixture(scope="module", params=sorted(CHECKPOINTS))
def model(request):
    return AutoModel.from_pretrained(CHECKPOINTS[request.param])


@pytest.mark.parametrize("length", [2, 6])
def test_a_mask_of_another_length_is_refused(model, length):
    with pytest.raises(ValueError, match=rf"attention_mask has shape \(1, {length}\) but input_ids has shape \(1, 4\)"):
        model(input_ids=IDS, attention_mask=core.ones((1, length), dtype=core.int64))


def test_input_ids_without_a_batch_dimension(model):
    with pytest.raises(ValueError, match=r"input_ids should have 2 dimensions .* got shape \(4,\): add the batch"):
        model(IDS[0])


@pytest.mark.parametrize("value", [np.array([[5, 6]]), [[5, 6]]], ids=["numpy", "list"])
def test_arrays_and_lists_are_a_type_error_naming_the_argument(model, value):
    with pytest.raises(TypeError, match="input_ids must be a mindnlp.core Tensor, not"):
        model(input_ids=value)
    with pytest.raises(TypeError, match="attention_mask must be a mindnlp.core Tensor"):
        model(input_ids=core.tensor([[5, 6]]), attention_mask=value)


@pytest.mark.parametrize("bad", [10_000, -2])
def test_ids_outside_the_vocabulary(model, bad):
    vocab = model.get_input_embeddings().num_embeddings
    with pytest.raises(InputOutOfRangeError, match=rf"token id {bad}, outside the model's vocabulary \(ids 0 to "
                                                   rf"{vocab - 1}\)"):
        model(input_ids=core.tensor([[5, bad]]))


def test_sequences_longer_than_the_position_table(model):
    table = getattr(model.config, "max_position_embeddings", None) or model.config.n_positions
    ids = core.full((1, table + 5), 5, dtype=core.int64)
    if model.config.model_type == "llama":  # rotary positions: no table to run past
        assert model(input_ids=ids).last_hidden_state.shape[1] == table + 5
        return
    with pytest.raises(InputOutOfRangeError, match=rf"the input is {table + 5} tokens long, but the model's position "
                                                   rf"table holds {table} positions"):
        model(input_ids=ids)


def test_sdpa_with_a_mask_that_does_not_broadcast_says_so_as_torch():
    q = core.randn(1, 2, 4, 8)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match the existing size \(6\) "
                                           r"at non-singleton dimension 3"):
        core.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=core.zeros(1, 1, 4, 6))


@pytest.fixture(scope="module")
def gpt2():
    return AutoModelForCausalLM.from_pretrained(CHECKPOINTS["gpt2"])


@pytest.mark.parametrize("prompt, error, message", [
    (core.tensor([5, 6, 7]), ValueError, r"should have 2 dimensions .* got shape \(3,\)"),
    (np.array([[5, 6, 7]]), TypeError, "input_ids must be a mindnlp.core Tensor, not numpy.ndarray"),
    (core.zeros((1, 0), dtype=core.int64), ValueError, "is empty"),
])
def test_generate_refuses_prompts_it_cannot_continue(gpt2, prompt, error, message):
    with pytest.raises(error, match=message):
        gpt2.generate(prompt, max_new_tokens=2)


def test_generate_refuses_a_mask_of_another_shape(gpt2):
    with pytest.raises(ValueError, match=r"attention_mask has shape \(1, 6\) but input_ids has shape \(1, 4\)"):
        gpt2.generate(IDS, attention_mask=core.ones((1, 6), dtype=core.int64), max_new_tokens=2)


def test_generate_on_an_encoder_warns_as_hf(caplog):
    from mindnlp.transformers import RobertaForCausalLM

    model = RobertaForCausalLM.from_pretrained(CHECKPOINTS["roberta"])
    model.generate(IDS, max_new_tokens=1)
    assert "If you want to use `RobertaForCausalLM` as a standalone, add `is_decoder=True.`" in caplog.text


def test_text_generation_pipeline_on_an_encoder_warns_as_hf(caplog):
    from mindnlp.transformers import pipeline

    generator = pipeline("text-generation", model=CHECKPOINTS["roberta"])
    generator("hello", max_new_tokens=1)
    assert "add `is_decoder=True.`" in caplog.text


@pytest.mark.parametrize("value, message", [
    ("abc", r"got str 'abc'; to turn text into ids, call the tokenizer"),
    ([1.5, 2], "got float 1.5"),
    ([[1, 2], ["x"]], "got str 'x'"),
    (None, "got NoneType None"),
])
def test_tokenizer_decode_of_something_else_than_ids(value, message):
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINTS["gpt2"])
    with pytest.raises(TypeError, match=message):
        tokenizer.decode(value)
    # What HF accepts keeps working: arrays, tensors, numpy integers, batches.
    assert tokenizer.decode(np.array([31, 32])) == tokenizer.decode(core.tensor([31, 32])) == tokenizer.decode([31, 32])
    assert tokenizer.decode(np.int64(31)) == tokenizer.decode(31)
    assert tokenizer.decode([[31], [32]]) == [tokenizer.decode(31), tokenizer.decode(32)]
