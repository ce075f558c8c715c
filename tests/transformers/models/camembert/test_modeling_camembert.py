"""CamemBERT: RoBERTa's network under its own names and config. Parity with HF transformers on
tests/fixtures/encoders/camembert: every head, the sentencepiece tokenizer, saved files."""
import pytest

from mindnlp.transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    CamembertConfig,
    CamembertForCausalLM,
    CamembertForMaskedLM,
    CamembertModel,
    CamembertTokenizerFast,
)
from mindnlp.transformers.generation import GenerationMixin
from mindnlp.transformers.models.camembert import modeling_camembert

from ...encoder_fixtures import EncoderFixtures, check_loss_reaches_every_parameter

FIXTURES = EncoderFixtures("camembert")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    FIXTURES.check_case(modeling_camembert, case)


def test_inputs_embeds_match_hf():
    FIXTURES.check_inputs_embeds(modeling_camembert)


def test_tokenizer_matches_hf():
    FIXTURES.check_tokenizer(CamembertTokenizerFast)


@pytest.mark.parametrize("case", ["model", "masked_lm", "causal_lm"])
def test_saved_files_load_back(case, tmp_path):
    FIXTURES.check_save_round_trip(modeling_camembert, case, tmp_path)


def test_classes_use_the_camembert_config_and_roberta_names():
    for name in modeling_camembert.__all__:
        model_class = getattr(modeling_camembert, name)
        assert model_class.config_class is CamembertConfig and model_class.base_model_prefix == "roberta"
    assert GenerationMixin in CamembertForCausalLM.__bases__


def test_auto_classes_pick_camembert():
    assert type(AutoConfig.from_pretrained(FIXTURES.checkpoint)) is CamembertConfig
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is CamembertModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is CamembertForMaskedLM
    assert type(AutoModelForCausalLM.from_pretrained(FIXTURES.checkpoint, is_decoder=True)) is CamembertForCausalLM


def test_training_reaches_every_parameter():
    model, _ = FIXTURES.load_case(modeling_camembert, "masked_lm")
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs("masked_lm"), **FIXTURES.labels("masked_lm")})
