"""Views and movement ops against torch's values (fixtures), plus view semantics."""
import pytest

from mindnlp import core
from tests.core.torch_fixtures import check_op_case, op_case_names


@pytest.mark.parametrize("name", op_case_names("shape"))
def test_matches_torch(name):
    check_op_case(name)


def test_views_share_memory_and_copies_do_not():
    x = core.arange(12.0)
    views = [x.view(3, 4), x.reshape(2, 6), x.view(3, 4).t(), x.view(3, 4).permute(1, 0), x.unsqueeze(0),
             x.view(1, 12).squeeze(0), x.view(3, 4)[1], x.narrow(0, 4, 3), x.view(3, 4).transpose(0, 1),
             x.view(3, 4).split(2, 1)[0], x.view(1, 12).expand(2, 12), x.view(3, 4).unbind(0)[1]]
    x[5] = 100.0
    for v in views:
        assert 100.0 in v.numpy(), v
    copies = [x.flip(0), x.roll(1), x.repeat(2), x.view(3, 4).diagonal(), core.cat([x, x])]
    x[6] = -1.0
    for c in copies:
        assert -1.0 not in c.numpy()


def test_view_needs_compatible_strides():
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        core.ones(2, 3).t().view(6)
    assert core.ones(2, 3).t().reshape(6).shape == (6,)
    assert core.ones(2, 3).t().contiguous().view(6).shape == (6,)


def test_size_arguments_forms():
    x = core.arange(6)
    assert x.view((2, 3)).shape == x.view(2, 3).shape == x.reshape([2, 3]).shape == (2, 3)
    assert x.view(2, 3).permute((1, 0)).shape == (3, 2)
    assert x.view(1, 6).expand((4, 6)).shape == (4, 6)
    assert x.view(2, 3).flip(0).tolist() == [[3, 4, 5], [0, 1, 2]]
    assert x.view(2, 3).flip((0, 1)).tolist() == [[5, 4, 3], [2, 1, 0]]


def test_shape_is_a_tuple_like_size():
    s = core.ones(2, 3, 4).shape
    assert s == (2, 3, 4) and isinstance(s, tuple)
    assert s.numel() == 24 and repr(s) == "core.Size([2, 3, 4])"


def test_iteration_and_len():
    x = core.arange(6).view(3, 2)
    rows = list(x)
    assert len(x) == 3 and [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError):
        len(core.tensor(1.0))
