# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The library's logger, with Hugging Face's verbosity helpers (`logging.set_verbosity_info()`).

All mindnlp.transformers modules log under the "mindnlp" logger hierarchy; the helpers set
its level, so a user silences or opens up everything at once, as with transformers.
"""
import functools
import logging
import os

CRITICAL, FATAL, ERROR, WARNING, WARN, INFO, DEBUG, NOTSET = (
    logging.CRITICAL, logging.FATAL, logging.ERROR, logging.WARNING, logging.WARN, logging.INFO, logging.DEBUG,
    logging.NOTSET,
)

_LEVELS = {"debug": DEBUG, "info": INFO, "warning": WARNING, "error": ERROR, "critical": CRITICAL}
_ROOT = "mindnlp"
_progress_bars_enabled = True


def _library_logger():
    logger = logging.getLogger(_ROOT)
    if not getattr(logger, "_mindnlp_configured", False):
        env_level = os.environ.get("MINDNLP_VERBOSITY", os.environ.get("TRANSFORMERS_VERBOSITY", "")).lower()
        if env_level and env_level not in _LEVELS:
            raise ValueError(f"unknown verbosity {env_level!r}; use one of {', '.join(_LEVELS)}")
        logger.setLevel(_LEVELS.get(env_level, WARNING))
        logger._mindnlp_configured = True
    return logger


def get_logger(name=None):
    """A logger under the library's hierarchy (module names already start with 'mindnlp').

    Hugging Face's module names ("transformers.modeling_utils") name the logger of the same
    mindnlp module, so code written against transformers listens where mindnlp logs.
    """
    _library_logger()
    if name == "transformers" or (name or "").startswith("transformers."):
        name = f"{_ROOT}.{name}"
    return logging.getLogger(name or _ROOT)


@functools.lru_cache(None)
def warning_once(self, *args, **kwargs):
    """`logger.warning(...)`, emitted once per distinct message (HF's `Logger.warning_once`).

    The cache is keyed on the arguments, so HF code and tests that call
    `logger.warning_once.cache_clear()` to see a warning again work unchanged.
    """
    self.warning(*args, **kwargs)


@functools.lru_cache(None)
def info_once(self, *args, **kwargs):
    """`logger.info(...)`, emitted once per distinct message (HF's `Logger.info_once`)."""
    self.info(*args, **kwargs)


# As in transformers, every stdlib logger gains the `*_once` methods, so code written against
# `transformers.utils.logging.get_logger(...)` finds them on the loggers returned here.
logging.Logger.warning_once = warning_once
logging.Logger.info_once = info_once


def get_verbosity():
    return _library_logger().getEffectiveLevel()


def set_verbosity(verbosity):
    _library_logger().setLevel(verbosity)


def set_verbosity_debug():
    set_verbosity(DEBUG)


def set_verbosity_info():
    set_verbosity(INFO)


def set_verbosity_warning():
    set_verbosity(WARNING)


def set_verbosity_error():
    set_verbosity(ERROR)


def disable_propagation():
    _library_logger().propagate = False


def enable_propagation():
    _library_logger().propagate = True


def enable_progress_bar():
    global _progress_bars_enabled
    _progress_bars_enabled = True


def disable_progress_bar():
    global _progress_bars_enabled
    _progress_bars_enabled = False


def is_progress_bar_enabled():
    return _progress_bars_enabled
