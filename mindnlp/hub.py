"""Which Hugging Face Hub endpoint to talk to.

One resolution rule shared by `mindnlp download` and `from_pretrained(mirror=, endpoint=)`:
an explicit endpoint wins, then a named mirror, then the `HF_ENDPOINT` variable, then
huggingface.co. Importing mindnlp never changes the environment; callers pass the choice.
"""
import os

DEFAULT_ENDPOINT = "https://huggingface.co"

MIRRORS = {
    "huggingface": DEFAULT_ENDPOINT,
    "hf-mirror": "https://hf-mirror.com",
}


def resolve_endpoint(mirror=None, endpoint=None):
    """Return the base URL (no trailing slash) that hub requests should go to."""
    if endpoint:
        return endpoint.rstrip("/")
    if mirror:
        if mirror in MIRRORS:
            return MIRRORS[mirror]
        if mirror.startswith(("http://", "https://")):
            return mirror.rstrip("/")
        known = ", ".join(sorted(MIRRORS))
        raise ValueError(f"unknown mirror {mirror!r}: use one of {known} or a URL")
    return os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")
