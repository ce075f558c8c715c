# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mindnlp: Hugging Face models on a PyTorch-compatible tensor core of its own.

Subpackages are imported on first use so that `import mindnlp` stays cheap:
`from mindnlp import core as torch`, `from mindnlp.transformers import AutoModel`.
"""
__version__ = "0.1.0"

from ._context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context  # noqa: E402,F401
from ._datasets_hook import watch_for_datasets  # noqa: E402

watch_for_datasets()
