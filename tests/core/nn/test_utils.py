"""nn.utils: gradient clipping against torch, parameter/vector conversion, pad_sequence."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.autograd import gradcheck
from mindnlp.core.nn.utils import (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
                                   vector_to_parameters)
from mindnlp.core.nn.utils.rnn import pad_sequence, unpad_sequence

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nn"
CLIP = json.loads((FIXTURES / "nn.json").read_text())["clip"]


def _params_with_grads():
    params = []
    for g in CLIP["grads"]:
        p = nn.Parameter(core.zeros(np.shape(g)))
        p.grad = core.tensor(g)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", ["2.0", "1.0", "inf", "3.0"])
def test_clip_grad_norm_matches_torch(norm_type):
    params = _params_with_grads()
    expected = CLIP["cases"][norm_type]
    total = clip_grad_norm_(params, CLIP["max_norm"], norm_type=float(norm_type))
    assert isinstance(total, core.Tensor) and total.dtype is core.float32 and total.ndim == 0
    assert float(total) == pytest.approx(expected["total"], rel=1e-6)
    for p, ref in zip(params, expected["clipped"]):
        np.testing.assert_allclose(p.grad.numpy(), np.asarray(ref, dtype=np.float32), rtol=1e-6, atol=1e-7)


def test_clip_grad_value_matches_torch():
    params = _params_with_grads()
    clip_grad_value_(params, 0.5)
    for p, ref in zip(params, CLIP["cases"]["value_0.5"]["clipped"]):
        np.testing.assert_array_equal(p.grad.numpy(), np.asarray(ref, dtype=np.float32))


def test_clip_grad_norm_edge_cases():
    p = nn.Parameter(core.ones(3))
    assert float(clip_grad_norm_(p, 1.0)) == 0.0  # no gradients at all
    p.grad = core.tensor([3.0, 4.0, 0.0])
    assert float(clip_grad_norm_([p], 10.0)) == pytest.approx(5.0)
    assert p.grad.tolist() == [3.0, 4.0, 0.0]  # under the limit: unchanged
    p.grad = core.tensor([math.inf, 1.0, 0.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


def test_parameters_to_vector_and_back():
    model = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (6 + 2 + 2 + 2,)
    np.testing.assert_array_equal(vec[:6].detach().numpy(), model[0].weight.detach().numpy().ravel())
    weight = model[0].weight
    vector_to_parameters(core.arange(12, dtype=core.float32), model.parameters())
    assert model[0].weight is weight and weight.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert model[1].bias.tolist() == [10.0, 11.0]
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        vector_to_parameters([1.0], model.parameters())


def test_pad_sequence_sides_and_layouts():
    seqs = [core.tensor([1.0, 2.0, 3.0]), core.tensor([4.0]), core.tensor([5.0, 6.0])]
    assert pad_sequence(seqs, batch_first=True).tolist() == [[1, 2, 3], [4, 0, 0], [5, 6, 0]]
    assert pad_sequence(seqs).tolist() == [[1, 4, 5], [2, 0, 6], [3, 0, 0]]
    assert pad_sequence(seqs, batch_first=True, padding_value=-1.0, padding_side="left").tolist() == [
        [1, 2, 3], [-1, -1, 4], [-1, 5, 6]]
    ids = pad_sequence([core.tensor([7, 8]), core.tensor([9])], batch_first=True, padding_value=0)
    assert ids.dtype is core.int64 and ids.tolist() == [[7, 8], [9, 0]]
    multi = pad_sequence([core.ones(2, 3), core.ones(1, 3)], batch_first=True)
    assert multi.shape == (2, 2, 3) and multi[1, 1].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="Expected padding_side to be one of left or right, but got up."):
        pad_sequence(seqs, padding_side="up")
    parts = unpad_sequence(pad_sequence(seqs, batch_first=True), [3, 1, 2], batch_first=True)
    assert [p.tolist() for p in parts] == [[1, 2, 3], [4], [5, 6]]


def test_pad_sequence_gradcheck():
    a = core.tensor([[0.5, -1.0], [2.0, 0.1]], dtype=core.float64, requires_grad=True)
    b = core.tensor([[1.5, 0.3]], dtype=core.float64, requires_grad=True)
    assert gradcheck(lambda a, b: pad_sequence([a, b], batch_first=True, padding_value=3.0), (a, b))
