"""Atomic file writes: the target path holds either its old content or the complete new file."""
import contextlib
import os
import secrets


@contextlib.contextmanager
def atomic_write(path):
    """Yield a binary file that replaces `path` only once the `with` body finished without error.

    The data goes to a temporary file in the target's directory (so `os.replace` is a rename
    on one file system), is flushed to disk, and then renamed over the target. On any
    exception the temporary file is removed and the target is left untouched.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Parent directory {directory} does not exist.")
    temp_path = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # os.open with mode 0o666 lets the umask decide permissions, as a plain open() would.
    fd = os.open(temp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_path)
        raise
