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


def test_warning_once_emits_each_message_once_until_cache_clear():
    logger = logging.get_logger("mindnlp.transformers.test_warning_once")
    logger.warning_once.cache_clear()
    records = []
    handler = py_logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    try:
        logger.warning_once("padding without an attention mask")
        logger.warning_once("padding without an attention mask")
        assert [r.getMessage() for r in records] == ["padding without an attention mask"]
        logger.warning_once.cache_clear()
        logger.warning_once("padding without an attention mask")
        assert len(records) == 2
    finally:
        logger.removeHandler(handler)


def test_info_once_is_on_every_logger():
    logger = logging.get_logger("mindnlp.transformers.test_info_once")
    assert callable(logger.info_once)
    assert callable(py_logging.getLogger("elsewhere").warning_once)
