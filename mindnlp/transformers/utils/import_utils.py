"""Hugging Face's backend-availability checks, answered for mindnlp.

HF code guards torch-only imports with `if is_torch_available():`; here `mindnlp.core` plays
torch's part and is always importable, so such guarded code always runs.
"""


def is_torch_available():
    """mindnlp's core plays torch's part, so it is always available."""
    return True
