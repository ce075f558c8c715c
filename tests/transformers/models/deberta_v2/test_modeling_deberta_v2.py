"""DeBERTa-v2/v3: parity with HF transformers on tests/fixtures/encoders/deberta_v2 (every head,
v2's and v3's attention layouts, both masked-LM heads, the tokenizer, saved files), and what
DeBERTa changes from BERT: disentangled attention over bucketed relative positions."""
import json

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoModel,
    AutoModelForMaskedLM,
    DebertaV2Config,
    DebertaV2ForMaskedLM,
    DebertaV2Model,
    DebertaV2TokenizerFast,
)
from mindnlp.transformers.modeling_position_buckets import log_bucket_position
from mindnlp.transformers.models.deberta_v2 import modeling_deberta_v2

from ...encoder_fixtures import EncoderFixtures, check_loss_reaches_every_parameter

FIXTURES = EncoderFixtures("deberta_v2")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    FIXTURES.check_case(modeling_deberta_v2, case)


def test_inputs_embeds_match_hf():
    FIXTURES.check_inputs_embeds(modeling_deberta_v2)


def test_tokenizer_matches_hf():
    FIXTURES.check_tokenizer(DebertaV2TokenizerFast)


def test_tokenizer_built_from_pieces_matches_hf():
    """Built from (piece, score) pairs, as from an spm.model's pieces, it encodes as HF's tokenizer.json does."""
    loaded = DebertaV2TokenizerFast.from_pretrained(FIXTURES.checkpoint)
    vocab = [tuple(entry) for entry in json.loads(loaded.backend_tokenizer.model.__getstate__())["vocab"]]
    built = DebertaV2TokenizerFast(vocab=vocab)
    assert built.unk_token_id == loaded.unk_token_id == 3
    for record in FIXTURES.expected["tokenizer"]["encodings"]:
        assert built(record["text"], record["pair"])["input_ids"] == record["encoding"]["input_ids"]


def test_tokenizer_needs_a_vocabulary():
    with pytest.raises(ValueError, match="spm.model"):
        DebertaV2TokenizerFast()


@pytest.mark.parametrize("case", ["model", "masked_lm", "masked_lm_not_legacy", "seq_cls_single", "multiple_choice"])
def test_saved_files_load_back(case, tmp_path):
    FIXTURES.check_save_round_trip(modeling_deberta_v2, case, tmp_path)


def test_auto_classes_pick_deberta_v2():
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is DebertaV2Model
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is DebertaV2ForMaskedLM


@pytest.mark.parametrize("case", ["masked_lm", "masked_lm_not_legacy", "seq_cls_single", "token_cls",
                                  "multiple_choice"])
def test_training_reaches_every_parameter(case):
    model, _ = FIXTURES.load_case(modeling_deberta_v2, case)
    inputs = {**FIXTURES.inputs(case), **FIXTURES.labels(case)}
    model.config.hidden_dropout_prob = 0.0
    check_loss_reaches_every_parameter(model, inputs)


def test_log_buckets_keep_near_distances_and_compress_far_ones():
    """Distances under bucket_size / 2 are exact; beyond, they grow logarithmically and keep their sign."""
    relative = core.arange(-20, 21)
    buckets = log_bucket_position(relative, bucket_size=8, max_position=64)
    assert buckets[17:24].tolist() == [-3, -2, -1, 0, 1, 2, 3]
    assert core.equal(buckets, -buckets.flip(0))
    far = buckets[24:].tolist()
    assert far == sorted(far) and far[-1] < 20 and far[-1] <= 7


def test_padded_queries_attend_uniformly_and_padding_is_zero_in_the_embeddings():
    """DeBERTa masks queries as well as keys: a padded row spreads its attention evenly."""
    config = DebertaV2Config(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                             intermediate_size=20, relative_attention=True, pos_att_type=["c2p", "p2c"],
                             max_position_embeddings=16)
    model = DebertaV2Model(config).eval()
    ids, mask = core.tensor([[3, 4, 5, 0]]), core.tensor([[1, 1, 1, 0]])
    with core.no_grad():
        out = model(ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)
    np.testing.assert_allclose(out.attentions[0][0, :, 3].numpy(), 0.25, atol=1e-6)
    assert float(out.attentions[0][0, :, :3, 3].abs().max()) == 0.0
    assert float(out.hidden_states[0][0, 3].abs().max()) == 0.0


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="pos_att_type"):
        DebertaV2Model(DebertaV2Config(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=20, relative_attention=True, pos_att_type=["p2p"]))
    model = DebertaV2Model(DebertaV2Config(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                           intermediate_size=20))
    with pytest.raises(ValueError, match="padding mask"):
        model(core.tensor([[3, 4]]), attention_mask=core.ones(1, 1, 2, 2))


def test_old_configs_spell_pos_att_type_with_bars():
    assert DebertaV2Config(pos_att_type="P2C|c2p").pos_att_type == ["p2c", "c2p"]
