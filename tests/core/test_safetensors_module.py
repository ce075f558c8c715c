"""mindnlp.safetensors: the safetensors.torch functions on mindnlp.core tensors."""
import os
import struct

import numpy as np
import pytest

from mindnlp import core, safetensors
from mindnlp.safetensors import SafetensorError, load, load_file, load_model, safe_open, save, save_file, save_model

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "serialization")
HF_FILE = os.path.join(FIXTURES, "hf.safetensors")


def sample():
    return {"a": core.arange(12.0).reshape(3, 4), "b": core.tensor([1, 2]),
            "h": core.tensor([0.5, -1.0], dtype=core.bfloat16)}


def test_file_round_trip_with_metadata(tmp_path):
    path = tmp_path / "x.safetensors"
    save_file(sample(), path, metadata={"k": "v"})
    loaded = load_file(path)
    assert sorted(loaded) == ["a", "b", "h"]
    for name, tensor in sample().items():
        assert loaded[name].dtype is tensor.dtype and loaded[name].tolist() == tensor.tolist()
    with safe_open(path, framework="pt") as f:
        assert f.metadata() == {"k": "v"}
        assert f.keys() == ["a", "b", "h"]
        assert f.offset_keys() == ["b", "a", "h"]       # laid out by decreasing element size
        assert sorted(f.get_tensors()) == ["a", "b", "h"]


def test_bytes_round_trip_matches_the_file(tmp_path):
    data = save(sample(), metadata={"format": "pt"})
    assert isinstance(data, bytes)
    path = tmp_path / "x.safetensors"
    save_file(sample(), path, metadata={"format": "pt"})
    assert path.read_bytes() == data
    (header_length,) = struct.unpack("<Q", data[:8])
    assert header_length % 8 == 0
    loaded = load(data)
    assert loaded["a"].tolist() == sample()["a"].tolist()
    loaded["a"][0, 0] = 100.0                            # the tensors own a writable copy
    assert loaded["a"][0, 0].item() == 100.0


def test_reads_the_file_hf_safetensors_wrote():
    tensors = load_file(HF_FILE)
    with open(HF_FILE, "rb") as f:
        from_bytes = load(f.read())
    assert sorted(tensors) == sorted(from_bytes)
    for name in tensors:
        np.testing.assert_array_equal(tensors[name].numpy(), from_bytes[name].numpy())


def test_get_slice_reads_part_of_a_tensor(tmp_path):
    path = tmp_path / "x.safetensors"
    save_file(sample(), path)
    with safe_open(path, "pt") as f:
        part = f.get_slice("a")
        assert part.get_shape() == [3, 4] and part.get_dtype() == "F32"
        assert part[1:, ::2].tolist() == [[4.0, 6.0], [8.0, 10.0]]
        assert part[1].tolist() == [4.0, 5.0, 6.0, 7.0]
        assert part[..., 1].tolist() == [1.0, 5.0, 9.0]
        assert part[0, 0].item() == 0.0
        assert f.get_slice("h").get_dtype() == "BF16"
        with pytest.raises(TypeError, match="integers, slices and Ellipsis"):
            part[[0, 1]]


def test_missing_names_and_closed_files(tmp_path):
    path = tmp_path / "x.safetensors"
    save_file(sample(), path)
    with safe_open(path, "pt") as f:
        with pytest.raises(SafetensorError, match="File does not contain tensor zz"):
            f.get_tensor("zz")
    with pytest.raises(SafetensorError, match="File is closed"):
        f.get_tensor("a")
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "missing.safetensors")
    with pytest.raises(ValueError, match="framework 'flax' is not supported"):
        safe_open(path, framework="flax")


def test_shared_memory_is_refused_as_safetensors_torch_does(tmp_path):
    x = core.ones(4)
    path = tmp_path / "x.safetensors"
    for tensors in ({"x": x, "y": x}, {"x": x, "y": x[:2]}):
        with pytest.raises(RuntimeError, match=r"Some tensors share memory, this will lead to duplicate memory on "
                                               r"disk.*\['x', 'y'\]"):
            save_file(tensors, path)
        with pytest.raises(RuntimeError, match="Some tensors share memory"):
            save(tensors)
    assert not path.exists()
    save_file({"x": x[:2], "y": x[2:]}, path)                # disjoint views of one buffer are fine
    assert load_file(path)["y"].tolist() == [1.0, 1.0]


def test_non_contiguous_and_invalid_inputs_are_refused(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(ValueError, match="You are trying to save a non contiguous tensor: `x`"):
        save_file({"x": core.ones(3, 4).t()}, path)
    with pytest.raises(ValueError, match="Key `x` is invalid"):
        save_file({"x": 1}, path)
    with pytest.raises(ValueError, match="metadata must be a dict mapping strings to strings"):
        save({"x": core.ones(2)}, metadata={"a": 1})
    assert not path.exists()


def test_writes_are_atomic(tmp_path, monkeypatch):
    path = tmp_path / "x.safetensors"
    save_file({"x": core.ones(2)}, path)
    before = path.read_bytes()

    def broken(self):
        raise OSError("disk full")

    monkeypatch.setattr(core.Tensor, "_host", broken)
    with pytest.raises(OSError, match="disk full"):
        save_file({"x": core.zeros(3)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["x.safetensors"]


class Tied(core.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = core.nn.Embedding(5, 3)
        self.head = core.nn.Linear(3, 5, bias=False)
        self.head.weight = self.embed.weight


def test_save_model_drops_tied_names_and_load_model_restores_them(tmp_path):
    core.manual_seed(0)
    model = Tied()
    path = tmp_path / "m.safetensors"
    with pytest.raises(RuntimeError, match="share memory"):
        save_file(model.state_dict(), path)
    save_model(model, path)
    with safe_open(path, "pt") as f:
        assert f.keys() == ["embed.weight"]
        assert f.metadata() == {"head.weight": "embed.weight"}
    fresh = Tied()
    assert load_model(fresh, path) == (set(), [])
    assert fresh.head.weight.tolist() == model.embed.weight.tolist()
    assert fresh.head.weight is fresh.embed.weight


def test_load_model_reports_missing_and_unexpected(tmp_path):
    path = tmp_path / "m.safetensors"
    save_file({"other": core.ones(2)}, path)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "embed.weight"'):
        load_model(Tied(), path)
    missing, unexpected = load_model(Tied(), path, strict=False)
    assert missing == {"embed.weight"} and unexpected == ["other"]


def test_module_exports_the_safetensors_torch_names():
    for name in ("load_file", "save_file", "load", "save", "safe_open", "save_model", "load_model"):
        assert callable(getattr(safetensors, name))
