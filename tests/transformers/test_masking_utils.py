"""Masks built from position_ids of packed (padding-free) batches, and the decoding step that needs none."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers.cache_utils import DynamicCache, StaticCache
from mindnlp.transformers.masking_utils import create_causal_mask, find_packed_sequence_indices
from mindnlp.transformers import LlamaConfig


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


def test_a_decoding_step_without_padding_needs_no_mask():
    """One new token after every key of a growing cache sees them all: no mask (None). Padding,
    a static cache's unwritten positions or several new tokens still need one."""
    cache = DynamicCache()
    cache.update(core.zeros(1, 2, 3, 4), core.zeros(1, 2, 3, 4), 0)
    step = core.zeros(1, 1, 8)
    assert create_causal_mask(None, step, None, cache) is None
    padded = create_causal_mask(None, step, core.tensor([[0, 1, 1, 1]]), cache)
    assert (padded[0, 0, 0] == 0).tolist() == [False, True, True, True]
    two = create_causal_mask(None, core.zeros(1, 2, 8), None, cache)
    assert (two[0, 0] == 0).tolist() == [[True, True, True, True, False], [True] * 5]
    static = StaticCache(config=LlamaConfig(num_hidden_layers=1), max_cache_len=6)
    static.update(core.zeros(1, 2, 3, 4), core.zeros(1, 2, 3, 4), 0)
    hidden = create_causal_mask(None, step, None, static, cache_position=core.tensor([3]))
    assert (hidden[0, 0, 0] == 0).tolist() == [True] * 4 + [False] * 2


def test_a_padding_mask_longer_than_the_keys_is_read_for_its_first_columns():
    """As transformers indexes it: without a cache the keys are the queries, and a longer 2-D
    mask's first columns apply; a shorter one names the mismatch."""
    embeds = core.zeros(1, 3, 4)
    mask = create_causal_mask(None, embeds, core.tensor([[0, 1, 1, 1, 1]]), None)
    assert tuple(mask.shape) == (1, 1, 3, 3)
    assert (mask[0, 0] == 0).tolist() == [[False, False, False], [False, True, False], [False, True, True]]
    with pytest.raises(ValueError, match="attention_mask has length 2 but the keys have length 3"):
        create_causal_mask(None, embeds, core.tensor([[1, 1]]), None)
