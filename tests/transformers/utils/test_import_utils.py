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
