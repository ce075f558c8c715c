"""`mindnlp download` against a local Hub: the real command, the real HTTP, no internet."""
import hashlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from huggingface_hub import hf_hub_download, try_to_load_from_cache

from mindnlp.cli import main
from mindnlp.transformers.utils.hub import cached_file

from .conftest import DATASET_FILES, MODEL_FILES, MODEL_V1_FILES, REPO_ROOT, SPACE_FILES, mindnlp_command
from .hub_server import GOOD_TOKEN


def files_under(root):
    """{relative path: bytes} of the files under `root`, following the cache's symlinks."""
    root = Path(root)
    found = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and not relative.startswith(".cache/"):
            found[relative] = path.read_bytes()
    return found


def repo_storage(hf_home, repo_id="tiny/model", kind="models"):
    return hf_home / "hub" / f"{kind}--{repo_id.replace('/', '--')}"


def leftovers(root):
    return sorted(p.name for p in Path(root).rglob("*.incomplete"))


def test_full_download_into_the_shared_cache(hub, hf_home, run):
    result = run("download", "tiny/model", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    storage = repo_storage(hf_home)
    commit = (storage / "refs" / "main").read_text()
    snapshot = storage / "snapshots" / commit
    assert result.stdout.strip().splitlines()[-1] == str(snapshot)
    assert files_under(snapshot) == MODEL_FILES
    # huggingface_hub's layout: each snapshot entry links to a blob named by its etag.
    weights = snapshot / "model.safetensors"
    assert weights.is_symlink()
    assert Path(os.readlink(weights)).name == hashlib.sha256(MODEL_FILES["model.safetensors"]).hexdigest()
    assert "4 files (4 fetched, 0 already present)" in result.stderr
    assert leftovers(storage) == []
    # Other HF tools find the files without any network access.
    assert try_to_load_from_cache("tiny/model", "config.json", cache_dir=hf_home / "hub") == str(
        snapshot / "config.json"
    )


def test_second_run_fetches_nothing(hub, hf_home, run):
    assert run("download", "tiny/model", "--endpoint", hub.url).returncode == 0
    hub.log.clear()

    result = run("download", "tiny/model", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert "(0 fetched, 4 already present)" in result.stderr
    assert [r for r in hub.log if "/resolve/" in r.path or r.path.startswith("/cdn/")] == []


def test_include_exclude_and_file_names(hub, hf_home, run):
    result = run("download", "tiny/model", "--include", "*.json", "--exclude", "tokenizer*", "--endpoint", hub.url)
    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == {"config.json": MODEL_FILES["config.json"]}

    result = run("download", "tiny/model", "docs/README.md", "model.safetensors", "--endpoint", hub.url, "-q")
    assert result.returncode == 0, result.stderr
    assert set(files_under(result.stdout.strip())) == {"config.json", "docs/README.md", "model.safetensors"}
    assert result.stderr == ""  # --quiet: only the path, on stdout


def test_revision_tag(hub, hf_home, run):
    result = run("download", "tiny/model", "--revision", "v1", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == MODEL_V1_FILES
    v1_commit = (repo_storage(hf_home) / "refs" / "v1").read_text()
    assert result.stdout.strip().endswith(v1_commit)


@pytest.mark.parametrize(
    "repo_type, files, url_prefix",
    [("dataset", DATASET_FILES, "/datasets/"), ("space", SPACE_FILES, "/spaces/")],
)
def test_dataset_and_space_repositories(hub, hf_home, run, repo_type, files, url_prefix):
    result = run("download", "tiny/data", "--repo-type", repo_type, "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == files
    assert repo_storage(hf_home, "tiny/data", repo_type + "s").is_dir()
    assert any(r.path.startswith(url_prefix + "tiny/data/resolve/") for r in hub.log)


def test_local_dir_is_reused_by_huggingface_hub(hub, hf_home, tmp_path, run):
    target = tmp_path / "tiny-model"

    result = run("download", "tiny/model", "--local-dir", str(target), "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(target)
    assert files_under(target) == MODEL_FILES
    assert not repo_storage(hf_home).exists()
    # huggingface_hub recognises the files through their metadata and fetches nothing.
    hub.log.clear()
    path = hf_hub_download("tiny/model", "model.safetensors", local_dir=target, endpoint=hub.url)
    assert Path(path) == target / "model.safetensors"
    assert hub.requests_for("model.safetensors") == []


def test_dry_run_lists_without_downloading(hub, hf_home, run):
    assert run("download", "tiny/model", "config.json", "--endpoint", hub.url, "-q").returncode == 0
    hub.log.clear()

    result = run("download", "tiny/model", "--dry-run", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    lines = {line.split()[-1]: line for line in result.stdout.splitlines() if line.startswith("  ")}
    assert set(lines) == set(MODEL_FILES)
    assert "present" in lines["config.json"]
    assert "fetch" in lines["model.safetensors"] and "512.0 KiB" in lines["model.safetensors"]
    assert "would fetch 3 files" in result.stdout
    assert [r for r in hub.log if "/resolve/" in r.path] == []
    assert not (repo_storage(hf_home) / "snapshots").joinpath("x").exists()
    commit = (repo_storage(hf_home) / "refs" / "main").read_text()
    assert set(files_under(repo_storage(hf_home) / "snapshots" / commit)) == {"config.json"}


def test_dropped_connection_resumes_with_a_range_request(hub, hf_home, run):
    hub.inject("model.safetensors", "drop", at=100_000)

    result = run("download", "tiny/model", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == MODEL_FILES
    gets = hub.requests_for("model.safetensors")
    cdn_gets = [r for r in gets if r.path.startswith("/cdn/")]
    assert [r.headers.get("range") for r in cdn_gets] == [None, "bytes=100000-"]


def small_files_done(hf_home):
    """True when every file but the stalled weights sits complete in a snapshot."""
    snapshots = repo_storage(hf_home) / "snapshots"
    folders = list(snapshots.iterdir()) if snapshots.is_dir() else []
    return any(all((folder / name).is_file() for name in MODEL_FILES if name != "model.safetensors")
               for folder in folders)


def test_killed_download_resumes_in_the_next_run(hub, hf_home, run):
    hub.inject("model.safetensors", "stall", at=200_000)
    process = subprocess.Popen(
        mindnlp_command("download", "tiny/model", "--endpoint", hub.url),
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    blobs = repo_storage(hf_home) / "blobs"
    partial = blobs / (hashlib.sha256(MODEL_FILES["model.safetensors"]).hexdigest() + ".incomplete")
    try:
        assert hub.stalled.wait(timeout=60)
        deadline = time.monotonic() + 60
        # Kill only once the small files are complete, so the resumed run must skip them.
        while time.monotonic() < deadline and not (
            partial.is_file() and partial.stat().st_size >= 200_000 and small_files_done(hf_home)
        ):
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    kept = partial.stat().st_size
    assert kept == 200_000
    commit = (repo_storage(hf_home) / "refs" / "main").read_text()
    assert not (repo_storage(hf_home) / "snapshots" / commit / "model.safetensors").exists()
    hub.log.clear()

    result = run("download", "tiny/model", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == MODEL_FILES
    cdn_gets = [r for r in hub.requests_for("model.safetensors") if r.path.startswith("/cdn/")]
    assert [r.headers.get("range") for r in cdn_gets] == [f"bytes={kept}-"]
    # Files completed before the kill are not fetched again.
    assert hub.requests_for("config.json") == []
    assert leftovers(repo_storage(hf_home)) == []


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupt_keeps_the_partial_file_for_the_next_run(hub, hf_home):
    hub.inject("model.safetensors", "stall", at=100_000, times=None)
    process = subprocess.Popen(
        mindnlp_command("download", "tiny/model", "--endpoint", hub.url, "-q"),
        cwd=REPO_ROOT,
        stderr=subprocess.PIPE,
        text=True,
        # A short read timeout, so that the worker blocked on the stalled server notices soon.
        env={**os.environ, "HF_HUB_DOWNLOAD_TIMEOUT": "3"},
        # A test run started as a background job inherits an ignored SIGINT, which Python then
        # keeps ignoring: the download would never see the interrupt this test sends.
        preexec_fn=_default_sigint,
    )
    partial = repo_storage(hf_home) / "blobs" / (
        hashlib.sha256(MODEL_FILES["model.safetensors"]).hexdigest() + ".incomplete"
    )
    try:
        assert hub.stalled.wait(timeout=60)
        deadline = time.monotonic() + 60
        while not (partial.is_file() and partial.stat().st_size >= 100_000) and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()

    assert process.returncode == 130, stderr
    assert "run the same command again to resume" in stderr
    assert partial.stat().st_size >= 100_000
    commit = (repo_storage(hf_home) / "refs" / "main").read_text()
    assert not (repo_storage(hf_home) / "snapshots" / commit / "model.safetensors").exists()


def test_transient_server_errors_are_retried(hub, hf_home, run):
    hub.inject("config.json", "status", status=503, times=2)

    result = run("download", "tiny/model", "config.json", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert len(hub.requests_for("config.json")) == 3


def test_corrupted_file_is_detected_and_never_installed(hub, hf_home, run):
    hub.inject("model.safetensors", "corrupt", times=None)

    result = run("download", "tiny/model", "--endpoint", hub.url)

    assert result.returncode == 9, result.stderr
    assert "model.safetensors" in result.stderr and "sha256" in result.stderr
    storage = repo_storage(hf_home)
    commit = (storage / "refs" / "main").read_text()
    snapshot = storage / "snapshots" / commit
    assert not (snapshot / "model.safetensors").exists()
    assert not (storage / "blobs" / hashlib.sha256(MODEL_FILES["model.safetensors"]).hexdigest()).exists()
    assert leftovers(storage) == []
    # The good files of the same run are in place.
    assert (snapshot / "config.json").read_bytes() == MODEL_FILES["config.json"]


def test_stale_partial_file_is_refetched_from_scratch(hub, hf_home, run):
    blobs = repo_storage(hf_home) / "blobs"
    blobs.mkdir(parents=True)
    digest = hashlib.sha256(MODEL_FILES["model.safetensors"]).hexdigest()
    (blobs / f"{digest}.incomplete").write_bytes(b"not the right bytes" * 100)

    result = run("download", "tiny/model", "model.safetensors", "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == {"model.safetensors": MODEL_FILES["model.safetensors"]}
    cdn_gets = [r for r in hub.requests_for("model.safetensors") if r.path.startswith("/cdn/")]
    assert [r.headers.get("range") for r in cdn_gets] == ["bytes=1900-", None]


def test_endpoint_fallback_when_the_first_is_down(hub, hf_home, run, dead_endpoint):
    result = run("download", "tiny/model", "--endpoint", dead_endpoint, "--endpoint", hub.url)

    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == MODEL_FILES


def test_endpoint_fallback_when_a_mirror_lacks_the_repo(hub, hf_home, run):
    from .hub_server import LocalHub

    with LocalHub() as empty_mirror:
        result = run("download", "tiny/model", "--endpoint", empty_mirror.url, "--endpoint", hub.url)
    assert result.returncode == 0, result.stderr
    assert files_under(result.stdout.strip()) == MODEL_FILES


def test_hf_endpoint_variable_is_used_without_flags_and_flags_win(hub, hf_home, run, dead_endpoint):
    result = run("download", "tiny/model", "config.json", env={"HF_ENDPOINT": hub.url})
    assert result.returncode == 0, result.stderr

    result = run("download", "tiny/model", "--endpoint", hub.url, env={"HF_ENDPOINT": dead_endpoint})
    assert result.returncode == 0, result.stderr


def test_network_unreachable(hf_home, run, dead_endpoint):
    result = run("download", "tiny/model", "--endpoint", dead_endpoint)

    assert result.returncode == 7
    assert "cannot reach" in result.stderr


def test_offline_mode_is_reported_as_unreachable(hub, hf_home, run):
    result = run("download", "tiny/model", "--endpoint", hub.url, env={"HF_HUB_OFFLINE": "1"})

    assert result.returncode == 7
    assert "offline" in result.stderr
    assert hub.log == []


def test_repository_not_found(hub, hf_home, run):
    result = run("download", "tiny/missing", "--endpoint", hub.url)
    assert result.returncode == 3
    assert "not found" in result.stderr

    # A model repo and a dataset repo of the same name are different repos.
    result = run("download", "tiny/data", "--endpoint", hub.url)
    assert result.returncode == 3


def test_private_repository_needs_a_token(hub, hf_home, run):
    result = run("download", "tiny/private", "--endpoint", hub.url)
    assert result.returncode == 3
    assert "--token" in result.stderr

    result = run("download", "tiny/private", "--endpoint", hub.url, "--token", GOOD_TOKEN)
    assert result.returncode == 0, result.stderr

    result = run("download", "tiny/private", "--endpoint", hub.url, "--cache-dir", str(hf_home / "other"),
                 env={"HF_TOKEN": GOOD_TOKEN})
    assert result.returncode == 0, result.stderr
    # The token goes to the Hub endpoint only, never to the CDN an LFS file redirects to.
    cdn = [r for r in hub.log if r.path.startswith("/cdn/")]
    assert cdn and all("authorization" not in r.headers for r in cdn)


def test_refused_token_is_unauthorised(hub, hf_home, run):
    result = run("download", "tiny/model", "--endpoint", hub.url, "--token", "hf_wrong")

    assert result.returncode == 4
    assert "access refused" in result.stderr


def test_gated_repository(hub, hf_home, run):
    result = run("download", "tiny/gated", "--endpoint", hub.url)

    assert result.returncode == 4
    assert "gated" in result.stderr
    assert leftovers(repo_storage(hf_home, "tiny/gated")) == []


def test_revision_not_found(hub, hf_home, run):
    result = run("download", "tiny/model", "--revision", "v9", "--endpoint", hub.url)

    assert result.returncode == 5
    assert "revision" in result.stderr


def test_no_file_matched(hub, hf_home, run):
    result = run("download", "tiny/model", "--include", "*.gguf", "--endpoint", hub.url)
    assert result.returncode == 6
    assert "*.gguf" in result.stderr

    result = run("download", "tiny/model", "pytorch_model.bin", "--endpoint", hub.url)
    assert result.returncode == 6
    assert "pytorch_model.bin" in result.stderr


def test_disk_full_is_detected_before_writing(hub, hf_home, monkeypatch, capsys):
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))

    code = main(["download", "tiny/model", "--endpoint", hub.url])

    assert code == 8
    assert "free" in capsys.readouterr().err
    assert hub.requests_for("model.safetensors") == []


def _tiny_filesystem_command(mount_point, size, script):
    """`sh -c script` with a tmpfs of `size` mounted on `mount_point`, in a private mount
    namespace (no privilege needed, nothing visible outside the command)."""
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True
    ) if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip("needs unshare with user namespaces to mount a small filesystem")
    mount_point.mkdir()
    return [
        "unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
        f"mount -t tmpfs -o size={size} tmpfs {mount_point} && {script}",
    ]


def test_disk_too_small_is_reported_before_downloading(hub, hf_home, tmp_path):
    small = tmp_path / "small"
    download = " ".join(mindnlp_command("download", "tiny/model", "--cache-dir", str(small), "--endpoint", hub.url))
    command = _tiny_filesystem_command(small, "256k", download)

    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)

    assert result.returncode == 8, result.stderr
    assert "free" in result.stderr
    assert hub.requests_for("model.safetensors") == []


def test_disk_filling_up_during_a_transfer(hub, hf_home, tmp_path):
    small, filled = tmp_path / "small", tmp_path / "filled"
    partial = small / "models--tiny--model" / "blobs" / (
        hashlib.sha256(MODEL_FILES["model.safetensors"]).hexdigest() + ".incomplete"
    )
    download = " ".join(mindnlp_command("download", "tiny/model", "--cache-dir", str(small), "--endpoint", hub.url))
    # Start the download; once the weights file has begun, fill the disk behind its back.
    script = (
        f"{download} & pid=$!; "
        f"while [ ! -s {partial} ]; do sleep 0.05; done; "
        f"head -c 700000 /dev/zero > {small}/filler; touch {filled}; wait $pid"
    )
    hub.inject("model.safetensors", "stall", at=100_000)
    process = subprocess.Popen(
        _tiny_filesystem_command(small, "1m", script), cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not filled.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert filled.exists()
        hub.release.set()
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()

    assert process.returncode == 8, stderr
    assert "disk full" in stderr


def test_mirror_names_and_endpoints_form_one_ordered_list():
    from mindnlp.cli import build_parser

    args = build_parser().parse_args(
        ["download", "x/y", "--endpoint", "http://127.0.0.1:1/", "--mirror", "hf-mirror", "--mirror", "huggingface"]
    )
    assert args.endpoints == ["http://127.0.0.1:1", "https://hf-mirror.com", "https://huggingface.co"]


def test_unknown_mirror_is_a_usage_error(hf_home, run):
    result = run("download", "tiny/model", "--mirror", "nowhere")

    assert result.returncode == 2
    assert "unknown mirror" in result.stderr


@pytest.mark.parametrize("local_files_only", [False, True])
def test_cached_file_finds_what_was_downloaded(hub, hf_home, run, local_files_only):
    result = run("download", "tiny/model", "--endpoint", hub.url, "-q")
    assert result.returncode == 0, result.stderr
    hub.log.clear()

    path = cached_file(
        "tiny/model",
        "config.json",
        endpoint=hub.url,
        cache_dir=hf_home / "hub",
        local_files_only=local_files_only,
    )

    assert Path(path) == Path(result.stdout.strip()) / "config.json"
    assert Path(path).read_bytes() == MODEL_FILES["config.json"]
    assert hub.requests_for("config.json") == []


def test_cached_file_downloads_through_a_mirror_url(hub, hf_home):
    path = cached_file("tiny/model", "config.json", mirror=hub.url, cache_dir=hf_home / "hub")

    assert Path(path).read_bytes() == MODEL_FILES["config.json"]
    assert len(hub.requests_for("config.json")) == 1
