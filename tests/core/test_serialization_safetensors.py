"""safetensors reading (memory-mapped) and writing (atomic, with metadata)."""
import json
import mmap
import os
import struct

import ml_dtypes
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import (SafetensorError, load_safetensors, safe_open, safetensors_metadata,
                                        save_safetensors)

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "serialization")
HF_FILE = os.path.join(FIXTURES, "hf.safetensors")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = {k.removeprefix("safetensors."): v for k, v in json.load(_f)["tensors"].items()
                if k.startswith("safetensors.")}
VALUES = {k.removeprefix("safetensors."): v for k, v in np.load(os.path.join(FIXTURES, "expected.npz")).items()
          if k.startswith("safetensors.")}


def bits(tensor):
    array = tensor.numpy()
    return array.view(np.uint16) if array.dtype == ml_dtypes.bfloat16 else array


def is_mapped(array):
    node = array
    while node is not None:
        if isinstance(node, mmap.mmap):
            return True
        node = node.obj if isinstance(node, memoryview) else getattr(node, "base", None)
    return False


def test_reads_file_written_by_hf_safetensors():
    tensors = load_safetensors(HF_FILE)
    assert sorted(tensors) == sorted(EXPECTED)
    for name, info in EXPECTED.items():
        assert tensors[name].dtype is getattr(core, info["dtype"]), name
        assert list(tensors[name].shape) == info["shape"], name
        np.testing.assert_array_equal(bits(tensors[name]), VALUES[name], err_msg=name)
        if tensors[name].numel():
            assert is_mapped(tensors[name]._data), name
    assert safetensors_metadata(HF_FILE) == {"format": "pt"}


def test_safe_open_interface():
    with safe_open(HF_FILE, framework="pt") as f:
        assert sorted(f.keys()) == sorted(EXPECTED)
        assert f.metadata() == {"format": "pt"}
        np.testing.assert_array_equal(bits(f.get_tensor("bf16")), VALUES["bf16"])
        with pytest.raises(SafetensorError, match="File does not contain tensor missing"):
            f.get_tensor("missing")


def test_tensors_view_the_file_and_writes_stay_private(tmp_path):
    path = tmp_path / "w.safetensors"
    save_safetensors({"a": core.tensor([1.0, 2.0, 3.0])}, path)
    loaded = load_safetensors(path)["a"]
    raw = path.read_bytes()
    at = raw.index(np.array([1.0, 2.0, 3.0], np.float32).tobytes())
    with open(path, "r+b") as f:  # the file changes under the mapping: no copy was made
        f.seek(at)
        f.write(np.array([7.0], np.float32).tobytes())
    assert loaded.tolist() == [7.0, 2.0, 3.0]
    loaded._data[1] = 50.0  # copy-on-write: the file keeps its bytes
    assert np.array([2.0], np.float32).tobytes() in path.read_bytes()


def test_round_trip_with_metadata(tmp_path):
    path = tmp_path / "model.safetensors"
    matrix = core.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    tensors = {"t": matrix.T, "bf16": core.tensor([1.5, -2.0]).to(core.bfloat16), "i8": core.tensor([1], dtype=core.int8),
               "flag": core.tensor([True]), "empty": core.zeros(0, 4), "long": core.tensor([2 ** 40])}
    save_safetensors(tensors, path, metadata={"format": "pt", "note": "é"})
    loaded = load_safetensors(path)
    for name, tensor in tensors.items():
        assert loaded[name].dtype is tensor.dtype
        assert loaded[name].shape == tensor.shape
        np.testing.assert_array_equal(bits(loaded[name]), bits(tensor))
    assert safetensors_metadata(path) == {"format": "pt", "note": "é"}
    (header_length,) = struct.unpack("<Q", path.read_bytes()[:8])
    assert header_length % 8 == 0
    header = json.loads(path.read_bytes()[8:8 + header_length])
    for name, info in header.items():
        if name != "__metadata__":
            itemsize = np.dtype(tensors[name].dtype.np_dtype).itemsize
            assert info["data_offsets"][0] % itemsize == 0, name


def test_shared_tensors_are_refused_like_hf(tmp_path):
    weight = core.ones(4, 2)
    path = tmp_path / "tied.safetensors"
    with pytest.raises(RuntimeError, match=r"share memory.*\['embed', 'lm_head'\]"):
        save_safetensors({"embed": weight, "lm_head": weight, "other": core.zeros(2)}, path)
    with pytest.raises(RuntimeError, match=r"share memory.*\['half', 'whole'\]"):
        save_safetensors({"whole": weight, "half": weight[1:3]}, path)
    assert not path.exists()
    # Disjoint views of one buffer are fine, as in safetensors.
    save_safetensors({"top": weight[:2], "bottom": weight[2:]}, path)
    assert load_safetensors(path)["bottom"].shape == (2, 2)


def test_bad_arguments_are_clear_errors(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(ValueError, match="Key `a` is invalid, expected a Tensor"):
        save_safetensors({"a": np.zeros(2)}, path)
    with pytest.raises(ValueError, match="metadata must be a dict mapping strings to strings"):
        save_safetensors({"a": core.zeros(2)}, path, metadata={"step": 1})
    assert not path.exists()


def test_missing_truncated_and_corrupt_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_safetensors(tmp_path / "missing.safetensors")
    raw = open(HF_FILE, "rb").read()
    path = tmp_path / "bad.safetensors"
    cases = [
        (raw[:5], "shorter than its 8-byte header"),
        (raw[:40], "truncated or not a safetensors file"),
        (raw[:-3], "truncated or corrupt"),
        (raw + b"xx", "truncated or corrupt"),
        (struct.pack("<Q", 4) + b"{{{{", "invalid safetensors header"),
    ]
    header = json.dumps({"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}).encode()
    cases.append((struct.pack("<Q", len(header)) + header + bytes(8), "dtype C64, which mindnlp.core does not"))
    header = json.dumps({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}).encode()
    cases.append((struct.pack("<Q", len(header)) + header + bytes(8), "does not match its 8 bytes"))
    header = json.dumps({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    cases.append((struct.pack("<Q", len(header)) + header + bytes(8), "starts at byte 0, expected 4"))
    for data, message in cases:
        path.write_bytes(data)
        with pytest.raises((ValueError, TypeError), match=message):
            load_safetensors(path)


def test_failed_save_leaves_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "model.safetensors"
    save_safetensors({"a": core.ones(2)}, path)
    before = path.read_bytes()

    class Broken(core.Tensor):
        def _host(self):
            raise OSError("device lost")

    broken = core.zeros(3)
    broken.__class__ = Broken
    with pytest.raises(OSError, match="device lost"):
        save_safetensors({"a": core.ones(2), "b": broken}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.safetensors"]
