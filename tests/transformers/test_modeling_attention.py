"""The attention kernels' options against a NumPy spelling of their definitions: soft-capping
(Gemma 2) and attention sinks (gpt-oss), in eager and through sdpa, which hands both to eager."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.transformers.modeling_attention import eager_attention_forward, sdpa_attention_forward

RNG = np.random.default_rng(0)
QUERY = RNG.normal(size=(2, 4, 3, 8)).astype(np.float32)
KEY = RNG.normal(size=(2, 2, 5, 8)).astype(np.float32)  # two key/value heads serve four query heads
VALUE = RNG.normal(size=(2, 2, 5, 8)).astype(np.float32)
MASK = np.where(np.tril(np.ones((3, 5)), k=2) > 0, 0.0, -1e9).astype(np.float32)[None, None]


def reference(softcap=None, sinks=None, scaling=0.5):
    key, value = np.repeat(KEY, 2, axis=1), np.repeat(VALUE, 2, axis=1)
    scores = QUERY @ key.transpose(0, 1, 3, 2) * scaling
    if softcap is not None:
        scores = np.tanh(scores / softcap) * softcap
    scores = scores + MASK
    if sinks is not None:
        scores = np.concatenate([scores, np.broadcast_to(sinks[None, :, None, None], scores.shape[:3] + (1,))], -1)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    if sinks is not None:
        probs = probs[..., :-1]
    return (probs @ value).transpose(0, 2, 1, 3), probs


@pytest.mark.parametrize("kernel", [eager_attention_forward, sdpa_attention_forward])
@pytest.mark.parametrize("softcap, sinks", [(None, None), (1.5, None), (None, np.array([0.5, -1.0, 2.0, 0.0])),
                                            (2.0, np.array([1.0, 1.0, -3.0, 0.5]))])
def test_softcap_and_sinks_match_their_definition(kernel, softcap, sinks):
    module = nn.Module().eval()
    sink_tensor = core.tensor(sinks.astype(np.float32)) if sinks is not None else None
    output, probs = kernel(module, core.tensor(QUERY), core.tensor(KEY), core.tensor(VALUE), core.tensor(MASK),
                           scaling=0.5, softcap=softcap, sinks=sink_tensor)
    expected_output, expected_probs = reference(softcap, sinks)
    np.testing.assert_allclose(output.numpy(), expected_output, atol=1e-5)
    if probs is not None:
        np.testing.assert_allclose(probs.numpy(), expected_probs, atol=1e-6)
    if sinks is not None:  # part of every row's attention went to the sink
        assert (probs.numpy().sum(-1) < 1).all()
