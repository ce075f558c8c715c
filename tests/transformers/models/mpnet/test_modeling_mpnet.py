"""MPNet: parity with HF transformers on tests/fixtures/encoders/mpnet (every head, the tokenizer,
saved files), and what MPNet changes from RoBERTa: the relative-position attention bias."""
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoModel,
    AutoModelForMaskedLM,
    MPNetConfig,
    MPNetForMaskedLM,
    MPNetModel,
    MPNetTokenizerFast,
)
from mindnlp.transformers.models.mpnet import modeling_mpnet

from ...encoder_fixtures import EncoderFixtures, check_loss_reaches_every_parameter

FIXTURES = EncoderFixtures("mpnet")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    FIXTURES.check_case(modeling_mpnet, case)


def test_inputs_embeds_match_hf():
    FIXTURES.check_inputs_embeds(modeling_mpnet)


def test_tokenizer_matches_hf():
    FIXTURES.check_tokenizer(MPNetTokenizerFast)


def test_tokenizer_built_from_vocab_lays_out_pairs_as_hf(tmp_path):
    """Built from vocab.txt, pairs get `<s> A </s></s> B </s>`, as the HF-made tokenizer.json says."""
    loaded = MPNetTokenizerFast.from_pretrained(FIXTURES.checkpoint)
    vocab = sorted(loaded.get_vocab().items(), key=lambda item: item[1])
    (tmp_path / "vocab.txt").write_text("\n".join(token for token, _ in vocab) + "\n", encoding="utf-8")
    built = MPNetTokenizerFast(vocab_file=str(tmp_path / "vocab.txt"))
    for record in FIXTURES.expected["tokenizer"]["encodings"]:
        assert built(record["text"], record["pair"])["input_ids"] == record["encoding"]["input_ids"]


@pytest.mark.parametrize("case", ["model", "masked_lm", "seq_cls_single", "multiple_choice"])
def test_saved_files_load_back(case, tmp_path):
    FIXTURES.check_save_round_trip(modeling_mpnet, case, tmp_path)


def test_auto_classes_pick_mpnet():
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is MPNetModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is MPNetForMaskedLM


@pytest.mark.parametrize("case", ["masked_lm", "seq_cls_single", "token_cls", "multiple_choice"])
def test_training_reaches_every_parameter(case):
    model, _ = FIXTURES.load_case(modeling_mpnet, case)
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs(case), **FIXTURES.labels(case)})


def test_relative_bias_depends_on_distance_only_and_sdpa_matches_eager():
    """The bias of (i, j) is the table row of j - i's bucket, so shifting both positions keeps it;
    the fused kernel given the biased mask computes what eager attention does."""
    config = MPNetConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=20, max_position_embeddings=40)
    model = MPNetModel(config).eval()
    bias = model.encoder.compute_position_bias(core.zeros(1, 6, 16))
    assert tuple(bias.shape) == (1, 2, 6, 6)
    assert core.equal(bias[:, :, 1:, 1:], bias[:, :, :-1, :-1])
    ids, mask = core.tensor([[0, 5, 6, 7, 2, 1]]), core.tensor([[1, 1, 1, 1, 1, 0]])
    with core.no_grad():
        eager = model(ids, attention_mask=mask, output_attentions=True).last_hidden_state
        model.config._attn_implementation = "sdpa"
        sdpa = model(ids, attention_mask=mask).last_hidden_state
    assert core.allclose(eager, sdpa, atol=1e-5)
