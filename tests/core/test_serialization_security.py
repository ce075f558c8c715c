"""A checkpoint must never run code: crafted pickles are refused before any side effect."""
import io
import os
import pickle
import struct
import subprocess
import zipfile

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import UnpicklingError

LEGACY_HEADER = (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1001, protocol=2)
                 + pickle.dumps({"protocol_version": 1001, "little_endian": True}, protocol=2))


def in_zip(pickled):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/version", "3\n")
    return buffer.getvalue()


def in_legacy(pickled):
    return LEGACY_HEADER + pickled + pickle.dumps([], protocol=2)


def global_call(module, name, argument):
    """A protocol-2 pickle calling module.name(argument), written opcode by opcode."""
    encoded = argument.encode()
    return (b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"X" + struct.pack("<I", len(encoded)) + encoded
            + b"\x85R.")


class SystemCall:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


class EvalCall:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return eval, (self.code,)


class PopenCall:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return subprocess.Popen, (self.command,)


def payloads(marker):
    """(description, pickle bytes, global named in the error) that would create `marker` if run."""
    command = f"touch {marker}"
    code = f"open({str(marker)!r}, 'w').close()"
    return [
        ("GLOBAL os.system", global_call("os", "system", command), "os.system"),
        ("GLOBAL builtins.eval", global_call("builtins", "eval", code), "builtins.eval"),
        ("GLOBAL __builtin__.exec", global_call("__builtin__", "exec", code), "__builtin__.exec"),
        ("__reduce__ os.system, protocol 2", pickle.dumps(SystemCall(command), protocol=2), "posix.system"),
        ("__reduce__ os.system, protocol 5", pickle.dumps(SystemCall(command), protocol=5), "posix.system"),
        ("__reduce__ eval", pickle.dumps(EvalCall(code), protocol=2), r"__builtin__\.eval"),
        ("__reduce__ subprocess.Popen", pickle.dumps(PopenCall(["touch", str(marker)]), protocol=4),
         "subprocess.Popen"),
        ("os.system inside a state dict", pickle.dumps({"w": [1, SystemCall(command)]}, protocol=2), "posix.system"),
    ]


@pytest.mark.skipif(os.name != "posix", reason="the payloads use posix commands")
@pytest.mark.parametrize("container", [in_zip, in_legacy], ids=["zip", "legacy"])
def test_code_execution_payloads_are_refused(tmp_path, container):
    marker = tmp_path / "pwned"
    for description, pickled, global_name in payloads(marker):
        path = tmp_path / "evil.pt"
        path.write_bytes(container(pickled))
        with pytest.raises(UnpicklingError, match=f"refusing to load global {global_name}"):
            core.load(path)
        assert not marker.exists(), description
        # The same payload really does run under plain pickle: the test would catch a leak.
    pickle.loads(payloads(marker)[0][1])
    assert marker.exists()


def test_payload_in_the_legacy_magic_number_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    path.write_bytes(global_call("os", "system", f"touch {marker}"))
    with pytest.raises(UnpicklingError, match="refusing to load global os.system"):
        core.load(path)
    assert not marker.exists()


def opcodes(*parts):
    return b"\x80\x02" + b"".join(parts) + b"."


def text(value):
    encoded = value.encode()
    return b"X" + struct.pack("<I", len(encoded)) + encoded


