"""Padding-free encoding: a sequence-classification head's encoder runs on the real tokens only.

The packed computation must give what the padded one gives (logits, loss, every gradient),
and must not run where padding rows could be seen (hidden states, attentions, hooks, left
padding) or where the encoder cannot lay packed tokens out (ALBERT's).
"""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck
from mindnlp.transformers import (AlbertConfig, AlbertForSequenceClassification, BertConfig,
                                  BertForSequenceClassification, BertModel, DistilBertConfig,
                                  DistilBertForMultipleChoice, DistilBertForSequenceClassification, ElectraConfig,
                                  ElectraForSequenceClassification, ModernBertConfig, ModernBertForMultipleChoice,
                                  ModernBertForSequenceClassification, RobertaConfig, RobertaForSequenceClassification)
from mindnlp.transformers import padding_free
from mindnlp.transformers.models.bert import modeling_bert

SIZES = dict(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=24,
             max_position_embeddings=40, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=3)
# Rows of lengths 7, 4, 1 and 5 (the last with a masked hole), padded to 7 at the end.
MASK = [[1] * 7, [1] * 4 + [0] * 3, [1] + [0] * 6, [1, 1, 0, 1, 1, 1, 0]]
DISTILBERT_SIZES = dict(vocab_size=50, dim=16, n_layers=2, n_heads=4, hidden_dim=24, max_position_embeddings=40,
                        dropout=0.0, attention_dropout=0.0, seq_classif_dropout=0.0, num_labels=3)
# Three layers, the middle one attending a window of two tokens either side.
MODERNBERT_SIZES = dict(vocab_size=50, hidden_size=16, intermediate_size=24, num_hidden_layers=3,
                        num_attention_heads=4, global_attn_every_n_layers=2, local_attention=4, num_labels=3,
                        bos_token_id=2, eos_token_id=3, cls_token_id=2, sep_token_id=3)
FAMILIES = {
    "bert": (BertConfig, BertForSequenceClassification, SIZES),
    "roberta": (RobertaConfig, RobertaForSequenceClassification, SIZES),
    "electra": (ElectraConfig, ElectraForSequenceClassification, SIZES),
    "distilbert": (DistilBertConfig, DistilBertForSequenceClassification, DISTILBERT_SIZES),
    "distilbert-multiple-choice": (DistilBertConfig, DistilBertForMultipleChoice, DISTILBERT_SIZES),
    "modernbert-cls": (ModernBertConfig, ModernBertForSequenceClassification, MODERNBERT_SIZES),
    "modernbert-mean": (ModernBertConfig, ModernBertForSequenceClassification,
                        dict(MODERNBERT_SIZES, classifier_pooling="mean")),
    "modernbert-multiple-choice": (ModernBertConfig, ModernBertForMultipleChoice, MODERNBERT_SIZES),
}


def make_inputs(mask=MASK, seed=0):
    generator = np.random.default_rng(seed)
    mask = core.tensor(mask)
    input_ids = core.tensor(generator.integers(3, 50, tuple(mask.shape)))
    return {"input_ids": input_ids * mask + (1 - mask), "attention_mask": mask,
            "labels": core.tensor(generator.integers(0, 3, mask.shape[0]))}


def make_model(family, **overrides):
    config_class, model_class, sizes = FAMILIES[family]
    core.manual_seed(0)
    config = config_class(**{**sizes, "pad_token_id": 1, **overrides})
    return model_class(config)


@pytest.fixture
def pack_calls(monkeypatch):
    """The shapes of the masks packed layouts were made for, so far."""
    calls = []
    original = padding_free.PackedRows.__init__

    def counting_init(self, attention_mask):
        calls.append(tuple(attention_mask.shape))
        original(self, attention_mask)

    monkeypatch.setattr(padding_free.PackedRows, "__init__", counting_init)
    return calls


def loss_and_gradients(model, inputs, **options):
    model.zero_grad()
    output = model(**inputs, **options)
    output.loss.backward()
    return output, {name: p.grad.numpy().copy() for name, p in model.named_parameters() if p.grad is not None}


