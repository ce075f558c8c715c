"""core.save / core.load against checkpoints torch.save wrote (tests/fixtures/serialization)."""
import io
import json
import mmap
import os
import zipfile
from collections import OrderedDict

import ml_dtypes
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import _torch_save, load_torch_file

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "serialization")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
VALUES = dict(np.load(os.path.join(FIXTURES, "expected.npz")))
TORCH_FILES = ["state_zip.pt", "state_legacy.pt", "state_big_endian.pt"]


def flatten(obj, prefix=""):
    if isinstance(obj, core.Tensor):
        yield prefix, obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from flatten(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            yield from flatten(value, f"{prefix}.{i}")


def bits(tensor):
    array = tensor.detach().numpy()
    return array.view(np.uint16) if array.dtype == ml_dtypes.bfloat16 else array


def storage_start(tensor, storage_offset):
    """Address of element 0 of the storage a tensor views (its data pointer minus its offset)."""
    return tensor.data_ptr() - storage_offset * tensor.element_size()


def check_against_torch(loaded):
    """Every tensor torch saved comes back with torch's values, dtype, shape, strides and sharing."""
    expected = {k: v for k, v in EXPECTED["tensors"].items() if not k.startswith("safetensors.")}
    tensors = dict(flatten(loaded))
    assert sorted(tensors) == sorted(expected)
    starts = {}
    for path, info in expected.items():
        tensor = tensors[path]
        assert tensor.dtype is getattr(core, info["dtype"]), path
        assert list(tensor.shape) == info["shape"], path
        np.testing.assert_array_equal(bits(tensor), VALUES[path], err_msg=path)
        if tensor.numel():
            assert list(tensor.stride()) == info["stride"], path
            start = storage_start(tensor, info["storage_offset"])
            assert starts.setdefault(info["storage_group"], start) == start, f"{path} should share its storage"
        assert tensor.requires_grad == info["requires_grad"], path
    assert len(set(starts.values())) == len(starts), "tensors from different storages must not share memory"


@pytest.mark.parametrize("name", TORCH_FILES)
def test_loads_torch_checkpoint(name):
    loaded = core.load(os.path.join(FIXTURES, name))
    check_against_torch(loaded)
    assert type(loaded["linear"]) is OrderedDict
    assert loaded["linear"]._metadata == OrderedDict([("", {"version": 1})])
    assert loaded["nested"]["tuple"] == (1.5, None, True, -7, 2 ** 40)
    assert loaded["nested"]["list"][1:] == [3, "text"]
    assert loaded["size"] == core.Size([2, 3]) and type(loaded["size"]) is core.Size
    assert loaded["dtype"] is core.float16


def test_views_share_memory_after_loading():
    loaded = core.load(os.path.join(FIXTURES, "state_zip.pt"))
    assert np.shares_memory(loaded["f32"]._data, loaded["f32_transposed"]._data)
    assert np.shares_memory(loaded["shared_slice"]._data, loaded["shared_row"]._data)
    loaded["shared_slice"]._data[3] = 100.0  # base[5], which shared_row starts at
    assert loaded["shared_row"][0].item() == 100.0
    assert not np.shares_memory(loaded["f32"]._data, loaded["f64"]._data)


def test_load_from_file_object():
    with open(os.path.join(FIXTURES, "state_zip.pt"), "rb") as f:
        check_against_torch(core.load(io.BytesIO(f.read())))
    with open(os.path.join(FIXTURES, "state_legacy.pt"), "rb") as f:
        check_against_torch(core.load(f))


def mapped_buffer(array):
    node = array
    while node is not None:
        if isinstance(node, mmap.mmap):
            return node
        node = node.obj if isinstance(node, memoryview) else getattr(node, "base", None)
    return None


def test_mmap_load_views_the_file_without_copying(tmp_path):
    path = tmp_path / "state.pt"
    path.write_bytes((open(os.path.join(FIXTURES, "state_zip.pt"), "rb").read()))
    loaded = core.load(path, mmap=True)
    check_against_torch(loaded)
    assert mapped_buffer(loaded["f32"]._data) is not None
    assert mapped_buffer(loaded["f32_transposed"]._data) is mapped_buffer(loaded["f32"]._data)
    # The storage of 'i16' is [-300, 300]; writing new bytes into the file shows through the
    # tensor, which is only possible if nothing was copied out of the mapping.
    raw = path.read_bytes()
    old = np.array([-300, 300], np.int16).tobytes()
    assert raw.count(old) == 1
    with open(path, "r+b") as f:
        f.seek(raw.index(old))
        f.write(np.array([7, 8], np.int16).tobytes())
    assert loaded["i16"].tolist() == [7, 8]
    # Writes to the tensor stay private to the process (copy-on-write).
    loaded["u8"]._data[0] = 9
    assert np.array([0, 255], np.uint8).tobytes() in path.read_bytes()


def test_mmap_refuses_legacy_and_file_objects():
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        core.load(os.path.join(FIXTURES, "state_legacy.pt"), mmap=True)
    with pytest.raises(ValueError, match="must be a file path"):
        core.load(io.BytesIO(b""), mmap=True)


def test_load_torch_file_is_memory_mapped_for_zip():
    state = load_torch_file(os.path.join(FIXTURES, "state_zip.pt"))
    assert mapped_buffer(state["bf16"]._data) is not None
    np.testing.assert_array_equal(bits(state["bf16"]), VALUES["bf16"])
    legacy = load_torch_file(os.path.join(FIXTURES, "state_legacy.pt"))
    np.testing.assert_array_equal(bits(legacy["bf16"]), VALUES["bf16"])


def test_map_location_forms():
    path = os.path.join(FIXTURES, "state_zip.pt")
    seen = []

    def to_cpu(storage, location):
        seen.append(location)
        return storage

    for map_location in ("cpu", core.device("cpu"), {"cpu": "cpu"}, to_cpu, lambda storage, location: None):
        loaded = core.load(path, map_location=map_location)
        assert loaded["f32"].device == core.device("cpu")
        np.testing.assert_array_equal(bits(loaded["f32"]), VALUES["f32"])
    assert seen and set(seen) == {"cpu"}


@pytest.mark.skipif(core.backends.cuda_available(), reason="checks the error raised on a machine without CUDA")
def test_map_location_to_missing_cuda_is_a_clear_error():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        core.load(os.path.join(FIXTURES, "state_zip.pt"), map_location="cuda")


def test_round_trip_keeps_values_views_and_containers(tmp_path):
    base = core.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    state = OrderedDict(
        base=base, transposed=base.T, row=base[1], bf16=core.tensor([1.5, -2.25]).to(core.bfloat16),
        flag=core.tensor([True, False]), big=core.tensor([2 ** 40, -1]), empty=core.zeros(0, 2),
        nested={"list": [base, 1, 2 ** 70, -(2 ** 33), "é"], "tuple": (None, False, 0.1)},
    )
    state._metadata = {"": {"version": 1}}
    for target in (tmp_path / "state.pt", io.BytesIO()):
        core.save(state, target)
        if isinstance(target, io.BytesIO):
            target.seek(0)
        loaded = core.load(target)
        assert type(loaded) is OrderedDict and loaded._metadata == {"": {"version": 1}}
        for key in ("base", "transposed", "row", "flag", "big", "empty"):
            np.testing.assert_array_equal(loaded[key].numpy(), state[key].numpy())
            assert loaded[key].dtype is state[key].dtype
        np.testing.assert_array_equal(bits(loaded["bf16"]), bits(state["bf16"]))
        assert loaded["transposed"].stride() == (1, 4)
        assert np.shares_memory(loaded["base"]._data, loaded["transposed"]._data)
        assert np.shares_memory(loaded["base"]._data, loaded["row"]._data)
        assert loaded["nested"]["list"][0] is loaded["base"]
        assert loaded["nested"]["list"][1:] == [1, 2 ** 70, -(2 ** 33), "é"]
        assert loaded["nested"]["tuple"] == (None, False, 0.1)


def test_saved_file_is_torch_zip_layout_with_aligned_storages(tmp_path):
    path = tmp_path / "state.pt"
    core.save({"a": core.ones(3), "b": core.zeros(5, dtype=core.int64)}, path)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert {"archive/data.pkl", "archive/byteorder", "archive/version", "archive/data/0",
                "archive/data/1"} <= set(names)
        raw = path.read_bytes()
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if info.filename.startswith("archive/data/"):
                start = info.header_offset + 30 + len(info.filename) + int.from_bytes(
                    raw[info.header_offset + 28:info.header_offset + 30], "little")
                assert start % 64 == 0
                assert raw[start:start + info.file_size] == archive.read(info.filename)


def test_torch_loaded_what_mindnlp_saved():
    """Recorded by the fixture script: torch.load(weights_only=True), also with mmap=True and
    from a buffer, read mindnlp's files with torch's values, strides and sharing."""
    with open(os.path.join(FIXTURES, "torch_reads_mindnlp.json")) as f:
        report = json.load(f)
    for mode in ("torch_load", "torch_load_mmap", "torch_load_buffer"):
        assert report[mode] and all(report[mode].values()), mode
    assert report["non_tensor_values"]
    assert all(report["safetensors_load_file"].values())
    assert report["safetensors_metadata"] == {"format": "pt"}
    assert EXPECTED["big_endian_read_by_torch"]


def test_parameter_loads_with_requires_grad():
    loaded = core.load(os.path.join(FIXTURES, "state_zip.pt"))
    assert loaded["param"].requires_grad and loaded["param"].is_leaf
    assert not loaded["f32"].requires_grad


# --- atomic writes ---
class Unsaveable:
    def __reduce__(self):
        raise RuntimeError("this object cannot be pickled")


def leftovers(directory, keep):
    return sorted(set(os.listdir(directory)) - set(keep))


def test_unsupported_object_fails_before_touching_the_target(tmp_path):
    path = tmp_path / "model.pt"
    core.save({"w": core.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="cannot write an object of type .*Unsaveable"):
        core.save({"w": core.zeros(2), "bad": [Unsaveable()]}, path)
    assert path.read_bytes() == before
    assert leftovers(tmp_path, ["model.pt"]) == []


@pytest.mark.parametrize("existing", [True, False])
def test_failure_midway_through_writing_leaves_no_partial_file(tmp_path, monkeypatch, existing):
    path = tmp_path / "model.pt"
    if existing:
        core.save({"w": core.ones(2)}, path)
    before = path.read_bytes() if existing else None
    real_write_record = _torch_save._write_record
    written = []

    def failing_write_record(archive, record, data):
        if record.endswith("data/1"):
            raise OSError("disk full")
        written.append(record)
        real_write_record(archive, record, data)

    monkeypatch.setattr(_torch_save, "_write_record", failing_write_record)
    with pytest.raises(OSError, match="disk full"):
        core.save({"a": core.ones(1000), "b": core.ones(1000)}, path)
    assert "archive/data/0" in written  # the failure really happened midway
    if existing:
        assert path.read_bytes() == before
        assert core.load(path)["w"].tolist() == [1.0, 1.0]
    else:
        assert not path.exists()
    assert leftovers(tmp_path, ["model.pt"] if existing else []) == []


def test_save_into_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="Parent directory .*missing does not exist"):
        core.save({}, tmp_path / "missing" / "model.pt")


# --- bad files ---
def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no_such_file.pt"):
        core.load("/nonexistent/no_such_file.pt")


@pytest.mark.parametrize("name", TORCH_FILES)
def test_truncated_checkpoint_is_a_clear_error(tmp_path, name):
    raw = open(os.path.join(FIXTURES, name), "rb").read()
    for keep in (len(raw) // 2, len(raw) - 10):
        path = tmp_path / "cut.pt"
        path.write_bytes(raw[:keep])
        with pytest.raises((RuntimeError, core.serialization.UnpicklingError), match="truncated|corrupt"):
            core.load(path)


def test_corrupt_or_foreign_files_are_clear_errors(tmp_path):
    path = tmp_path / "bad.pt"
    path.write_bytes(b"")
    with pytest.raises(RuntimeError, match="is empty"):
        core.load(path)
    path.write_bytes(b"hello world, not a checkpoint")
    with pytest.raises(RuntimeError, match="neither a PyTorch zip checkpoint nor a legacy"):
        core.load(path)
    # Flip bytes inside a storage: the zip CRC catches it.
    raw = bytearray(open(os.path.join(FIXTURES, "state_zip.pt"), "rb").read())
    at = raw.index(np.array([-300, 300], np.int16).tobytes())
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(Exception, match="CRC|Bad"):
        core.load(path)


def test_legacy_layout_on_request(tmp_path):
    """torch.save(..., _use_new_zipfile_serialization=False) writes the pre-1.6 layout (read back
    by core.load and by torch 2.13, views still sharing their storage)."""
    state = {"a": core.arange(6.0).reshape(2, 3), "b": core.tensor([1, 2]),
             "h": core.tensor([1.5], dtype=core.bfloat16)}
    state["row"] = state["a"][1]
    path = tmp_path / "legacy.bin"
    core.save(state, path, _use_new_zipfile_serialization=False)
    assert path.read_bytes()[:2] == b"\x80\x02"          # a pickle stream, not a zip archive
    loaded = core.load(path)
    for name, tensor in state.items():
        assert loaded[name].dtype is tensor.dtype and loaded[name].tolist() == tensor.tolist()
    loaded["row"][0] = 100.0
    assert loaded["a"][1, 0].item() == 100.0


def test_byteorder_record_can_be_left_out(tmp_path):
    import zipfile

    path = tmp_path / "model.bin"
    core.save({"w": core.ones(2)}, path, _disable_byteorder_record=True)
    assert not any(name.endswith("/byteorder") for name in zipfile.ZipFile(path).namelist())
    assert core.load(path)["w"].tolist() == [1.0, 1.0]
