"""DataLoader, samplers and datasets: order, batching, workers, and Hugging Face datasets."""
import math

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset,
                                     RandomSampler, SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                                     WeightedRandomSampler, get_worker_info, random_split)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"x": np.array([i, i * i], dtype=np.float32), "i": i}


class Stream(IterableDataset):
    """0..n-1, split between workers by get_worker_info() (contiguous shards)."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        per_worker = math.ceil(self.n / info.num_workers)
        start = info.id * per_worker
        return iter(range(start, min(start + per_worker, self.n)))

    def __len__(self):
        return self.n


class Failing(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("broken sample")
        return i


def _ids(loader):
    return [batch["i"].tolist() for batch in loader]


def test_sequential_batches_and_drop_last():
    ds = Squares(7)
    assert _ids(DataLoader(ds, batch_size=3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _ids(DataLoader(ds, batch_size=3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(DataLoader(ds, batch_size=3)) == 3 and len(DataLoader(ds, batch_size=3, drop_last=True)) == 2
    batch = next(iter(DataLoader(ds, batch_size=2)))
    assert batch["x"].dtype == core.float32 and batch["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert batch["i"].dtype == core.int64


def test_no_batching_converts_samples():
    loader = DataLoader(Squares(3), batch_size=None)
    first = next(iter(loader))
    assert isinstance(first["x"], core.Tensor) and first["x"].shape == (2,) and first["i"] == 0
    assert len(loader) == 3


def test_shuffle_is_a_reproducible_permutation():
    ds = Squares(20)
    core.manual_seed(3)
    first = sum(_ids(DataLoader(ds, batch_size=4, shuffle=True)), [])
    core.manual_seed(3)
    second = sum(_ids(DataLoader(ds, batch_size=4, shuffle=True)), [])
    assert first == second and sorted(first) == list(range(20)) and first != list(range(20))
    g1, g2 = core.Generator().manual_seed(7), core.Generator().manual_seed(7)
    assert _ids(DataLoader(ds, batch_size=5, shuffle=True, generator=g1)) == \
        _ids(DataLoader(ds, batch_size=5, shuffle=True, generator=g2))
    loader = DataLoader(ds, batch_size=5, shuffle=True, generator=core.Generator().manual_seed(1))
    assert _ids(loader) != _ids(loader)  # a new permutation each epoch


def test_samplers():
    g = core.Generator().manual_seed(0)
    with_replacement = list(RandomSampler(range(5), replacement=True, num_samples=50, generator=g))
    assert len(with_replacement) == 50 and set(with_replacement) <= set(range(5))
    more = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert sorted(more[:4]) == [0, 1, 2, 3] and sorted(more[4:8]) == [0, 1, 2, 3] and len(more) == 10
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 40, generator=g))
    assert set(weighted) <= {1, 3} and len(weighted) == 40
    assert sorted(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g)) == [0, 1, 2]
    batches = BatchSampler(SequentialSampler(range(10)), 4, drop_last=False)
    assert list(batches) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(batches) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)


def test_batch_sampler_and_custom_collate():
    loader = DataLoader(Squares(6), batch_sampler=[[5, 0], [2, 3, 1]], collate_fn=lambda b: [s["i"] for s in b])
    assert list(loader) == [[5, 0], [2, 3, 1]]
    assert len(loader) == 2


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=4, drop_last=True),
                                    dict(batch_size=2, shuffle=True), dict(batch_size=None)])
def test_worker_processes_give_the_same_batches(kwargs):
    ds = Squares(11)

    def run(num_workers):
        core.manual_seed(11)
        loader = DataLoader(ds, num_workers=num_workers, **kwargs)
        return [(b["i"].tolist(), b["x"].tolist()) if kwargs.get("batch_size") else (b["i"], b["x"].tolist())
                for b in loader]

    assert run(2) == run(0)


def test_iterable_dataset_sharded_across_workers():
    single = [b.tolist() for b in DataLoader(Stream(10), batch_size=3)]
    assert single == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    multi = [b.tolist() for b in DataLoader(Stream(10), batch_size=3, num_workers=2)]
    # Workers alternate: worker 0 has 0..4, worker 1 has 5..9.
    assert multi == [[0, 1, 2], [5, 6, 7], [3, 4], [8, 9]]
    dropped = [b.tolist() for b in DataLoader(Stream(10), batch_size=3, num_workers=2, drop_last=True)]
    assert dropped == [[0, 1, 2], [5, 6, 7]]
    assert len(DataLoader(Stream(10), batch_size=3)) == 4
    unbatched = [int(x) for x in DataLoader(Stream(5), batch_size=None, num_workers=2)]
    assert sorted(unbatched) == [0, 1, 2, 3, 4]


def test_worker_info_seed_and_init_fn():
    class WhoAmI(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = get_worker_info()
            return np.array([info.id, info.num_workers, info.seed - info.id], dtype=np.int64)

    seen = []
    loader = DataLoader(WhoAmI(), batch_size=1, num_workers=2, worker_init_fn=lambda wid: None)
    for batch in loader:
        seen.append(batch[0].tolist())
    assert [s[0] for s in seen] == [0, 1, 0, 1]
    assert all(s[1] == 2 for s in seen) and len({s[2] for s in seen}) == 1
    assert get_worker_info() is None


def test_worker_exception_is_reraised_with_context():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(DataLoader(Failing(), batch_size=1, num_workers=2))
    with pytest.raises(KeyError, match="broken sample"):
        list(DataLoader(Failing(), batch_size=1))


def test_persistent_workers_serve_several_epochs():
    loader = DataLoader(Squares(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert _ids(loader) == [[0, 1], [2, 3], [4]]
    assert _ids(loader) == [[0, 1], [2, 3], [4]]
    it = iter(loader)
    next(it)  # abandon an epoch half way: the next one starts clean
    assert _ids(loader) == [[0, 1], [2, 3], [4]]
    stream = DataLoader(Stream(6), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in stream] == [b.tolist() for b in stream] == [[0, 1], [3, 4], [2], [5]]


def test_loader_argument_errors():
    ds = Squares(4)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)


def test_tensor_subset_concat_chain_datasets():
    x = core.arange(6).float().reshape(3, 2)
    y = core.tensor([0, 1, 0])
    ds = TensorDataset(x, y)
    assert len(ds) == 3 and ds[1][0].tolist() == [2.0, 3.0] and ds[1][1].item() == 1
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, core.zeros(2))
    xs, ys = next(iter(DataLoader(ds, batch_size=3)))
    assert xs.shape == (3, 2) and ys.tolist() == [0, 1, 0]
    sub = Subset(Squares(10), [9, 3])
    assert len(sub) == 2 and sub[0]["i"] == 9 and [s["i"] for s in sub.__getitems__([1, 0])] == [3, 9]
    cat = ConcatDataset([Squares(2), Squares(3)])
    assert len(cat) == 5 and [cat[i]["i"] for i in range(5)] == [0, 1, 0, 1, 2] and cat[-1]["i"] == 2
    assert len(Squares(2) + Squares(2)) == 4
    assert list(ChainDataset([Stream(2), Stream(3)])) == [0, 1, 0, 1, 2] and len(Stream(2) + Stream(3)) == 5
    with pytest.raises(TypeError, match="does not support IterableDataset"):
        ConcatDataset([Stream(2)])


def test_random_split_lengths_and_fractions():
    g = core.Generator().manual_seed(42)
    parts = random_split(range(10), [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(range(10), [3, 7], generator=core.Generator().manual_seed(42))
    assert again[0].indices == parts[0].indices
    # floor(11 * 0.3) = 3, floor(11 * 0.3) = 3, floor(11 * 0.4) = 4; the spare one goes to the first split
    assert [len(p) for p in random_split(range(11), [0.3, 0.3, 0.4], generator=g)] == [4, 3, 4]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])


def test_hugging_face_dataset_goes_straight_in():
    datasets = pytest.importorskip("datasets")
    hf = datasets.Dataset.from_dict({"input_ids": [[1, 2], [3, 4], [5, 6]], "label": [0, 1, 0],
                                     "text": ["a", "b", "c"]})
    batches = list(DataLoader(hf, batch_size=2))
    # Python lists per row are collated position by position, as torch does.
    assert [t.tolist() for t in batches[0]["input_ids"]] == [[1, 3], [2, 4]]
    assert batches[0]["label"].tolist() == [0, 1] and batches[1]["text"] == ["c"]
    hf.set_format("numpy")
    batch = next(iter(DataLoader(hf, batch_size=3, num_workers=2)))
    assert batch["input_ids"].tolist() == [[1, 2], [3, 4], [5, 6]] and batch["input_ids"].dtype == core.int64
    assert batch["label"].tolist() == [0, 1, 0] and list(batch["text"]) == ["a", "b", "c"]
