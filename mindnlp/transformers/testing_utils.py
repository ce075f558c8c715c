"""Hugging Face transformers' test helpers under their names, so HF test files port by changing imports.

"torch" in these names means `mindnlp.core`: `require_torch` always runs the test, and
`torch_device` is "cuda" when the core's CUDA backend has a device, "cpu" otherwise.
"""
import functools
import importlib.util
import logging
import os
import random
import shutil
import sys
import tempfile
import time
import unittest
from io import StringIO
from pathlib import Path

import numpy as np

from .. import core
from .utils.import_utils import is_torch_available

__all__ = [
    "CaptureLogger", "TestCasePlus", "get_tests_dir", "is_flaky", "is_torch_available", "require_safetensors",
    "require_sentencepiece", "require_tokenizers", "require_torch", "require_torch_accelerator",
    "require_torch_gpu", "require_torch_multi_gpu", "require_torch_sdpa", "set_seed", "slow", "tooslow",
    "torch_device",
]


def _env_flag(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"environment variable {name} must be a yes/no flag, got {value!r}")


_run_slow_tests = _env_flag("RUN_SLOW")
_run_flaky_tests = _env_flag("RUN_FLAKY", default=True)


def _cuda_available():
    return core.cuda.is_available()


torch_device = "cuda" if _cuda_available() else "cpu"


def slow(test_case):
    """Run only when RUN_SLOW=1 (tests that download checkpoints or take long)."""
    return unittest.skipUnless(_run_slow_tests, "test is slow: set RUN_SLOW=1 to run it")(test_case)


def tooslow(test_case):
    """Never run: kept for tests HF marks as too slow even for its slow CI."""
    return unittest.skip("test is too slow")(test_case)


def require_torch(test_case):
    """HF's marker for tests that need torch; the core is always there, so a no-op."""
    return test_case


def require_torch_gpu(test_case):
    return unittest.skipUnless(_cuda_available(), "test requires a CUDA device")(test_case)


require_torch_accelerator = require_torch_gpu


def require_torch_multi_gpu(test_case):
    count = core.cuda.device_count() if _cuda_available() else 0
    return unittest.skipUnless(count > 1, "test requires several CUDA devices")(test_case)


def require_torch_sdpa(test_case):
    """`scaled_dot_product_attention` is part of the core's functional API."""
    return test_case


def _require_module(module, message):
    def decorator(test_case):
        present = importlib.util.find_spec(module) is not None
        return unittest.skipUnless(present, message)(test_case)

    return decorator


require_sentencepiece = _require_module("sentencepiece", "test requires the sentencepiece package")
require_tokenizers = _require_module("tokenizers", "test requires the tokenizers package")
require_safetensors = _require_module("safetensors", "test requires the safetensors package")


def is_flaky(max_attempts=5, wait_before_retry=None, description=None):
    """Retry a test that fails by chance up to max_attempts times; RUN_FLAKY=0 skips it instead."""

    def decorator(test_func):
        @functools.wraps(test_func)
        def wrapper(*args, **kwargs):
            for _ in range(max_attempts - 1):
                try:
                    return test_func(*args, **kwargs)
                except Exception:
                    if wait_before_retry is not None:
                        time.sleep(wait_before_retry)
            return test_func(*args, **kwargs)

        return unittest.skipUnless(_run_flaky_tests, "test is flaky")(wrapper)

    return decorator


def set_seed(seed):
    """Seed Python's, NumPy's and the core's random generators."""
    random.seed(seed)
    np.random.seed(seed)
    core.manual_seed(seed)


def get_tests_dir(append_path=None):
    """The `tests` folder of the calling test file (joined with append_path when given)."""
    caller_file = sys._getframe(1).f_globals["__file__"]
    tests_dir = Path(caller_file).resolve()
    while tests_dir.name != "tests" and tests_dir.parent != tests_dir:
        tests_dir = tests_dir.parent
    return str(tests_dir / append_path) if append_path else str(tests_dir)


class CaptureLogger:
    """Capture what a `logging` logger emits while the block runs; read it from `.out`."""

    def __init__(self, logger):
        self.logger = logger
        self.io = StringIO()
        self.handler = logging.StreamHandler(self.io)
        self.out = ""

    def __enter__(self):
        self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self.handler)
        self.out = self.io.getvalue()

    def __repr__(self):
        return f"captured: {self.out}\n"


class TestCasePlus(unittest.TestCase):
    """unittest.TestCase with HF's path helpers and temporary folders removed after each test."""

    def setUp(self):
        super().setUp()
        self._temp_dirs = []
        self.test_file_path = Path(sys.modules[type(self).__module__].__file__).resolve()
        self.test_file_dir = self.test_file_path.parent
        self.tests_dir = self._find_tests_dir(self.test_file_path)
        self.repo_root_dir = self.tests_dir.parent

    @staticmethod
    def _find_tests_dir(path):
        for parent in path.parents:
            if parent.name == "tests":
                return parent
        return path.parent

    @property
    def test_file_path_str(self):
        return str(self.test_file_path)

    @property
    def test_file_dir_str(self):
        return str(self.test_file_dir)

    @property
    def tests_dir_str(self):
        return str(self.tests_dir)

    @property
    def repo_root_dir_str(self):
        return str(self.repo_root_dir)

    def get_auto_remove_tmp_dir(self, tmp_dir=None, before=None, after=None):
        """A temporary folder deleted at the end of the test (or the given folder, emptied when before=True)."""
        if tmp_dir is None:
            path = tempfile.mkdtemp()
            self._temp_dirs.append((path, True))
            return path
        path = Path(tmp_dir).resolve()
        if before and path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True, exist_ok=True)
        self._temp_dirs.append((str(path), after if after is not None else False))
        return str(path)

    def tearDown(self):
        for path, remove in self._temp_dirs:
            if remove:
                shutil.rmtree(path, ignore_errors=True)
        self._temp_dirs = []
        super().tearDown()
