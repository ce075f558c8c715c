# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Hugging Face names for capabilities mindnlp does not have yet.

Code written for HF imports these names (often only to check a type or to build a config it
never uses), so they exist; any real use raises NotImplementedError naming what is missing.
"""


class _UnsupportedMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(cls._unsupported_message)


def unsupported(name, missing):
    """A class named `name` whose construction and class methods raise, naming `missing`."""
    message = f"{name} is not available in mindnlp: {missing} is not implemented yet."

    def refuse(*args, **kwargs):
        raise NotImplementedError(message)

    return _UnsupportedMeta(name, (), {"__init__": refuse, "_unsupported_message": message,
                                       "__doc__": message, "__module__": __name__})
