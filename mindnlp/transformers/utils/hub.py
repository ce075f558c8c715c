"""Locate a model's files: a local folder, the shared Hugging Face cache, or a hub repo.

Resolution goes through `huggingface_hub`, so a file downloaded by any HF tool is reused
and files fetched here are visible to those tools.
"""
import os

from huggingface_hub import hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HFValidationError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from ...hub import resolve_endpoint


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

    With `raise_if_missing=False`, a file the repo does not have gives None instead of an
    error (used for optional files such as generation_config.json); a repo or revision that
    does not exist still raises.
    """
    path_or_repo_id = str(path_or_repo_id)
    subfolder = subfolder or ""
    if os.path.isdir(path_or_repo_id):
        path = os.path.join(path_or_repo_id, subfolder, filename)
        if os.path.isfile(path):
            return path
        if raise_if_missing:
            raise OSError(f"{path_or_repo_id} does not contain a file named {os.path.join(subfolder, filename)}")
        return None
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        local_files_only = True
    try:
        return hf_hub_download(
            path_or_repo_id,
            filename,
            subfolder=subfolder or None,
            revision=revision,
            cache_dir=cache_dir,
            local_files_only=local_files_only,
            token=token,
            endpoint=resolve_endpoint(mirror, endpoint),
        )
    except HFValidationError as err:
        raise OSError(f"{path_or_repo_id} is neither a local folder nor a valid hub repo id ({err})") from err
    except GatedRepoError as err:
        raise OSError(f"{path_or_repo_id} is gated: log in or pass token= to read it ({err})") from err
    except RepositoryNotFoundError as err:
        raise OSError(
            f"{path_or_repo_id} is neither a local folder nor a repository on the hub (or it is private)"
        ) from err
    except RevisionNotFoundError as err:
        raise OSError(f"revision {revision!r} does not exist for {path_or_repo_id}") from err
    except EntryNotFoundError as err:
        if raise_if_missing:
            raise OSError(f"{path_or_repo_id} does not contain a file named {filename}") from err
        return None
    except LocalEntryNotFoundError as err:
        if not raise_if_missing and local_files_only:
            return None
        raise OSError(
            f"cannot find {filename} for {path_or_repo_id} in the local cache and cannot reach the hub"
            " (offline, or the endpoint is unreachable)"
        ) from err