def dense_run(model, inputs, monkeypatch, **options):
    """The usual padded computation of the same call."""
    with monkeypatch.context() as patch:
        patch.setattr(padding_free, "packed_rows_for", lambda mask: None)
        return loss_and_gradients(model, inputs, **options)


def test_pack_takes_the_real_rows_and_unpack_puts_them_back_among_zeros():
    mask = core.tensor(MASK)
    rows = padding_free.PackedRows(mask.bool())
    hidden = core.randn(4, 7, 3)
    packed = rows.pack(hidden)
    keep = mask.numpy().astype(bool)
    assert tuple(packed.shape) == (1, int(keep.sum()), 3)
    np.testing.assert_array_equal(packed.numpy()[0], hidden.numpy()[keep])
    np.testing.assert_array_equal(rows.unpack(packed).numpy(), hidden.numpy() * keep[..., None])


def test_pack_and_unpack_gradients_are_checked_numerically():
    rows = padding_free.PackedRows(core.tensor(MASK).bool())
    hidden = core.randn(4, 7, 3, dtype=core.float64, requires_grad=True)
    assert gradcheck(lambda x: rows.unpack(rows.pack(x) * rows.pack(x)), (hidden,))
    packed = core.randn(1, rows.tokens, 3, dtype=core.float64, requires_grad=True)
    assert gradcheck(lambda x: rows.pack(rows.unpack(x).sin()), (packed,))


@pytest.mark.parametrize("mask", [None, [[1, 1, 1], [1, 1, 1]], [[0, 1, 1], [1, 1, 1]], [[1, 2, 0], [1, 1, 0]],
                                  [[[1, 1, 0]]]], ids=["none", "no-padding", "left-padding", "not-0/1", "3d"])