@pytest.mark.parametrize("pickled, message", [
    # Calling an allowed value that is not a constructor (a dtype, a string).
    (opcodes(b"ctorch\nfloat32\n", b")R"), "not an allowed constructor"),
    (opcodes(text("os.system"), b")R"), "not an allowed constructor"),
    # Objects built without REDUCE: INST, OBJ, NEWOBJ, and the extension registry.
    (b"(i__builtin__\nlist\n.", "INST is not allowed"),
    (opcodes(b"ccollections\nOrderedDict\n", b")\x81"), "NEWOBJ is not allowed"),
    (opcodes(b"\x82\x01"), "EXT1 is not allowed"),
    # BUILD may only set an OrderedDict's attributes, never a tensor's, a list's or a global's.
    (opcodes(b"]", b"}", text("append"), b"Ns", b"b"), "only an OrderedDict's attributes"),
    (opcodes(b"ctorch\nfloat32\n", b"N}", text("np_dtype"), text("x"), b"s\x86b"), "only an OrderedDict's"),
    (opcodes(b"ccollections\nOrderedDict\n", b")R", b"N}", text("x"), b"K\x01s\x86b"), "must be a dict"),
    # A tensor over something that is not a checkpoint storage.
    (opcodes(b"ctorch._utils\n_rebuild_tensor\n", b"(]K\x00K\x01\x85K\x01\x85tR"), "must come from the checkpoint"),
    # Persistent ids that are not storages.
    (opcodes(text("module"), b"\x85Q"), "malformed persistent id|whole nn.Module"),
    (opcodes(b"(", text("evil"), b"ctorch\nFloatStorage\n", text("0"), text("cpu"), b"K\x01tQ"),
     "only storages may be persistent ids"),
    # Malformed streams.
    (opcodes(b"R"), "stack is empty"),
    (opcodes(b"h\x05"), "memo entry 5 is missing"),
    (b"\x80\x02X\xff\xff\xff\x00abc", "truncated"),
    (opcodes(b"ctorch\ncomplex64\n"), "torch.complex64, which mindnlp.core does not support"),
])
def test_crafted_pickles_are_refused(tmp_path, pickled, message):
    path = tmp_path / "evil.pt"
    path.write_bytes(in_zip(pickled))
    with pytest.raises(UnpicklingError, match=message):
        core.load(path)


def storage_pid(key, numel, storage="FloatStorage"):
    return b"(" + text("storage") + f"ctorch\n{storage}\n".encode() + text(key) + text("cpu") + \
        b"J" + struct.pack("<i", numel) + b"tQ"


def rebuild_v2(pid, offset, size, stride):
    ints = b"".join(b"J" + struct.pack("<i", v) for v in (offset,))
    size_tuple = b"(" + b"".join(b"J" + struct.pack("<i", v) for v in size) + b"t"
    stride_tuple = b"(" + b"".join(b"J" + struct.pack("<i", v) for v in stride) + b"t"
    return (b"ctorch._utils\n_rebuild_tensor_v2\n(" + pid + ints + size_tuple + stride_tuple
            + b"\x89ccollections\nOrderedDict\n)RtR")


def zip_with_storage(pickled, nbytes):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/data/0", np.arange(nbytes // 4, dtype=np.float32).tobytes())
    return buffer.getvalue()


@pytest.mark.parametrize("offset, size, stride", [(0, [5], [1]), (3, [2], [1]), (0, [2, 2], [1, 3]), (0, [2], [-1])])
def test_views_outside_their_storage_are_refused(tmp_path, offset, size, stride):
    """A strided view reaching past its storage would read foreign memory: it must be an error."""
    path = tmp_path / "evil.pt"
    path.write_bytes(zip_with_storage(opcodes(rebuild_v2(storage_pid("0", 4), offset, size, stride)), 16))
    with pytest.raises(RuntimeError, match="out of bounds|invalid tensor geometry"):
        core.load(path)


def test_in_bounds_crafted_view_loads(tmp_path):
    path = tmp_path / "ok.pt"
    path.write_bytes(zip_with_storage(opcodes(rebuild_v2(storage_pid("0", 4), 1, [2, 2], [0, 2])), 16))
    assert core.load(path).tolist() == [[1.0, 3.0], [1.0, 3.0]]


def test_storage_record_size_must_match(tmp_path):
    path = tmp_path / "evil.pt"
    path.write_bytes(zip_with_storage(opcodes(rebuild_v2(storage_pid("0", 400), 0, [400], [1])), 16))
    with pytest.raises(RuntimeError, match="holds 16 bytes, but its tensors need 1600"):
        core.load(path)
