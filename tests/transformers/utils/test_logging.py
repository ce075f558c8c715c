import logging as py_logging

from mindnlp.transformers.utils import logging


def test_verbosity_helpers_set_the_library_level():
    previous = logging.get_verbosity()
    try:
        logging.set_verbosity_info()
        assert logging.get_verbosity() == logging.INFO
        assert logging.get_logger("mindnlp.transformers.modeling_utils").getEffectiveLevel() == logging.INFO
        logging.set_verbosity_error()
        assert logging.get_logger("mindnlp.transformers.x").getEffectiveLevel() == py_logging.ERROR
    finally:
        logging.set_verbosity(previous)


def test_progress_bar_switch():
    logging.disable_progress_bar()
    assert not logging.is_progress_bar_enabled()
    logging.enable_progress_bar()
    assert logging.is_progress_bar_enabled()
