# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Atomic file writes: the target path holds either its old content or the complete new file.

Temporary files are created with mode 0o666 filtered by the umask, as a plain `open()` would
create the file, and not with the 0o600 of `tempfile.mkstemp`: a checkpoint saved on a shared
machine must stay readable by the people the user's umask lets read it.
"""
import contextlib
import os
import secrets
import shutil

STAGING_PREFIX = ".mindnlp-staging-"


def _temp_name(path):
    directory, name = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")


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
    temp_path = _temp_name(path)
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


def write_text_atomic(path, text):
    """Write `text` (UTF-8) to `path` atomically; return the path."""
    with atomic_write(path) as file:
        file.write(text.encode("utf-8"))
    return os.fspath(path)


@contextlib.contextmanager
def staged_folder(directory):
    """Yield a fresh hidden folder inside `directory` to write a whole set of files into; when
    the `with` body succeeds, each file is renamed into `directory` (weights before the small
    files that point at them, in the order given by `commit_order`) and the folder is removed.

    A process killed while writing leaves `directory` exactly as it was, plus the hidden
    folder, which the next staged save in `directory` clears. Renames within one file system
    are atomic, so the only instant at which old and new files coexist is the few
    microseconds of the final renames.
    """
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.startswith(STAGING_PREFIX):
            shutil.rmtree(os.path.join(directory, name), ignore_errors=True)
    staging = os.path.join(directory, STAGING_PREFIX + secrets.token_hex(6))
    os.mkdir(staging)
    try:
        yield staging
        for name in commit_order(os.listdir(staging)):
            os.replace(os.path.join(staging, name), os.path.join(directory, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def commit_order(names):
    """Weight files first, then index files, then everything else (configs): a reader that
    finds a new index or config finds the files it names already in place."""
    def rank(name):
        if name.endswith(".index.json"):
            return 1
        if name.endswith((".safetensors", ".bin", ".pt", ".pth")):
            return 0
        return 2
    return sorted(names, key=lambda name: (rank(name), name))
