# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
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


def hub_timeout():
    """Seconds one request to the Hub may take before it counts as failed
    (`MINDNLP_HUB_TIMEOUT`, default 5)."""
    return float(os.environ.get("MINDNLP_HUB_TIMEOUT", "5"))


def hub_retries():
    """How many times a request that could not reach the Hub, or that a busy server refused, is
    tried again before the endpoint is declared unreachable (`MINDNLP_HUB_RETRIES`, default 2).
    With the default timeout the wait is bounded by about 17 s, and a refused connection
    fails in under 2 s."""
    return int(os.environ.get("MINDNLP_HUB_RETRIES", "2"))


# Exit codes shared by every command of the CLI, one per failure a user acts on differently.
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_REPO_NOT_FOUND = 3
EXIT_ACCESS_DENIED = 4
EXIT_REVISION_NOT_FOUND = 5
EXIT_FILE_NOT_FOUND = 6
EXIT_UNREACHABLE = 7
EXIT_DISK_FULL = 8
EXIT_CHECKSUM = 9
EXIT_BAD_CHECKPOINT = 10
EXIT_CANNOT_GENERATE = 11
EXIT_INTERRUPTED = 130


class HubError(OSError):
    """A model's files could not be located, explained for a user. An OSError, as Hugging Face
    transformers raises from `from_pretrained`; `exit_code` is what the CLI exits with."""

    exit_code = EXIT_ERROR


class RepoNotFoundError(HubError):
    """No such folder, and no such repository (or a private one without a token)."""

    exit_code = EXIT_REPO_NOT_FOUND


class AccessDeniedError(HubError):
    """The repository is gated or private and no valid token was sent."""

    exit_code = EXIT_ACCESS_DENIED


class RevisionNotFoundError(HubError):
    exit_code = EXIT_REVISION_NOT_FOUND


class FileNotFoundOnHubError(HubError):
    """The folder or repository exists but does not hold the file."""

    exit_code = EXIT_FILE_NOT_FOUND


class CheckpointError(OSError, ValueError):
    """The model's files were found but cannot be used: a config that is not valid JSON,
    truncated or corrupt weights, a model type this version does not know.

    Both an OSError and a ValueError, the two types Hugging Face transformers raises for these
    cases, so code that catches either keeps working.
    """

    exit_code = EXIT_BAD_CHECKPOINT


class HubUnreachableError(HubError):
    """The endpoint could not be reached (or answered only server errors), or offline mode is
    on, and the cache does not hold what is needed."""

    exit_code = EXIT_UNREACHABLE
