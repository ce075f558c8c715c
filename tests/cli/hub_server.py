"""A small stand-in for the Hugging Face Hub, served on 127.0.0.1 for the CLI tests.

It speaks the part of the Hub protocol that huggingface_hub 2.x uses to download:

  GET  /api/{models,datasets,spaces}/{repo_id}[/revision/{rev}]   repo info; `sha` is the commit
  GET  /api/{type}s/{repo_id}/tree/{rev}[/{dir}]?recursive=...     listing: oid, size, lfs
  HEAD/GET /[datasets/|spaces/]{repo_id}/resolve/{rev}/{path}      file bytes, Range requests
  HEAD/GET /cdn/{sha256}                                           LFS bytes, on a second port

As on the Hub, a regular file's ETag is its git blob sha1; an LFS file's resolve URL answers
302 to another origin (the "CDN", here a second listening port) with X-Linked-Etag (its
sha256) and X-Linked-Size; every resolve answer carries X-Repo-Commit; failures carry the
X-Error-Code header that huggingface_hub maps to its exceptions (RepoNotFound, GatedRepo,
RevisionNotFound, EntryNotFound).

olah, the self-hosted mirror on PyPI, was the other candidate: it pulls in a web framework, a
database and git tooling, and it cannot drop a connection midway or serve a corrupted file,
which the resume and checksum tests need. Those faults are injected here per file
(`LocalHub.inject`), and every request is logged (`LocalHub.log`) for the tests to inspect.
"""
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".parquet")
GOOD_TOKEN = "hf_local_test_token"


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


@dataclass
class Repo:
    repo_id: str
    repo_type: str
    # revision name (branch or tag) -> commit id; commit id -> {path: bytes}
    refs: dict
    commits: dict
    access: str = "public"  # "public", "private" (token needed to see it), "gated" (token needed for files)

    def commit_for(self, revision):
        if revision in self.refs:
            return self.refs[revision]
        if revision in self.commits:
            return revision
        return None


@dataclass
class Fault:
    """A misbehaviour of GET on one file: "drop" or "stall" after `at` bytes, "status", "corrupt"."""

    path: str
    kind: str
    times: int | None  # None: every time
    at: int = 0
    status: int = 503


@dataclass
class Request:
    method: str
    path: str
    headers: dict = field(default_factory=dict)


