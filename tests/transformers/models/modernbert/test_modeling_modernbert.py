"""ModernBERT: parity with HF transformers on tests/fixtures/encoders/modernbert (every head, both
poolings, saved files), and what ModernBERT changes from BERT: alternating global and local
rotary attention, each kind with its own base."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoModel,
    AutoModelForMaskedLM,
    ModernBertConfig,
    ModernBertForMaskedLM,
    ModernBertModel,
)
from mindnlp.transformers.models.modernbert import modeling_modernbert

from ...encoder_fixtures import EncoderFixtures, check_loss_reaches_every_parameter

FIXTURES = EncoderFixtures("modernbert")


def small_config(**overrides):
    return ModernBertConfig(**{**dict(vocab_size=40, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                                      intermediate_size=20, max_position_embeddings=64, local_attention=4,
                                      pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1,
                                      sep_token_id=2), **overrides})


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    FIXTURES.check_case(modeling_modernbert, case)


def test_inputs_embeds_match_hf():
    FIXTURES.check_inputs_embeds(modeling_modernbert)


@pytest.mark.parametrize("case", ["model", "masked_lm", "seq_cls_single", "multiple_choice"])
def test_saved_files_load_back(case, tmp_path):
    FIXTURES.check_save_round_trip(modeling_modernbert, case, tmp_path)


def test_auto_classes_pick_modernbert():
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is ModernBertModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is ModernBertForMaskedLM


@pytest.mark.parametrize("case", ["masked_lm", "seq_cls_single", "seq_cls_mean", "token_cls", "question_answering",
                                  "multiple_choice"])
def test_training_reaches_every_parameter(case):
    model, _ = FIXTURES.load_case(modeling_modernbert, case)
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs(case), **FIXTURES.labels(case)})


def test_layer_types_alternate_and_v4_rope_bases_are_read():
    config = small_config(num_hidden_layers=7, global_attn_every_n_layers=3, global_rope_theta=1234.0,
                          local_rope_theta=56.0)
    assert config.layer_types == ["full_attention", "sliding_attention", "sliding_attention"] * 2 + ["full_attention"]
    assert config.rope_parameters["full_attention"]["rope_theta"] == 1234.0
    assert config.rope_parameters["sliding_attention"]["rope_theta"] == 56.0
    assert config.sliding_window == 2
    with pytest.raises(ValueError, match="classifier_pooling"):
        small_config(classifier_pooling="max")


def test_local_layers_see_only_their_window():
    """With every layer local, a change at the last token reaches the first only through enough layers."""
    config = small_config(num_hidden_layers=1, layer_types=["sliding_attention"], local_attention=4)
    model = ModernBertModel(config).eval()
    ids = core.tensor([[5, 6, 7, 8, 9, 10]])
    changed = core.tensor([[5, 6, 7, 8, 9, 11]])
    with core.no_grad():
        a, b = model(ids).last_hidden_state, model(changed).last_hidden_state
    assert core.allclose(a[0, :3], b[0, :3])  # more than two tokens away: unaffected
    assert not core.allclose(a[0, 3:], b[0, 3:])


def test_padding_does_not_change_real_tokens_and_sdpa_matches_eager():
    """A padded row's real tokens get what the row alone gets, with either attention kernel."""
    model = ModernBertModel(small_config()).eval()
    ids = core.tensor([[1, 5, 6, 7, 2, 0, 0]])
    mask = core.tensor([[1, 1, 1, 1, 1, 0, 0]])
    with core.no_grad():
        alone = model(ids[:, :5]).last_hidden_state
        model.config._attn_implementation = "sdpa"
        sdpa = model(ids, attention_mask=mask).last_hidden_state
        model.config._attn_implementation = "eager"
        eager = model(ids, attention_mask=mask).last_hidden_state
    np.testing.assert_allclose(sdpa[:, :5].numpy(), alone.numpy(), atol=1e-5)
    np.testing.assert_allclose(eager.numpy(), sdpa.numpy(), atol=1e-5)


def test_sparse_prediction_scores_only_labelled_tokens():
    model = ModernBertForMaskedLM(small_config(sparse_prediction=True)).eval()
    ids = core.tensor([[1, 5, 6, 7, 2]])
    labels = core.tensor([[-100, 5, -100, 7, -100]])
    with core.no_grad():
        sparse = model(ids, labels=labels)
        model.sparse_prediction = False
        dense = model(ids, labels=labels)
    assert tuple(sparse.logits.shape) == (2, 40)
    np.testing.assert_allclose(sparse.logits.numpy(), dense.logits[0, [1, 3]].numpy(), atol=1e-6)
    np.testing.assert_allclose(float(sparse.loss), float(dense.loss), atol=1e-6)


def test_missing_weights_are_initialised_as_init_does(tmp_path):
    """ModernBERT's attention and MLP initialise their child projections (out-projections with
    a smaller std), and its masked-LM decoder is tied to the embeddings after initialisation:
    weights a checkpoint lacks must come out as __init__ makes them, loaded ones untouched."""
    config = small_config()
    core.manual_seed(0)
    built = ModernBertForMaskedLM(config)
    layer = built.model.layers[1].attn
    cutoff_std = config.initializer_range / np.sqrt(2.0 * config.num_hidden_layers)
    assert layer.Wo.weight.std().item() < 0.8 * layer.Wqkv.weight.std().item()  # the out-projection's smaller std
    base = ModernBertModel(config)
    base.save_pretrained(tmp_path)
    loaded = ModernBertForMaskedLM.from_pretrained(tmp_path)
    for name, value in base.state_dict().items():
        np.testing.assert_array_equal(loaded.model.state_dict()[name].numpy(), value.numpy(), err_msg=name)
    assert loaded.decoder.weight is loaded.model.embeddings.tok_embeddings.weight
    head = loaded.head.dense.weight.detach().numpy()
    assert abs(head.std() - cutoff_std) < 0.3 * cutoff_std  # the head's dense: std_out, not the Linear default
