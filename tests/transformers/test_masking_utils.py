"""Masks built from position_ids of packed (padding-free) batches."""
import numpy as np

from mindnlp import core
from mindnlp.transformers.masking_utils import create_causal_mask, find_packed_sequence_indices


def test_packed_sequence_indices_follow_position_restarts():
    positions = core.tensor([[0, 1, 0, 1, 2, 0]])
    assert find_packed_sequence_indices(positions).tolist() == [[0, 0, 1, 1, 1, 2]]
    assert find_packed_sequence_indices(core.arange(5)[None]) is None


def test_packed_rows_attend_only_within_their_sequence():
    embeds = core.zeros(1, 5, 4)
    mask = create_causal_mask(None, embeds, None, None, position_ids=core.tensor([[0, 1, 2, 0, 1]]))
    allowed = (mask[0, 0] == 0).numpy()
    expected = np.tril(np.ones((5, 5), bool))
    expected[3:, :3] = False
    np.testing.assert_array_equal(allowed, expected)
    # a padding mask or a cache means the positions are not a packing: plain causal
    padded = create_causal_mask(None, embeds, core.ones(1, 5), None, position_ids=core.tensor([[0, 1, 2, 0, 1]]))
    np.testing.assert_array_equal((padded[0, 0] == 0).numpy(), np.tril(np.ones((5, 5), bool)))
