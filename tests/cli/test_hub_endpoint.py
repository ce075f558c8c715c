"""The endpoint rule shared by `mindnlp download` and `from_pretrained(mirror=, endpoint=)`."""
import pytest

from mindnlp.hub import resolve_endpoint


def test_explicit_endpoint_then_mirror_then_variable_then_default(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://from-env.example/")
    assert resolve_endpoint(mirror="hf-mirror", endpoint="http://explicit.example/") == "http://explicit.example"
    assert resolve_endpoint(mirror="hf-mirror") == "https://hf-mirror.com"
    assert resolve_endpoint(mirror="https://other-mirror.example/") == "https://other-mirror.example"
    assert resolve_endpoint() == "http://from-env.example"
    monkeypatch.delenv("HF_ENDPOINT")
    assert resolve_endpoint() == "https://huggingface.co"


def test_unknown_mirror_name_is_refused():
    with pytest.raises(ValueError, match="unknown mirror"):
        resolve_endpoint(mirror="nowhere")
