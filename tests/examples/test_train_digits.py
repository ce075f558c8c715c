"""examples/train_digits.py trains a CNN on scikit-learn's digits to at least 95% accuracy."""
import importlib.util
import pathlib

import pytest

pytest.importorskip("sklearn", reason="the digits data ships with scikit-learn (a test extra)")

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_cnn_reaches_95_percent():
    accuracy = load_example().train(seed=0)
    assert accuracy >= 0.95
