"""ALBERT: parity with HF transformers on tests/fixtures/encoders/albert (every head, the
tokenizer, saved files), and what ALBERT changes from BERT: shared layers, factorised embeddings."""
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AlbertConfig,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertModel,
    AlbertTokenizerFast,
    AutoModel,
    AutoModelForMaskedLM,
    AutoModelForPreTraining,
)
from mindnlp.transformers.models.albert import modeling_albert

from ...encoder_fixtures import EncoderFixtures, check_loss_reaches_every_parameter

FIXTURES = EncoderFixtures("albert")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    FIXTURES.check_case(modeling_albert, case)


def test_inputs_embeds_match_hf():
    FIXTURES.check_inputs_embeds(modeling_albert)


def test_tokenizer_matches_hf():
    FIXTURES.check_tokenizer(AlbertTokenizerFast)


@pytest.mark.parametrize("case", ["model", "masked_lm", "pretraining", "seq_cls_single"])
def test_saved_files_load_back(case, tmp_path):
    FIXTURES.check_save_round_trip(modeling_albert, case, tmp_path)


def test_auto_classes_pick_albert():
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is AlbertModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is AlbertForMaskedLM
    assert type(AutoModelForPreTraining.from_pretrained(FIXTURES.checkpoint)) is AlbertForPreTraining


@pytest.mark.parametrize("case", ["masked_lm", "pretraining", "multiple_choice"])
def test_training_reaches_every_parameter(case):
    model, _ = FIXTURES.load_case(modeling_albert, case)
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs(case), **FIXTURES.labels(case)})


def test_layers_are_shared_across_depth():
    """Eight layers in two groups of two distinct layers: four parameter sets, each run twice."""
    config = AlbertConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=8, num_hidden_groups=2,
                          inner_group_num=2, num_attention_heads=2, intermediate_size=20)
    model = AlbertModel(config).eval()
    layers = [name for name, _ in model.named_modules() if name.count("albert_layers.") and name.count(".") == 4]
    assert len(layers) == 4
    with core.no_grad():
        out = model(core.tensor([[3, 4, 5]]), output_hidden_states=True, output_attentions=True)
    assert len(out.hidden_states) == 1 + 8 * 2 and len(out.attentions) == 8 * 2
    assert out.hidden_states[0].shape[-1] == 16  # the embeddings mapped to hidden_size


def test_mlm_decoder_is_tied_to_the_word_embeddings():
    model, _ = FIXTURES.load_case(modeling_albert, "masked_lm")
    assert model.predictions.decoder.weight is model.albert.embeddings.word_embeddings.weight
    assert model.predictions.decoder.bias is model.predictions.bias
