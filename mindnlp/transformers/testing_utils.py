# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Hugging Face transformers' test helpers under their names, so HF test files port by changing imports.

"torch" in these names means `mindnlp.core`: `require_torch` always runs the test, and
`torch_device` is TRANSFORMERS_TEST_DEVICE where that is set (as in HF), else "cuda" when the
core's CUDA backend has a device, "cpu" otherwise.
"""
import contextlib
import functools
import gc
import importlib.util
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import types
import unittest
from collections import UserDict
from io import StringIO
from pathlib import Path

import numpy as np

from .. import core
from .utils.import_utils import is_flash_attn_2_available, is_torch_available

__all__ = [
    "CaptureLogger", "Colors", "TOKEN", "TemporaryHubRepo", "is_staging_test", "DeviceProperties", "Expectations", "TestCasePlus", "backend_empty_cache",
    "build_cpu_memory_monitor", "cleanup", "force_serialization_as_bin_files", "get_device_properties",
    "get_tests_dir", "hub_retry", "init_test_logger", "is_flaky", "is_flash_attn_2_available", "is_torch_available", "is_training_test",
    "require_accelerate", "require_bitsandbytes", "require_deepspeed", "require_flash_attn", "require_flash_attn_3", "require_jinja",
    "require_kernels", "require_non_hpu", "require_optimum_quanto", "require_safetensors", "require_sentencepiece",
    "require_tiktoken", "require_tokenizers", "require_torch", "require_torch_accelerator", "require_torch_gpu",
    "require_torch_greater_or_equal", "require_torch_large_accelerator", "require_torch_mps",
    "require_torch_fp16", "require_torchaudio", "require_deterministic_for_xpu", "require_large_cpu_ram", "require_torch_multi_accelerator",
    "require_torch_multi_gpu", "require_torch_sdpa", "run_first", "run_test_using_subprocess",
    "set_config_for_less_flaky_test", "set_model_for_less_flaky_test", "set_seed", "slow", "tooslow",
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
_run_training_tests = _env_flag("RUN_TRAINING_TESTS", default=True)
_run_staging = _env_flag("HUGGINGFACE_CO_STAGING")

TOKEN = os.environ.get("HF_TOKEN")
"""The Hub token tests that write to the Hub use (HF's staging tests); from HF_TOKEN, else None."""


def _cuda_available():
    return core.cuda.is_available()


torch_device = os.environ.get("TRANSFORMERS_TEST_DEVICE") or ("cuda" if _cuda_available() else "cpu")


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
# float16 is a storage dtype on every backend, and there is no XPU backend to make deterministic;
# tests needing a big checkpoint in host memory are also @slow, which decides whether they run.
require_torch_fp16 = require_torch
require_deterministic_for_xpu = require_torch
require_large_cpu_ram = require_torch


def require_torch_large_accelerator(test_case=None, *, memory=20):
    """HF's marker for tests that need an accelerator of more than `memory` GiB: they run where a
    CUDA device is present (mindnlp does not query its memory) and are skipped elsewhere."""

    def decorate(case):
        return unittest.skipUnless(_cuda_available(), f"test requires a GPU with more than {memory} GiB of memory")(case)

    return decorate if test_case is None else decorate(test_case)


def require_torch_multi_gpu(test_case):
    count = core.cuda.device_count() if _cuda_available() else 0
    return unittest.skipUnless(count > 1, "test requires several CUDA devices")(test_case)


require_torch_multi_accelerator = require_torch_multi_gpu


def _never(reason):
    """A marker for a capability mindnlp does not have: the test is skipped, saying which."""

    def decorator(test_case):
        return unittest.skip(reason)(test_case)

    return decorator


require_torch_mps = _never("test requires Apple's MPS device, which mindnlp.core has no backend for")
require_non_hpu = require_torch  # mindnlp has no Habana HPU backend, so every run is a non-HPU run
require_flash_attn = _never("test requires the flash-attn CUDA kernels, which mindnlp does not use")
require_flash_attn_3 = _never("test requires the flash-attn 3 CUDA kernels, which mindnlp does not use")
require_kernels = _never("test requires the `kernels` hub kernels, which mindnlp does not load")
require_bitsandbytes = _never("test requires bitsandbytes quantization, which mindnlp does not support")
require_optimum_quanto = _never("test requires optimum-quanto quantization, which mindnlp does not support")
require_deepspeed = _never("test requires DeepSpeed, which mindnlp does not integrate")
require_torchaudio = _never("test requires torchaudio, which extends torch and not mindnlp.core")
require_accelerate = _never("test requires the accelerate library's torch hooks, which mindnlp does not integrate")


def require_torch_greater_or_equal(version):
    """HF gates these tests on a torch release's features; mindnlp.core is not torch, so none is claimed."""
    return _never(f"test requires PyTorch >= {version} itself; mindnlp.core does not claim a torch version")


def is_staging_test(test_case):
    """Tests against the Hub's staging server: run only when HUGGINGFACE_CO_STAGING=1."""
    return unittest.skipUnless(_run_staging, "test is staging test")(test_case)


class TemporaryHubRepo:
    """A Hub repository created for the block and deleted after it; the block receives its RepoUrl."""

    def __init__(self, namespace=None, token=None):
        from huggingface_hub import create_repo

        self.token = token
        repo_id = os.path.basename(tempfile.mkdtemp())
        self.repo_url = create_repo(f"{namespace}/{repo_id}" if namespace else repo_id, token=token)

    def __enter__(self):
        return self.repo_url

    def __exit__(self, *exc):
        from huggingface_hub import delete_repo

        delete_repo(repo_id=self.repo_url.repo_id, token=self.token, missing_ok=True)


def is_training_test(test_case):
    """HF's marker for training tests; RUN_TRAINING_TESTS=0 skips them."""
    return unittest.skipUnless(_run_training_tests, "test is a training test")(test_case)


def run_first(test_case):
    """HF orders these first when pytest-order is installed; the order does not matter here."""
    return test_case


def run_test_using_subprocess(func):
    """Run the test in a fresh `python -m pytest` process (HF does this to isolate process-wide state)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if os.environ.get("_INSIDE_SUB_PROCESS") == "1":
            return func(*args, **kwargs)
        test = " ".join(os.environ["PYTEST_CURRENT_TEST"].split(" ")[:-1])
        env = dict(os.environ, _INSIDE_SUB_PROCESS="1")
        result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", test], env=env,
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise AssertionError(f"(subprocess) {test} failed:\n{result.stdout[-4000:]}")

    return wrapper


def hub_retry(max_attempts=5, wait_before_retry=2):
    """Retry a test that reaches the Hub when it fails on a network error (httpx's)."""
    import httpx

    return lambda test_func: _retrying(test_func, max_attempts, wait_before_retry, httpx.HTTPError)


def _retrying(test_func, max_attempts, wait_before_retry, retry_on):
    """test_func, called again (after wait_before_retry seconds) when it raises `retry_on`;
    the last of max_attempts calls lets the error through."""

    @functools.wraps(test_func)
    def wrapper(*args, **kwargs):
        for _ in range(max_attempts - 1):
            try:
                return test_func(*args, **kwargs)
            except retry_on:
                if wait_before_retry is not None:
                    time.sleep(wait_before_retry)
        return test_func(*args, **kwargs)

    return wrapper


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
require_jinja = _require_module("jinja2", "test requires the jinja2 package (chat templates)")
require_safetensors = _require_module("safetensors", "test requires the safetensors package")
require_tiktoken = _require_module("tiktoken", "test requires the tiktoken package")


def is_flaky(max_attempts=5, wait_before_retry=None, description=None):
    """Retry a test that fails by chance up to max_attempts times; RUN_FLAKY=0 skips it instead."""

    def decorator(test_func):
        wrapper = _retrying(test_func, max_attempts, wait_before_retry, Exception)
        return unittest.skipUnless(_run_flaky_tests, "test is flaky")(wrapper)

    return decorator


_COMMON_MODEL_NAMES_MAP = {
    "config_class": "Config",
    "causal_lm_class": "ForCausalLM",
    "question_answering_class": "ForQuestionAnswering",
    "sequence_classification_class": "ForSequenceClassification",
    "token_classification_class": "ForTokenClassification",
}
"""Class-name suffixes CausalLMModelTester uses to find a family's classes from its base model's module."""


def set_config_for_less_flaky_test(config):
    """Norm epsilons of 1.0, so that near-constant activations do not amplify rounding differences."""
    names = ("rms_norm_eps", "layer_norm_eps", "norm_eps", "norm_epsilon", "layer_norm_epsilon", "batch_norm_eps")
    for target in [config] + [getattr(config, a) for a in ("text_config", "vision_config", "text_encoder",
                                                          "audio_encoder", "decoder") if hasattr(config, a)]:
        for name in names:
            setattr(target, name, 1.0)


def set_model_for_less_flaky_test(model):
    """The same for norm modules that do not read their epsilon from the config."""
    kinds = ("LayerNorm", "GroupNorm", "BatchNorm", "RMSNorm", "BatchNorm2d", "BatchNorm1d")
    if isinstance(model, core.nn.Module):
        for module in model.modules():
            if type(module).__name__.endswith(kinds):
                for attr in ("eps", "epsilon", "variance_epsilon"):
                    if hasattr(module, attr):
                        setattr(module, attr, 1.0)


def backend_empty_cache(device):
    """Release the device's cached memory (a no-op on CPU)."""
    if core.device(device).type == "cuda":
        core.cuda.empty_cache()


def cleanup(device, gc_collect=False):
    if gc_collect:
        gc.collect()
    backend_empty_cache(device)


DeviceProperties = tuple
"""(device type, major, minor): the key HF's Expectations match against."""


@functools.cache
def get_device_properties():
    if torch_device == "cuda":
        major, minor = core.cuda.get_device_capability()
        return ("cuda", major, minor)
    return (torch_device, None, None)


class Expectations(UserDict):
    """Expected values per device kind, keyed (device_type, (major, minor)); picks the closest match."""

    def get_expectation(self):
        return self.find_expectation(get_device_properties())

    @staticmethod
    def _unpack(key):
        device_type, version = key
        if version is None:
            return device_type, None, None
        if isinstance(version, int):
            return device_type, version, None
        return (device_type, *version)

    @staticmethod
    def score(properties, other):
        device_type, major, minor = properties
        other_type, other_major, other_minor = other
        score = 0
        if device_type is not None and device_type == other_type:
            score = 1 + (major is not None and major == other_major) + (
                major is not None and major == other_major and minor is not None and minor == other_minor)
        elif device_type in ("cuda", "rocm") and other_type in ("cuda", "rocm"):
            score = 0.1
        if all(p is None for p in other):
            score = 0.5
        return score

    def find_expectation(self, properties=(None, None, None)):
        candidates = [(self._unpack(k), v) for k, v in self.data.items()]
        key, value = max(candidates, key=lambda kv: (self.score(properties, kv[0]),
                                                     kv[0][1] if kv[0][1] is not None else -1,
                                                     kv[0][2] if kv[0][2] is not None else -1))
        if self.score(properties, key) == 0:
            raise ValueError(f"No matching expectation found for {properties}")
        return value


@contextlib.contextmanager
def force_serialization_as_bin_files():
    """Within the block, save_pretrained writes PyTorch `.bin` files instead of safetensors."""
    from .modeling_utils import PreTrainedModel

    original = PreTrainedModel.save_pretrained

    def save_as_bin(self, save_directory, *args, **kwargs):
        return original(self, save_directory, *args, safe_serialization=False, **kwargs)

    PreTrainedModel.save_pretrained = save_as_bin
    try:
        yield
    finally:
        PreTrainedModel.save_pretrained = original


class Colors:
    """ANSI colour codes of HF's training-test logs."""

    RESET, BOLD, DIM = "\033[0m", "\033[1m", "\033[2m"
    RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE = (f"\033[3{i}m" for i in range(1, 8))
    BRIGHT_RED, BRIGHT_GREEN, BRIGHT_YELLOW, BRIGHT_BLUE, BRIGHT_CYAN = (
        "\033[91m", "\033[92m", "\033[93m", "\033[94m", "\033[96m")


def init_test_logger():
    """The INFO-level stderr logger HF's training tests report through."""
    test_logger = logging.getLogger("transformers.training_test")
    test_logger.setLevel(logging.INFO)
    if not test_logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)-8s - %(message)s"))
        test_logger.addHandler(handler)
    test_logger.propagate = False
    return test_logger


class CPUMemoryMonitor:
    """Resident-set size of this process, current and peak, read from /proc (Linux) or resource."""

    def __init__(self):
        self._peak_rss = self._rss()

    @staticmethod
    def _rss():
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def get_stats(self):
        rss = self._rss()
        self._peak_rss = max(self._peak_rss, rss)
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        return types.SimpleNamespace(rss_gib=rss / 2**30, rss_pct=100 * rss / total, peak_rss_gib=self._peak_rss / 2**30,
                                     peak_rss_pct=100 * self._peak_rss / total, available_gib=available / 2**30,
                                     total_gib=total / 2**30)

    def reset_peak_stats(self):
        self._peak_rss = self._rss()


def build_cpu_memory_monitor(logger_instance=None):
    monitor = CPUMemoryMonitor()
    if logger_instance is not None:
        logger_instance.info(f"CPU memory monitor initialized: {monitor._peak_rss / 2**30:.2f} GiB resident")
    return monitor


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


def check_json_file_has_correct_format(file_path):
    """A saved JSON file is "{}" or one key per line, indented by two spaces (HF's layout)."""
    with open(file_path, encoding="utf-8") as f:
        lines = f.readlines()
    if len(lines) == 1:
        assert lines[0] == "{}"
        return
    assert len(lines) >= 3
    assert lines[0].strip() == "{"
    for line in lines[1:-1]:
        assert len(line) - len(line.lstrip()) >= 2
    assert len(lines[1]) - len(lines[1].lstrip()) == 2
    assert lines[-1].strip() == "}"
