"""Backend checks and package-level names that HF test files import from `transformers`."""
from mindnlp import transformers
from mindnlp.transformers import testing_utils
from mindnlp.transformers.utils import import_utils
from mindnlp.transformers.utils import logging as logging_module


def test_is_torch_available_is_exported_where_hf_has_it():
    assert transformers.is_torch_available() is True
    assert transformers.is_torch_available is import_utils.is_torch_available
    assert testing_utils.is_torch_available is import_utils.is_torch_available


def test_logging_module_is_exported_at_package_level():
    assert transformers.logging is logging_module


def test_compiling_and_exporting_are_true_only_while_a_capture_records():
    """HF code asks is_torchdynamo_compiling()/exporting() to choose a graph-friendly form: true
    while core.compile or core.onnx.export records the call, false when it runs or replays."""
    from mindnlp import core

    seen = []

    def fn(x):
        seen.append((import_utils.is_torchdynamo_compiling(), import_utils.is_torchdynamo_exporting()))
        return x * 2

    compiled = core.compile(fn)
    for _ in range(2):
        compiled(core.ones(3))
    fn(core.ones(3))
    assert seen == [(True, False), (False, False)]


def test_sentencepiece_availability_is_the_package_s():
    import importlib.util

    assert import_utils.is_sentencepiece_available() is (importlib.util.find_spec("sentencepiece") is not None)
