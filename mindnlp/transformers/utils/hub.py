# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Locate a model's files: a local folder, the shared Hugging Face cache, or a hub repo.

Resolution goes through `huggingface_hub`, so a file downloaded by any HF tool is reused
and files fetched here are visible to those tools. What this module adds is the failure a
user can act on, the same whichever file is asked for first:

- a name that is neither a folder nor a valid repo id fails before any network access;
- offline (`HF_HUB_OFFLINE=1` or `local_files_only=True`), a repository the cache does not
  hold fails at once, naming the cache folder, instead of passing for a repo without files;
- online, one HEAD request asks the endpoint about the file, with our own short timeout and
  few retries (`mindnlp.hub.hub_timeout`/`hub_retries`), because huggingface_hub's own retries
  on a dead endpoint take about 24 s and then report a missing file; the endpoint's answer
  becomes a `mindnlp.hub.HubError` (repo not found, gated, revision, missing file,
  unreachable). A file already cached at the commit the endpoint names is returned without
  asking again; otherwise huggingface_hub downloads it.
"""
import os
import time

import httpx2
from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url, try_to_load_from_cache
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HFValidationError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RevisionNotFoundError,
)
from huggingface_hub.file_download import repo_folder_name
from huggingface_hub.utils import validate_repo_id

from ...hub import (
    AccessDeniedError,
    FileNotFoundOnHubError,
    HubError,
    HubUnreachableError,
    RepoNotFoundError,
    hub_retries,
    hub_timeout,
    resolve_endpoint,
)
from ...hub import RevisionNotFoundError as RevisionMissingError

TOKEN_HINT = "pass token=... (CLI: --token), set HF_TOKEN, or run `hf auth login`"
# Answers worth asking again: rate limiting, gateway timeouts and a busy or failing server.
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def _offline_requested(local_files_only):
    """'HF_HUB_OFFLINE=1' or 'local_files_only=True' when the cache alone must answer, else None."""
    if os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() in ("1", "true", "yes", "on"):
        return "HF_HUB_OFFLINE=1"
    return "local_files_only=True" if local_files_only else None


def cached_file(
    path_or_repo_id,
    filename,
    *,
    revision=None,
    cache_dir=None,
    local_files_only=False,
    token=None,
    subfolder="",
    mirror=None,
    endpoint=None,
    raise_if_missing=True,
):
    """Return the local path of `filename` in a folder or hub repo, downloading if needed.

    With `raise_if_missing=False`, a file the folder or repo does not have gives None instead
    of an error (used for optional files such as generation_config.json); a repo that does not
    exist, refuses access or cannot be reached still raises, so the first file asked for
    reports the real problem whichever file it is.
    """
    path_or_repo_id = str(path_or_repo_id)
    subfolder = subfolder or ""
    relative = os.path.join(subfolder, filename) if subfolder else filename
    if os.path.isdir(path_or_repo_id):
        path = os.path.join(path_or_repo_id, relative)
        if os.path.isfile(path):
            return path
        if raise_if_missing:
            raise FileNotFoundOnHubError(f"{path_or_repo_id} does not contain a file named {relative}")
        return None
    try:
        validate_repo_id(path_or_repo_id)
    except HFValidationError:
        raise RepoNotFoundError(
            f"{path_or_repo_id} is not a folder, and not a valid Hub repo id either (ids look like "
            "'namespace/name'); check the path"
        ) from None
    location = dict(subfolder=subfolder or None, revision=revision, cache_dir=cache_dir, token=token)
    offline = _offline_requested(local_files_only)
    if offline:
        return _from_cache(path_or_repo_id, filename, relative, offline, raise_if_missing, location)
    url_base = resolve_endpoint(mirror, endpoint)
    try:
        commit = _ask_endpoint(path_or_repo_id, filename, url_base, location)
    except HubUnreachableError:
        # The cache may still hold the file, as huggingface_hub would have found.
        cached = _cached_path(path_or_repo_id, relative, location)
        if cached is not None:
            return cached
        raise
    except FileNotFoundOnHubError:
        if raise_if_missing:
            raise
        return None
    current = _cached_at_commit(path_or_repo_id, relative, commit, location)
    if current is not None:
        return current
    try:
        return hf_hub_download(path_or_repo_id, filename, endpoint=url_base, **location)
    except EntryNotFoundError as err:
        if raise_if_missing:
            raise FileNotFoundOnHubError(f"{path_or_repo_id} at {url_base} has no file named {relative}") from err
        return None


def _cached_path(repo_id, relative, location):
    found = try_to_load_from_cache(repo_id, relative, cache_dir=location["cache_dir"],
                                   revision=location["revision"])
    return found if isinstance(found, str) else None


def _cached_at_commit(repo_id, relative, commit, location):
    """The cached file when the revision asked for still points at `commit`, the commit the
    endpoint just named, so huggingface_hub need not ask the endpoint a second time."""
    if not commit:
        return None
    revision = location["revision"] or constants.DEFAULT_REVISION
    if revision != commit:
        cache = location["cache_dir"] or constants.HF_HUB_CACHE
        ref = os.path.join(cache, repo_folder_name(repo_id=repo_id, repo_type="model"), "refs", revision)
        try:
            with open(ref, encoding="utf-8") as file:
                if file.read().strip() != commit:
                    return None
        except OSError:
            return None
    found = try_to_load_from_cache(repo_id, relative, cache_dir=location["cache_dir"], revision=commit)
    return found if isinstance(found, str) else None


def _from_cache(repo_id, filename, relative, offline, raise_if_missing, location):
    """The file from the cache alone; a repo or revision the cache lacks is always an error."""
    try:
        return hf_hub_download(repo_id, filename, local_files_only=True, **location)
    except (LocalEntryNotFoundError, EntryNotFoundError, OfflineModeIsEnabled) as err:
        cache = os.path.abspath(location["cache_dir"] or constants.HF_HUB_CACHE)
        storage = os.path.join(cache, repo_folder_name(repo_id=repo_id, repo_type="model"))
        revision = location["revision"] or constants.DEFAULT_REVISION
        known = os.path.isfile(os.path.join(storage, "refs", revision)) or os.path.isdir(
            os.path.join(storage, "snapshots", revision))
        if not known:
            raise HubUnreachableError(
                f"offline ({offline}) and {repo_id} (revision {revision}) is not in the cache at {cache}; "
                f"download it while online (`mindnlp download {repo_id}`), or unset {offline.split('=')[0]}"
            ) from err
        if raise_if_missing:
            raise HubUnreachableError(
                f"offline ({offline}) and {relative} of {repo_id} is not in the cache at {cache} (the repository "
                f"is, partly); download it while online (`mindnlp download {repo_id}`)"
            ) from err
        return None


def _ask_endpoint(repo_id, filename, endpoint, location):
    """HEAD the file's resolve URL, retrying transient failures a bounded number of times, and
    raise the HubError its answer means; when the file is there, return the commit it is at."""
    url = hf_hub_url(repo_id, filename, subfolder=location["subfolder"], revision=location["revision"],
                     endpoint=endpoint)
    retries, timeout = hub_retries(), hub_timeout()
    started = time.monotonic()
    for attempt in range(retries + 1):
        try:
            return get_hf_file_metadata(url, token=location["token"], timeout=timeout, endpoint=endpoint).commit_hash
        except (httpx2.TransportError, OSError) as err:
            failure, cause = _explain(err, repo_id, filename, location, endpoint), err
        if not (isinstance(failure, HubUnreachableError) and attempt < retries):
            break
        time.sleep(min(4.0, 0.5 * 2 ** attempt))
    if isinstance(failure, HubUnreachableError):
        seconds = time.monotonic() - started
        tries = "1 try" if attempt == 0 else f"{attempt + 1} tries"
        failure = HubUnreachableError(
            f"{failure} ({tries} in {seconds:.1f} s, MINDNLP_HUB_RETRIES={retries}, MINDNLP_HUB_TIMEOUT={timeout:g}); "
            "check the network and the endpoint (HF_ENDPOINT, --endpoint, --mirror), or set HF_HUB_OFFLINE=1 to use "
            "the cache only")
    raise failure from cause


def _explain(err, repo_id, filename, location, endpoint):
    """The HubError that a failed HEAD request means for a user."""
    revision = location["revision"] or constants.DEFAULT_REVISION
    relative = os.path.join(location["subfolder"], filename) if location["subfolder"] else filename
    response = getattr(err, "response", None)
    if isinstance(err, (httpx2.TransportError, OfflineModeIsEnabled)) or response is None:
        kind = {httpx2.ConnectError: "connection failed", httpx2.ConnectTimeout: "connection timed out",
                httpx2.ReadTimeout: "no answer in time"}.get(type(err), type(err).__name__)
        return HubUnreachableError(f"cannot reach the Hub endpoint {endpoint} ({kind}: {err})")
    status = response.status_code
    code = response.headers.get("X-Error-Code", "")
    if isinstance(err, GatedRepoError):
        return AccessDeniedError(
            f"{repo_id} is a gated repository at {endpoint}: accept its terms on its Hub page, then {TOKEN_HINT}")
    if isinstance(err, RevisionNotFoundError):
        return RevisionMissingError(f"revision {revision!r} does not exist for {repo_id} at {endpoint}")
    if code == "EntryNotFound" or (status == 404 and response.headers.get("X-Repo-Commit")):
        return FileNotFoundOnHubError(f"{repo_id} at {endpoint} has no file named {relative}")
    if code == "RepoNotFound" or status == 404:
        return RepoNotFoundError(
            f"{repo_id} is not a local folder, and the Hub at {endpoint} has no repository of that name "
            f"(HTTP {status}); check the name, or if it is private, {TOKEN_HINT}")
    if status in (401, 403):
        return AccessDeniedError(
            f"{endpoint} refused access to {repo_id} (HTTP {status}): it is private or gated, or the token is "
            f"not valid for it; {TOKEN_HINT}")
    if status in TRANSIENT_STATUS:
        return HubUnreachableError(f"the Hub endpoint {endpoint} answered HTTP {status} for {repo_id}/{relative}")
    return HubError(f"the Hub endpoint {endpoint} answered HTTP {status} for {repo_id}/{relative}")
