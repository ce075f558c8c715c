"""matmul/bmm/baddbmm/einsum/outer/tril/triu against torch's values (fixtures)."""
import pytest

from mindnlp import core
from tests.core.torch_fixtures import check_op_case, op_case_names


@pytest.mark.parametrize("name", op_case_names("linalg"))
def test_matches_torch(name):
    check_op_case(name, rtol=1e-5, atol=1e-5)


def test_matmul_shapes():
    assert core.matmul(core.ones(4), core.ones(4)).shape == ()
    assert core.matmul(core.ones(4), core.ones(2, 4, 5)).shape == (2, 5)
    assert core.matmul(core.ones(3, 1, 2, 4), core.ones(5, 4, 6)).shape == (3, 5, 2, 6)


def test_half_matmul_stays_half():
    a = core.ones(2, 3, dtype=core.float16)
    out = a @ core.ones(3, 2, dtype=core.float16)
    assert out.dtype is core.float16 and out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_einsum_rejects_mismatched_ranks():
    with pytest.raises(Exception):
        core.einsum("ij,jk->ik", core.ones(2, 3), core.ones(4, 5))


def test_tril_needs_two_dims():
    with pytest.raises(RuntimeError, match="tril"):
        core.tril(core.ones(3))
