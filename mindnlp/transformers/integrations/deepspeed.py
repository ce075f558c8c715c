# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DeepSpeed: not integrated in mindnlp. The queries HF code makes answer "not in use"."""
from ..utils.unsupported import unsupported

HfDeepSpeedConfig = unsupported("HfDeepSpeedConfig", "DeepSpeed integration")


def is_deepspeed_available():
    return False


def is_deepspeed_zero3_enabled():
    """ZeRO-3 parameter partitioning is never active: mindnlp cannot enable it."""
    return False


def deepspeed_config():
    return None


def unset_hf_deepspeed_config():
    """Nothing to unset: no DeepSpeed config can be set in mindnlp."""