class LocalHub:
    """The server: repositories, injected faults and a request log, on two local ports."""

    def __init__(self):
        self.repos = {}
        self.blobs = {}  # sha256 -> (path, bytes), what the CDN port serves
        self.faults = []
        self.log = []
        self.stalled = threading.Event()  # set when a "stall" fault has sent its bytes
        self.release = threading.Event()  # set to let a stalled response end
        self._lock = threading.Lock()
        self._servers = []

    # -- content ----------------------------------------------------------------------------

    def add_repo(self, repo_id, files, *, repo_type="model", tags=None, access="public"):
        """Create a repository whose main branch holds `files`; `tags` maps a tag to its files."""
        refs, commits = {}, {}
        for name, content in {"main": files, **(tags or {})}.items():
            commit = hashlib.sha1(repr((repo_id, name, sorted(content.items()))).encode()).hexdigest()
            refs[name] = commit
            commits[commit] = dict(content)
            for path, data in content.items():
                if path.endswith(LFS_SUFFIXES):
                    self.blobs[sha256(data)] = (path, data)
        self.repos[(repo_type, repo_id)] = Repo(repo_id, repo_type, refs, commits, access)
        return refs["main"]

    def inject(self, path, kind, *, times=1, at=0, status=503):
        self.faults.append(Fault(path, kind, times, at, status))

    def _take_fault(self, path):
        with self._lock:
            for fault in self.faults:
                if fault.path == path and fault.times != 0:
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    def requests_for(self, filename, method="GET"):
        """Logged requests that fetched `filename` (resolve or CDN), in order."""
        found = []
        for req in list(self.log):
            if req.method != method:
                continue
            if req.path.endswith("/" + filename) and "/resolve/" in req.path:
                found.append(req)
            elif req.path.startswith("/cdn/"):
                sha = req.path.rsplit("/", 1)[-1]
                if self.blobs.get(sha, (None,))[0] == filename:
                    found.append(req)
        return found

    # -- serving ----------------------------------------------------------------------------

    def start(self):
        for _ in range(2):
            server = _Server(("127.0.0.1", 0), _Handler)
            server.hub = self
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
            self._servers.append(server)
        return self

    def stop(self):
        self.release.set()
        for server in self._servers:
            server.shutdown()
            server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        return f"http://127.0.0.1:{self._servers[0].server_address[1]}"

    @property
    def cdn_url(self):
        return f"http://127.0.0.1:{self._servers[1].server_address[1]}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that hangs up mid-response is what several tests do on purpose."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        """Keep test output clean; `LocalHub.log` records requests instead."""

    @property
    def hub(self):
        return self.server.hub

    def do_HEAD(self):
        self._route(head=True)

    def do_GET(self):
        self._route(head=False)

    # -- plumbing ---------------------------------------------------------------------------

    def _route(self, head):
        self.hub.log.append(Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        if path.startswith("/cdn/"):
            return self._cdn(path[len("/cdn/"):], head)
        if path.startswith("/api/"):
            return self._api(path[len("/api/"):], query)
        if "/resolve/" in path:
            return self._resolve(path, head)
        self._error(404, "", "Not found")

    def _send(self, status, headers, body=b"", head=False):
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, str(value))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, status, payload, headers=None):
        self._send(status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(payload).encode(),
                   head=self.command == "HEAD")

    def _error(self, status, code, message, headers=None):
        extra = {"X-Error-Message": message, **(headers or {})}
        if code:
            extra["X-Error-Code"] = code
        self._json(status, {"error": message}, extra)

    def _find_repo(self, repo_type, rest):
        """Split `rest` ("org/name/more...") into a known repo and the remainder."""
        for (kind, repo_id), repo in self.hub.repos.items():
            if kind == repo_type and (rest == repo_id or rest.startswith(repo_id + "/")):
                return repo, rest[len(repo_id) + 1:]
        return None, rest

    def _has_token(self):
        return self.headers.get("Authorization") == f"Bearer {GOOD_TOKEN}"

    def _check_visible(self, repo):
        """Answer as the Hub does when the repo is missing, private, or the token is wrong."""
        auth = self.headers.get("Authorization")
        if auth is not None and auth != f"Bearer {GOOD_TOKEN}":
            self._error(401, "", "Invalid credentials in Authorization header")
            return False
        if repo is None or (repo.access == "private" and not self._has_token()):
            self._error(401, "RepoNotFound", "Repository not found")
            return False
        return True

    # -- endpoints --------------------------------------------------------------------------

    def _api(self, rest, query):
        kind, _, rest = rest.partition("/")
        repo_type = {"models": "model", "datasets": "dataset", "spaces": "space"}.get(kind)
        repo, remainder = self._find_repo(repo_type, rest)
        if not self._check_visible(repo):
            return
        if remainder == "":
            revision = "main"
        elif remainder.startswith("revision/"):
            revision = unquote(remainder[len("revision/"):])
        elif remainder.startswith("tree/"):
            revision, _, folder = remainder[len("tree/"):].partition("/")
            return self._tree(repo, unquote(revision), unquote(folder), query)
        else:
            return self._error(404, "", "Not found")
        commit = repo.commit_for(revision)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        files = repo.commits[commit]
        self._json(
            200,
            {
                "id": repo.repo_id,
                "sha": commit,
                "private": repo.access == "private",
                "gated": "auto" if repo.access == "gated" else False,
                "siblings": [{"rfilename": p} for p in sorted(files)],
            },
        )

    def _tree(self, repo, revision, folder, query):
        commit = repo.commit_for(revision)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        prefix = folder + "/" if folder else ""
        entries, folders = [], set()
        for path, data in sorted(repo.commits[commit].items()):
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix):].split("/")
            if len(parts) > 1 and not recursive:
                folders.add(prefix + parts[0])
                continue
            folders.update(prefix + "/".join(parts[:i]) for i in range(1, len(parts)))
            entry = {"type": "file", "oid": git_blob_id(data), "size": len(data), "path": path}
            if path.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"oid": sha256(data), "size": len(data), "pointerSize": 134}
            entries.append(entry)
        dirs = [{"type": "directory", "oid": "0" * 40, "size": 0, "path": d} for d in sorted(folders)]
        self._json(200, dirs + entries)

    def _resolve(self, path, head):
        left, _, right = path.lstrip("/").partition("/resolve/")
        repo_type = "model"
        for kind, name in (("datasets/", "dataset"), ("spaces/", "space")):
            if left.startswith(kind):
                repo_type, left = name, left[len(kind):]
        repo, _ = self._find_repo(repo_type, left)
        if not self._check_visible(repo):
            return
        revision, _, filename = right.partition("/")
        revision, filename = unquote(revision), unquote(filename)
        commit = repo.commit_for(revision)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        if repo.access == "gated" and not self._has_token():
            return self._error(
                401, "GatedRepo", f"Access to model {repo.repo_id} is restricted. You must be authenticated."
            )
        files = repo.commits[commit]
        if filename not in files:
            return self._error(404, "EntryNotFound", "Entry not found", {"X-Repo-Commit": commit})
        data = files[filename]
        headers = {"X-Repo-Commit": commit, "Accept-Ranges": "bytes"}
        if filename.endswith(LFS_SUFFIXES):
            digest = sha256(data)
            headers.update(
                {
                    "ETag": f'"{git_blob_id(data)}"',
                    "X-Linked-Etag": f'"{digest}"',
                    "X-Linked-Size": len(data),
                    "Location": f"{self.hub.cdn_url}/cdn/{digest}",
                }
            )
            return self._send(302, headers, head=head)
        headers["ETag"] = f'"{git_blob_id(data)}"'
        self._content(filename, data, headers, head)

    def _cdn(self, digest, head):
        if digest not in self.hub.blobs:
            return self._error(404, "", "No such blob")
        filename, data = self.hub.blobs[digest]
        self._content(filename, data, {"ETag": f'"{digest}"', "Accept-Ranges": "bytes"}, head)

    def _content(self, filename, data, headers, head):
        """Send `data` honouring a `Range: bytes=N-` header, and any fault set for the file."""
        fault = None if head else self.hub._take_fault(filename)
        if fault is not None and fault.kind == "status":
            return self._error(fault.status, "", "Injected failure")
        if fault is not None and fault.kind == "corrupt":
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        start, status = 0, 200
        requested = self.headers.get("Range")
        if requested:
            start = int(requested.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                return self._send(416, {"Content-Range": f"bytes */{len(data)}"}, head=head)
            status = 206
            headers = {**headers, "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
        body = data[start:]
        if fault is None or fault.kind == "corrupt":
            return self._send(status, headers, body, head=head)
        # "drop" and "stall": promise the whole body, send part of it, then hang up.
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, str(value))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: fault.at])
        self.wfile.flush()
        if fault.kind == "stall":
            self.hub.stalled.set()
            self.hub.release.wait(timeout=60)
        self.close_connection = True
