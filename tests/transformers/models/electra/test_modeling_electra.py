"""ELECTRA: parity with HF transformers on tests/fixtures/encoders/electra (every head, generator and
discriminator, the tokenizer, saved files), and what ELECTRA changes from BERT."""
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForPreTraining,
    BertTokenizerFast,
    ElectraConfig,
    ElectraForCausalLM,
    ElectraForMaskedLM,
    ElectraForPreTraining,
    ElectraModel,
)
from mindnlp.transformers.generation import GenerationMixin
from mindnlp.transformers.models.electra import modeling_electra

from ...encoder_fixtures import EncoderFixtures, check_loss_reaches_every_parameter

FIXTURES = EncoderFixtures("electra")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    FIXTURES.check_case(modeling_electra, case)


def test_inputs_embeds_match_hf():
    FIXTURES.check_inputs_embeds(modeling_electra)


def test_tokenizer_is_berts_and_matches_hf():
    FIXTURES.check_tokenizer(BertTokenizerFast)


@pytest.mark.parametrize("case", ["model", "masked_lm", "pretraining", "multiple_choice"])
def test_saved_files_load_back(case, tmp_path):
    FIXTURES.check_save_round_trip(modeling_electra, case, tmp_path)


def test_auto_classes_pick_electra():
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is ElectraModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is ElectraForMaskedLM
    assert type(AutoModelForPreTraining.from_pretrained(FIXTURES.checkpoint)) is ElectraForPreTraining
    assert type(AutoModelForCausalLM.from_pretrained(FIXTURES.checkpoint, is_decoder=True)) is ElectraForCausalLM


@pytest.mark.parametrize("case", ["masked_lm", "causal_lm", "pretraining", "seq_cls_single", "multiple_choice"])
def test_training_reaches_every_parameter(case):
    model, _ = FIXTURES.load_case(modeling_electra, case)
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs(case), **FIXTURES.labels(case)})


def test_generator_head_is_tied_and_projection_only_when_needed():
    model, _ = FIXTURES.load_case(modeling_electra, "masked_lm")
    assert model.generator_lm_head.weight is model.electra.embeddings.word_embeddings.weight
    assert model.electra.pooler is None and hasattr(model.electra, "embeddings_project")
    same_width = ElectraModel(ElectraConfig(vocab_size=20, embedding_size=16, hidden_size=16, num_hidden_layers=1))
    assert not hasattr(same_width, "embeddings_project")


def test_causal_lm_generates_with_its_cache():
    """The decoder mode is BERT's: greedy ids with the cache equal those recomputed from scratch."""
    model, _ = FIXTURES.load_case(modeling_electra, "causal_lm")
    assert GenerationMixin in ElectraForCausalLM.__bases__
    prompt = core.tensor([[5, 9, 14]])
    cached = model.generate(prompt, max_new_tokens=4, do_sample=False)
    uncached = model.generate(prompt, max_new_tokens=4, do_sample=False, use_cache=False)
    assert cached.tolist() == uncached.tolist()
