# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Download a Hub repository: what `mindnlp download` runs.

huggingface_hub supplies the protocol: the repository and tree listings (`HfApi`), the
resolve URLs, the error types the Hub's answers map to, auth headers, the shared HTTP session
and the on-disk layouts. This module adds what it lacks:

- a transfer interrupted in an earlier run resumes where its partial file ends
  (huggingface_hub names its partial files per process and deletes them on failure, so a
  killed `hf download` starts over);
- every file is checked against the hash the Hub lists for it (sha256 for LFS files, the git
  blob sha1 for the others) before it gets its final name;
- an ordered list of endpoints: when one fails, the next one is tried;
- one exception class per failure a user must act on, each with its own exit code.

Files land where huggingface_hub puts them: blobs/, snapshots/ and refs/ in the shared cache,
or a plain folder with huggingface_hub's `.cache/huggingface/download/` metadata for
`local_dir`. Other HF tools therefore reuse what was downloaded here, and the reverse.
"""
import errno
import hashlib
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import httpx2
from huggingface_hub import HfApi, constants, hf_hub_url
from huggingface_hub._local_folder import (
    get_local_download_paths,
    read_download_metadata,
    write_download_metadata,
)
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    OfflineModeIsEnabled,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.file_download import repo_folder_name
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils import (
    WeakFileLock,
    build_hf_headers,
    filter_repo_objects,
    get_session,
    hf_raise_for_status,
    tqdm,
)

from . import hub

REPO_TYPES = ("model", "dataset", "space")
CHUNK_SIZE = 1024 * 1024
# Server answers worth asking again: rate limiting, timeouts, and a busy or failing server.
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 8.0


class DownloadError(Exception):
    """A download failure explained for a user; `exit_code` is what the CLI exits with."""

    exit_code = 1


class RepoNotFound(DownloadError):
    exit_code = hub.EXIT_REPO_NOT_FOUND


class AccessDenied(DownloadError):
    """The repository is gated, or the token was refused."""

    exit_code = hub.EXIT_ACCESS_DENIED


class RevisionNotFound(DownloadError):
    exit_code = hub.EXIT_REVISION_NOT_FOUND


class NoFileMatched(DownloadError):
    """The file names or patterns select nothing in the repository."""

    exit_code = hub.EXIT_FILE_NOT_FOUND


class HubUnreachable(DownloadError):
    """No endpoint answered: no connection, offline mode, or server errors past all retries."""

    exit_code = hub.EXIT_UNREACHABLE

    def __init__(self, message, *, connection_failed=False):
        super().__init__(message)
        # True when the endpoint could not be reached at all, so later files skip it.
        self.connection_failed = connection_failed


class DiskFull(DownloadError):
    exit_code = hub.EXIT_DISK_FULL


class ChecksumMismatch(DownloadError):
    exit_code = hub.EXIT_CHECKSUM


class Interrupted(DownloadError):
    exit_code = hub.EXIT_INTERRUPTED


@dataclass(frozen=True)
class RemoteFile:
    """One file of the repository at the resolved commit, as the tree listing describes it."""

    path: str
    size: int
    blob_id: str
    sha256: str | None

    @property
    def etag(self):
        """The name huggingface_hub gives the blob: the LFS sha256, else the git blob id."""
        return self.sha256 or self.blob_id


@dataclass
class Plan:
    """What a download would do: the resolved commit and, per selected file, what is on disk."""

    repo_id: str
    repo_type: str
    revision: str
    commit: str
    endpoint: str
    destination: str
    files: list
    present: set
    partial_bytes: dict

    @property
    def to_fetch(self):
        return [f for f in self.files if f.path not in self.present]

    @property
    def bytes_to_fetch(self):
        return sum(f.size - self.partial_bytes.get(f.path, 0) for f in self.to_fetch)


@dataclass
class Summary:
    path: str
    files: int
    fetched: int
    bytes_fetched: int
    seconds: float


def _check_relative(path):
    """Refuse repo paths that would escape the destination folder (absolute or with '..')."""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or ".." in parts or "\\" in path:
        raise DownloadError(f"refusing unsafe file name in repository listing: {path!r}")
    return path


def _backoff(attempt):
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (attempt - 1))


def _retries_allowed(err, retries):
    """How many times `err` is worth retrying.

    A refused or unresolvable connection is retried once only: the endpoint is most likely
    down, and the next endpoint in the list is a better bet than waiting on this one.
    """
    if isinstance(err, httpx2.ConnectError):
        return min(retries, 1)
    if isinstance(err, (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)):
        return retries
    if isinstance(err, HfHubHTTPError) and err.response is not None:
        return retries if err.response.status_code in TRANSIENT_STATUS else 0
    return 0


def _explain(err, endpoint, what):
    """Turn a huggingface_hub / httpx2 failure into the DownloadError a user acts on."""
    at = f"at {endpoint}"
    if isinstance(err, DownloadError):
        return err
    if isinstance(err, GatedRepoError):  # a subclass of RepositoryNotFoundError: test it first
        return AccessDenied(
            f"{what} is gated {at}: accept its terms on the Hub, then pass --token or set HF_TOKEN"
        )
    if isinstance(err, RepositoryNotFoundError):
        return RepoNotFound(
            f"{what} not found {at} (check the name and --repo-type; if it is private, "
            "pass --token or set HF_TOKEN)"
        )
    if isinstance(err, RevisionNotFoundError):
        return RevisionNotFound(f"{what} {at}: no such revision (branch, tag or commit)")
    if isinstance(err, RemoteEntryNotFoundError):
        return DownloadError(f"{what} {at} lists a file that it does not serve: {err.response.url}")
    if isinstance(err, OfflineModeIsEnabled):
        return HubUnreachable(
            f"cannot reach {endpoint}: offline mode is on (unset HF_HUB_OFFLINE)", connection_failed=True
        )
    if isinstance(err, HfHubHTTPError) and err.response is not None:
        status = err.response.status_code
        if status in (401, 403):
            return AccessDenied(f"{what} {at}: access refused (HTTP {status}); check --token or HF_TOKEN")
        return HubUnreachable(f"{what} {at}: HTTP {status} from the server")
    if isinstance(err, httpx2.TransportError):
        kind = type(err).__name__
        return HubUnreachable(
            f"cannot reach {endpoint} ({kind}: {err})",
            connection_failed=isinstance(err, (httpx2.ConnectError, httpx2.TimeoutException)),
        )
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(f"disk full while downloading {what} ({err}); free some space and run again to resume")
    return None


def _most_telling(failures):
    """Of the failures on several endpoints, the one a user should see.

    A Hub's answer (not found, gated, bad revision, corrupted file) tells more than another
    endpoint's silence, so the first such answer wins; otherwise every endpoint's failure.
    """
    for failure in failures:
        if not isinstance(failure, HubUnreachable):
            return failure
    if len(failures) == 1:
        return failures[0]
    return HubUnreachable("; ".join(str(f) for f in failures))


class _ContentHash:
    """The hash the Hub lists for a file: sha256 of an LFS file, git blob sha1 otherwise."""

    def __init__(self, remote):
        self.remote = remote
        self.reset()

    def reset(self):
        if self.remote.sha256:
            self._hash = hashlib.sha256()
        else:
            self._hash = hashlib.sha1(b"blob %d\0" % self.remote.size)

    def update(self, data):
        self._hash.update(data)

    def matches(self):
        return self._hash.hexdigest() == self.remote.etag


class CacheLayout:
    """huggingface_hub's cache: blobs/<etag>, snapshots/<commit>/<path> linking to the blob,
    refs/<revision> holding the commit."""

    def __init__(self, cache_dir, repo_id, repo_type, commit):
        self.cache_dir = Path(cache_dir).expanduser().resolve()
        self.folder = repo_folder_name(repo_id=repo_id, repo_type=repo_type)
        self.storage = self.cache_dir / self.folder
        self.commit = commit
        self.root = self.storage / "snapshots" / commit

    def final_path(self, remote):
        return self.root / remote.path

    def blob_path(self, remote):
        return self.storage / "blobs" / remote.etag

    def partial_path(self, remote):
        # A fixed name per blob, so that the next run finds and resumes it.
        return self.storage / "blobs" / f"{remote.etag}.incomplete"

    def lock_path(self, remote):
        # The lock huggingface_hub takes for the same blob, so the two never write it at once.
        return self.cache_dir / ".locks" / self.folder / f"{remote.etag}.lock"

    def is_present(self, remote):
        return self.final_path(remote).exists()

    def reuse(self, remote):
        """Link a blob another revision already brought; True if that completed the file."""
        if not self.blob_path(remote).exists():
            return False
        self._link(remote)
        return True

    def install(self, remote, partial):
        os.replace(partial, self.blob_path(remote))
        self._link(remote)

    def _link(self, remote):
        pointer = self.final_path(remote)
        pointer.parent.mkdir(parents=True, exist_ok=True)
        blob = self.blob_path(remote)
        if pointer.is_symlink() or pointer.exists():
            pointer.unlink()
        try:
            os.symlink(os.path.relpath(blob, pointer.parent), pointer)
        except OSError:
            # No symlinks here (some Windows setups): keep a copy, as huggingface_hub does.
            shutil.copyfile(blob, pointer)

    def record_revision(self, revision):
        """Write refs/<revision> so that the name resolves offline to this commit."""
        if revision == self.commit:
            return
        ref = self.storage / "refs" / revision
        ref.parent.mkdir(parents=True, exist_ok=True)
        tmp = ref.with_name(f"{ref.name}.{os.getpid()}.tmp")
        tmp.write_text(self.commit)
        os.replace(tmp, ref)


class LocalDirLayout:
    """A plain folder holding the repo's files, with huggingface_hub's per-file metadata
    under .cache/huggingface/download/ so that `hf_hub_download(local_dir=...)` trusts them."""

    def __init__(self, local_dir, commit):
        self.root = Path(local_dir).expanduser().resolve()
        self.commit = commit

    def _paths(self, remote):
        return get_local_download_paths(self.root, remote.path)

    def final_path(self, remote):
        return self.root / remote.path

    def partial_path(self, remote):
        return self._paths(remote).incomplete_path(remote.etag)

    def lock_path(self, remote):
        # Not huggingface_hub's own lock file for this path: its metadata helpers, called
        # while this lock is held, take that one, and a second flock on it would deadlock.
        partial = self.partial_path(remote)
        return partial.with_name(partial.name + ".lock")

    def is_present(self, remote):
        if not self.final_path(remote).is_file():
            return False
        metadata = read_download_metadata(self.root, remote.path)
        return metadata is not None and (metadata.etag == remote.etag or metadata.commit_hash == self.commit)

    def reuse(self, remote):
        return False

    def install(self, remote, partial):
        os.replace(partial, self.final_path(remote))
        write_download_metadata(self.root, remote.path, commit_hash=self.commit, etag=remote.etag)

    def record_revision(self, revision):
        """A plain folder has no refs; its metadata records the commit of each file."""


class Downloader:
    """Resolve a repository on the first endpoint that answers, then fetch its files.

    `endpoints` is the ordered fallback list. Each file is fetched from the endpoint that
    served the listing first, then from the others; an endpoint that could not be reached at
    all is skipped for the rest of the run.
    """

    def __init__(
        self,
        repo_id,
        *,
        endpoints,
        repo_type="model",
        revision=None,
        filenames=(),
        include=None,
        exclude=None,
        cache_dir=None,
        local_dir=None,
        token=None,
        max_workers=8,
        retries=5,
        quiet=False,
    ):
        if repo_type not in REPO_TYPES:
            raise ValueError(f"repo_type must be one of {', '.join(REPO_TYPES)}, not {repo_type!r}")
        if not endpoints:
            raise ValueError("at least one endpoint is needed")
        self.repo_id = repo_id
        self.repo_type = repo_type
        self.revision = revision or constants.DEFAULT_REVISION
        self.filenames = list(filenames)
        self.include = include or None
        self.exclude = exclude or None
        self.cache_dir = cache_dir or constants.HF_HUB_CACHE
        self.local_dir = local_dir
        self.token = token
        self.endpoints = [e.rstrip("/") for e in endpoints]
        self.max_workers = max(1, max_workers)
        self.retries = max(0, retries)
        self.quiet = quiet
        self._unreachable = set()
        self._stop = threading.Event()
        self._bytes_lock = threading.Lock()
        self._bytes_fetched = 0

    @property
    def _what(self):
        kind = "" if self.repo_type == "model" else f"{self.repo_type} "
        return f"{kind}repository {self.repo_id!r}"

    def _retrying(self, call):
        """Run `call`, retrying transient failures with exponential backoff."""
        attempt = 0
        while True:
            try:
                return call()
            except Exception as err:
                if attempt >= _retries_allowed(err, self.retries) or self._stop.is_set():
                    raise
                attempt += 1
                time.sleep(_backoff(attempt))

    def _on_each_endpoint(self, action, order):
        """Return `action(endpoint)` from the first endpoint of `order` that succeeds."""
        failures = []
        for endpoint in order:
            if endpoint in self._unreachable:
                continue
            try:
                return action(endpoint)
            except (DiskFull, Interrupted):
                raise
            except Exception as err:
                explained = _explain(err, endpoint, self._what)
                if explained is None:
                    raise
                if isinstance(explained, DiskFull):
                    raise explained from err  # another endpoint would not help
                if isinstance(explained, HubUnreachable) and explained.connection_failed:
                    self._unreachable.add(endpoint)
                failures.append(explained)
        if not failures:
            raise HubUnreachable("no endpoint left to try: all were unreachable earlier in this run")
        raise _most_telling(failures)

    def _list(self, endpoint):
        api = HfApi(endpoint=endpoint, token=self.token)
        timeout = constants.HF_HUB_ETAG_TIMEOUT
        info = self._retrying(
            lambda: api.repo_info(self.repo_id, repo_type=self.repo_type, revision=self.revision, timeout=timeout)
        )
        if not info.sha:
            raise HubUnreachable(f"{endpoint} answered without a commit id: it does not look like a Hub endpoint")
        entries = self._retrying(
            lambda: list(api.list_repo_tree(self.repo_id, repo_type=self.repo_type, revision=info.sha, recursive=True))
        )
        files = [
            RemoteFile(_check_relative(e.path), e.size, e.blob_id, e.lfs.sha256 if e.lfs is not None else None)
            for e in entries
            if isinstance(e, RepoFile)
        ]
        return endpoint, info.sha, files

    def _select(self, files):
        by_path = {f.path: f for f in files}
        if self.filenames:
            missing = [name for name in self.filenames if name not in by_path]
            if missing:
                raise NoFileMatched(f"{self._what} has no file named {', '.join(missing)}")
            files = [by_path[name] for name in dict.fromkeys(self.filenames)]
        selected = list(
            filter_repo_objects(files, allow_patterns=self.include, ignore_patterns=self.exclude, key=lambda f: f.path)
        )
        if not selected:
            if not files:
                raise NoFileMatched(f"{self._what} has no files at revision {self.revision!r}")
            patterns = [f"--include {p}" for p in self.include or ()] + [f"--exclude {p}" for p in self.exclude or ()]
            raise NoFileMatched(f"no file of {self._what} ({len(files)} files) matches {' '.join(patterns)}")
        return sorted(selected, key=lambda f: f.path)

    def _layout(self, commit):
        if self.local_dir is not None:
            return LocalDirLayout(self.local_dir, commit)
        return CacheLayout(self.cache_dir, self.repo_id, self.repo_type, commit)

    def plan(self):
        """List the repository and say, per selected file, whether it is already on disk."""
        endpoint, commit, files = self._on_each_endpoint(self._list, self.endpoints)
        selected = self._select(files)
        layout = self._layout(commit)
        present = {f.path for f in selected if layout.is_present(f)}
        partial = {}
        for f in selected:
            path = layout.partial_path(f)
            if f.path not in present and path.is_file():
                partial[f.path] = min(path.stat().st_size, f.size)
        return Plan(
            repo_id=self.repo_id,
            repo_type=self.repo_type,
            revision=self.revision,
            commit=commit,
            endpoint=endpoint,
            destination=str(layout.root),
            files=selected,
            present=present,
            partial_bytes=partial,
        )

    def run(self, plan=None):
        """Fetch every file the plan lacks; return a Summary or raise the first failure."""
        started = time.monotonic()
        plan = plan or self.plan()
        layout = self._layout(plan.commit)
        layout.record_revision(plan.revision)
        self._check_free_space(plan, layout)
        order = [plan.endpoint] + [e for e in self.endpoints if e != plan.endpoint]
        failures = []
        fetched = []
        pool = ThreadPoolExecutor(max_workers=self.max_workers)
        futures = {pool.submit(self._fetch, f, layout, order): f for f in plan.to_fetch}
        try:
            pending = set(futures)
            while pending:
                # Short waits keep the main thread responsive to Ctrl-C.
                done, pending = wait(pending, timeout=0.2)
                for future in done:
                    try:
                        if future.result():
                            fetched.append(futures[future])
                    except DownloadError as err:
                        failures.append(err)
        except KeyboardInterrupt:
            self._stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise Interrupted("interrupted: run the same command again to resume") from None
        pool.shutdown()
        summary = Summary(
            path=str(layout.root),
            files=len(plan.files),
            fetched=len(fetched),
            bytes_fetched=self._bytes_fetched,
            seconds=time.monotonic() - started,
        )
        if failures:
            first = failures[0]
            raise type(first)("\n".join(str(f) for f in failures))
        return summary

    def _check_free_space(self, plan, layout):
        """Fail before transferring anything when the destination cannot hold the files."""
        needed = plan.bytes_to_fetch
        probe = Path(layout.root)
        while not probe.exists():
            probe = probe.parent
        free = shutil.disk_usage(probe).free
        if needed > free:
            raise DiskFull(f"{needed} bytes to download but only {free} bytes free on the disk holding {probe}")

    def _fetch(self, remote, layout, order):
        """Bring one file to its final path; True if bytes were transferred for it."""
        try:
            lock = layout.lock_path(remote)
            lock.parent.mkdir(parents=True, exist_ok=True)
            with WeakFileLock(lock):
                if layout.is_present(remote) or layout.reuse(remote):
                    return False
                partial = layout.partial_path(remote)
                partial.parent.mkdir(parents=True, exist_ok=True)
                layout.final_path(remote).parent.mkdir(parents=True, exist_ok=True)
                self._on_each_endpoint(lambda endpoint: self._fetch_from(endpoint, remote, partial, layout.commit), order)
                layout.install(remote, partial)
                return True
        except OSError as err:
            if err.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DiskFull(f"disk full while writing {remote.path}: {err}") from err
            raise DownloadError(f"cannot write {remote.path}: {err}") from err

    def _fetch_from(self, endpoint, remote, partial, commit):
        """Complete `partial` from `endpoint` and check it against the Hub's hash.

        A resumed file whose hash is wrong may owe it to a stale prefix left by an earlier
        run, so it is fetched once more from the start before the endpoint's copy is blamed.
        """
        url = hf_hub_url(self.repo_id, remote.path, repo_type=self.repo_type, revision=commit, endpoint=endpoint)
        resumed = partial.is_file() and partial.stat().st_size > 0
        if self._complete(url, remote, partial).matches():
            return
        if resumed:
            partial.unlink()
            if self._complete(url, remote, partial).matches():
                return
        partial.unlink()
        kind = "sha256" if remote.sha256 else "git blob sha1"
        raise ChecksumMismatch(
            f"{remote.path} from {endpoint} does not match the {kind} the Hub lists for it ({remote.etag}); "
            "the corrupt copy was deleted"
        )

    def _complete(self, url, remote, partial):
        """Append the bytes `partial` lacks, retrying with backoff; return the content hash."""
        transfer = _Transfer(url, remote, partial, self._headers(), self._count_bytes, self._stop)
        with tqdm(
            total=remote.size,
            initial=transfer.offset,
            desc=remote.path,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            disable=self.quiet,
        ) as bar:
            transfer.bar = bar
            try:
                self._retry_until_done(transfer)
            except BaseException:
                transfer.discard_if_empty()
                raise
        return transfer.digest

    def _retry_until_done(self, transfer):
        attempt = 0
        furthest = transfer.offset
        while not transfer.done:
            try:
                transfer.stream()
            except DownloadError:
                raise
            except Exception as err:
                if transfer.offset > furthest:
                    # New bytes arrived before the failure: the retry budget starts over.
                    # Bytes fetched again after a restart do not count, or a server that
                    # keeps sending a truncated file would be retried forever.
                    furthest = transfer.offset
                    attempt = 0
                if attempt >= _retries_allowed(err, self.retries) or self._stop.is_set():
                    raise
                attempt += 1
                time.sleep(_backoff(attempt))

    def _headers(self):
        from . import __version__

        return build_hf_headers(token=self.token, library_name="mindnlp", library_version=__version__)

    def _count_bytes(self, n):
        with self._bytes_lock:
            self._bytes_fetched += n


class _Transfer:
    """One file's bytes moving from a resolve URL into its partial file.

    `offset` is how much of the file is on disk and already hashed; each `stream()` asks the
    server for the rest with a Range request, so a dropped connection or a new run picks up
    where the previous one stopped.
    """

    def __init__(self, url, remote, partial, headers, count_bytes, stop):
        self.url = url
        self.remote = remote
        self.partial = partial
        self.headers = headers
        self.count_bytes = count_bytes
        self.stop = stop
        self.bar = None
        self.digest = _ContentHash(remote)
        self.offset = self._hash_existing()

    @property
    def done(self):
        return self.partial.is_file() and self.offset >= self.remote.size

    def _hash_existing(self):
        """Hash the bytes an earlier attempt left, or start over when they cannot be a prefix."""
        if not self.partial.is_file():
            return 0
        if self.partial.stat().st_size > self.remote.size:
            self.partial.write_bytes(b"")
            return 0
        offset = 0
        with open(self.partial, "rb") as f:
            while chunk := f.read(CHUNK_SIZE):
                self.digest.update(chunk)
                offset += len(chunk)
        return offset

    def discard_if_empty(self):
        """A failed first attempt leaves nothing worth resuming: remove its empty file."""
        if self.partial.is_file() and self.partial.stat().st_size == 0:
            self.partial.unlink()

    def _restart(self):
        self.partial.write_bytes(b"")
        self.digest.reset()
        if self.bar is not None:
            self.bar.reset(total=self.remote.size)
        self.offset = 0

    def stream(self):
        """One GET for the bytes from `offset` on; raises when the file is still incomplete."""
        headers = dict(self.headers, **{"Accept-Encoding": "identity"})
        if self.offset:
            headers["Range"] = f"bytes={self.offset}-"
        timeout = constants.HF_HUB_DOWNLOAD_TIMEOUT
        with get_session().stream("GET", self.url, headers=headers, timeout=timeout, follow_redirects=True) as response:
            if response.status_code == 416:
                # The server's file is shorter than our partial one: that prefix is not its.
                self._restart()
                raise httpx2.RemoteProtocolError("range not satisfiable; starting the file over")
            if response.status_code >= 400:
                response.read()
                hf_raise_for_status(response)
            if self.offset and response.status_code != 206:
                self._restart()  # the server ignored Range and sends the whole file
            # Unbuffered, and written as the bytes arrive rather than in fixed chunks: when the
            # connection drops or the process is killed, every byte received is on disk and
            # the next attempt asks for the rest only.
            with open(self.partial, "ab", buffering=0) as f:
                for chunk in response.iter_bytes():
                    if self.stop.is_set():
                        raise Interrupted("interrupted")
                    if self.offset + len(chunk) > self.remote.size:
                        self._restart()
                        raise ChecksumMismatch(
                            f"{self.remote.path} from {self.url}: the server sends more than the "
                            f"{self.remote.size} bytes the Hub lists"
                        )
                    f.write(chunk)
                    self.digest.update(chunk)
                    self.offset += len(chunk)
                    self.count_bytes(len(chunk))
                    self.bar.update(len(chunk))
        if self.offset < self.remote.size:
            raise httpx2.RemoteProtocolError(
                f"{self.remote.path}: connection ended at byte {self.offset} of {self.remote.size}"
            )