def test_masks_that_packing_cannot_serve_are_declined(mask):
    assert padding_free.packed_rows_for(None if mask is None else core.tensor(mask)) is None


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_classification_equals_the_padded_computation(family, monkeypatch, pack_calls):
    model = make_model(family)
    model.train()                                  # no dropout in the sizes: train mode is deterministic
    inputs = make_inputs()
    if family.endswith("multiple-choice"):         # two questions of two choices
        inputs = {"input_ids": inputs["input_ids"].view(2, 2, 7), "attention_mask": inputs["attention_mask"].view(2, 2, 7),
                  "labels": core.tensor([1, 0])}
    expected, expected_grads = dense_run(model, inputs, monkeypatch)
    assert not pack_calls
    output, grads = loss_and_gradients(model, inputs)
    assert pack_calls == [(4, 7)]
    np.testing.assert_allclose(output.logits.detach().numpy(), expected.logits.detach().numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(output.loss.item(), expected.loss.item(), atol=1e-6, rtol=1e-6)
    assert grads.keys() == expected_grads.keys() and len(grads) > 20
    for name, grad in grads.items():
        np.testing.assert_allclose(grad, expected_grads[name], atol=1e-5, rtol=1e-4, err_msg=name)


def test_gradient_checkpointing_runs_the_packed_layers_again(monkeypatch, pack_calls):
    model = make_model("bert")
    model.gradient_checkpointing_enable()
    model.train()
    inputs = make_inputs(seed=1)
    expected, expected_grads = dense_run(model, inputs, monkeypatch)
    output, grads = loss_and_gradients(model, inputs)
    assert pack_calls
    np.testing.assert_allclose(output.logits.detach().numpy(), expected.logits.detach().numpy(), atol=1e-5, rtol=1e-5)
    for name, grad in grads.items():
        np.testing.assert_allclose(grad, expected_grads[name], atol=1e-5, rtol=1e-4, err_msg=name)


def test_base_model_asked_for_first_tokens_zeroes_the_padding_rows(pack_calls):
    model = make_model("bert").eval()
    inputs = make_inputs()
    del inputs["labels"]
    with core.no_grad():
        dense = model.bert(**inputs).last_hidden_state.numpy()
        packed = model.bert(**inputs, padding_rows_unread=True)
    assert pack_calls
    keep = inputs["attention_mask"].numpy().astype(bool)
    hidden = packed.last_hidden_state.numpy()
    np.testing.assert_allclose(hidden[keep], dense[keep], atol=1e-5, rtol=1e-5)
    assert not hidden[~keep].any()


@pytest.mark.parametrize("options", [{"output_hidden_states": True}, {"output_attentions": True}],
                         ids=["hidden-states", "attentions"])
def test_no_packing_when_the_padding_rows_are_returned(options, pack_calls):
    model = make_model("bert").eval()
    with core.no_grad():
        output = model(**make_inputs(), **options)
    assert not pack_calls
    returned = output.hidden_states if "output_hidden_states" in options else output.attentions
    assert all(t.shape[0] == 4 for t in returned)


def test_no_packing_while_a_hook_watches_a_layer(pack_calls):
    model = make_model("bert").eval()
    seen = []
    handle = model.bert.encoder.layer[1].intermediate.register_forward_hook(
        lambda module, args, output: seen.append(tuple(output.shape)))
    with core.no_grad():
        model(**make_inputs())
    assert seen == [(4, 7, 24)] and not pack_calls
    handle.remove()
    with core.no_grad():
        model(**make_inputs())
    assert pack_calls == [(4, 7)]
    handle = model.bert.encoder.layer[0].register_forward_pre_hook(lambda module, args: None)
    with core.no_grad():
        model(**make_inputs())
    assert pack_calls == [(4, 7)]                  # a hook registered after a packed call is seen too


def test_left_padding_and_other_encoders_run_padded(pack_calls):
    model = make_model("bert").eval()
    left = [[0, 0, 1, 1], [1, 1, 1, 1]]
    with core.no_grad():
        model(**make_inputs(left))
    assert not pack_calls
    core.manual_seed(0)
    albert = AlbertForSequenceClassification(AlbertConfig(**{**SIZES, "embedding_size": 8})).eval()
    with core.no_grad():
        logits = albert(**make_inputs()).logits
    assert tuple(logits.shape) == (4, 3) and not pack_calls


def test_the_packed_path_is_what_a_plain_bert_model_does_not_take():
    """BertModel called as a user calls it keeps every row (padding_rows_unread is the heads' option)."""
    model = BertModel(BertConfig(**SIZES)).eval()
    inputs = make_inputs()
    del inputs["labels"]
    with core.no_grad():
        hidden = model(**inputs).last_hidden_state.numpy()
    assert hidden[~inputs["attention_mask"].numpy().astype(bool)].any()


def test_a_captured_graph_keeps_the_padded_layout(pack_calls):
    """core.compile(fullgraph=True) captures the padded computation (the packed size is read
    from the mask's values, which a graph does not guard), and replays it for other masks."""
    model = make_model("bert").eval()
    inputs = make_inputs()
    del inputs["labels"]
    compiled = core.compile(model, fullgraph=True)
    with core.no_grad():
        captured = compiled(**inputs).logits.numpy()
        assert not pack_calls
        expected = model(**inputs).logits.numpy()
        other = dict(inputs, attention_mask=core.tensor([[1] * 7, [1] * 6 + [0], [1] * 3 + [0] * 4, [1] * 7]))
        replayed = compiled(**other).logits.numpy()
        expected_other = model(**other).logits.numpy()
    np.testing.assert_allclose(captured, expected, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(replayed, expected_other, atol=1e-5, rtol=1e-5)


def test_switched_off_the_encoder_computes_the_padded_batch(monkeypatch, pack_calls):
    monkeypatch.setattr(padding_free, "_enabled", padding_free.is_enabled())   # restored after the test
    model = make_model("bert").eval()
    padding_free.set_enabled(False)
    assert not padding_free.is_enabled()
    with core.no_grad():
        model(**make_inputs())
    assert not pack_calls
    padding_free.set_enabled(True)
    with core.no_grad():
        model(**make_inputs())
    assert pack_calls
