"""Fixtures for the CLI tests: a local Hub with a few tiny repositories, and a clean HF home.

Every test gets its own HF_HOME under tmp_path and no HF_ENDPOINT, HF_TOKEN or offline flag
from the surrounding shell, so nothing reads or writes the user's cache and no request can
leave 127.0.0.1.
"""
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import constants

from .hub_server import LocalHub

REPO_ROOT = Path(__file__).resolve().parents[2]

MODEL_FILES = {
    "config.json": b'{"model_type": "tiny", "hidden_size": 8}\n',
    "tokenizer.json": b'{"version": "1.0", "model": {"type": "BPE"}}\n',
    "model.safetensors": bytes(range(256)) * 2048,  # 512 KiB, served as an LFS file
    "docs/README.md": b"# tiny\n",
}
MODEL_V1_FILES = {
    "config.json": b'{"model_type": "tiny", "hidden_size": 4}\n',
    "model.safetensors": bytes(range(255, -1, -1)) * 512,
}
DATASET_FILES = {
    "README.md": b"---\nlicense: mit\n---\n",
    "data/train.parquet": b"PAR1" + bytes(4096) + b"PAR1",
    "data/test.csv": b"text,label\nhello,1\n",
}
SPACE_FILES = {"app.py": b"print('hello')\n", "requirements.txt": b"gradio\n"}


@pytest.fixture
def hub():
    with LocalHub() as server:
        server.add_repo("tiny/model", MODEL_FILES, tags={"v1": MODEL_V1_FILES})
        server.add_repo("tiny/data", DATASET_FILES, repo_type="dataset")
        server.add_repo("tiny/data", SPACE_FILES, repo_type="space")
        server.add_repo("tiny/private", {"config.json": b"{}", "model.safetensors": b"secret" * 100}, access="private")
        server.add_repo("tiny/gated", {"config.json": b"{}"}, access="gated")
        yield server


@pytest.fixture
def hf_home(tmp_path, monkeypatch):
    """A fresh HF home for this test, seen by subprocesses (environment) and in-process calls."""
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    for name in ("HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    return home


@pytest.fixture
def dead_endpoint():
    """The URL of a local port nothing listens on: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def mindnlp_command(*args):
    return [sys.executable, "-m", "mindnlp", *args]


@pytest.fixture
def run(hf_home):
    """Run `python -m mindnlp ARGS...` as a user would; returns the CompletedProcess."""

    def _run(*args, env=None):
        return subprocess.run(
            mindnlp_command(*args),
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            env={**os.environ, **(env or {})},
            timeout=120,
        )

    return _run
