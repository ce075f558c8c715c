# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Make "mindnlp" a `datasets` format (core/utils/data/hf_datasets.py) as soon as `datasets` is
imported, whichever is imported first, without importing `datasets` (or the core) when it is
not used: `import mindnlp` stays cheap."""
import importlib.abc
import importlib.util
import sys


def _register():
    from .core.utils.data.hf_datasets import register

    register()


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Runs register() right after `datasets.formatting` is first imported."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "datasets.formatting":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _register()
        spec.loader.exec_module = exec_module
        return spec


def watch_for_datasets():
    """Make "mindnlp" a datasets format: now if datasets is already imported, else when it is."""
    if "datasets.formatting" in sys.modules:
        _register()
    elif not any(isinstance(finder, _RegisterOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())
