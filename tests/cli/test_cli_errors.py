"""Every command turns a mistake into one line on stderr and the exit code of its kind.

Each case runs `python -m mindnlp ...` as a user would and checks the exit code, that stderr
is one line starting with "error:", and that no traceback is printed (unless asked for).
The network cases run against servers on 127.0.0.1 that refuse, stall, or answer 404, 401,
403 and 500.
"""
import json
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mindnlp.hub import HubUnreachableError, RepoNotFoundError
from mindnlp.transformers import AutoConfig, AutoTokenizer

from .conftest import REPO_ROOT, mindnlp_command

FIXTURES = REPO_ROOT / "tests" / "fixtures"
GPT2_DIR = FIXTURES / "gpt2" / "gpt2" / "model"
LLAMA_DIR = FIXTURES / "text_generation" / "llama_chat"
ROBERTA_DIR = FIXTURES / "encoders" / "roberta" / "checkpoint"
DISTILBERT_DIR = FIXTURES / "encoders" / "distilbert" / "checkpoint"
# Short bounds so the unreachable cases take about a second each.
FAST_RETRIES = {"MINDNLP_HUB_RETRIES": "1", "MINDNLP_HUB_TIMEOUT": "0.5"}


def one_error_line(result, code):
    """Assert the command failed with `code` and said so in exactly one line; return it."""
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture
def broken_checkpoints(tmp_path):
    """Copies of the GPT-2 fixture, each damaged in one way a user meets."""
    made = {}
    for name in ("corrupt_config", "truncated_weights", "unknown_type", "no_weights", "untrained_head"):
        source = LLAMA_DIR if name == "untrained_head" else GPT2_DIR
        made[name] = shutil.copytree(source, tmp_path / name)
    (made["corrupt_config"] / "config.json").write_text('{"model_type": "gpt2", ')
    weights = made["truncated_weights"] / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:3000])
    config = json.loads((GPT2_DIR / "config.json").read_text())
    (made["unknown_type"] / "config.json").write_text(json.dumps(dict(config, model_type="nosuchmodel")))
    (made["no_weights"] / "model.safetensors").unlink()
    # Untied, the LM head has no weights in the checkpoint and would start random.
    config = json.loads((LLAMA_DIR / "config.json").read_text())
    (made["untrained_head"] / "config.json").write_text(json.dumps(dict(config, tie_word_embeddings=False)))
    return made


@pytest.mark.parametrize("case, command, code, says", [
    ("missing", ["embed", "/tmp/no/such/model", "hi"], 3, "is not a folder, and not a valid Hub repo id"),
    ("corrupt_config", ["embed", "{corrupt_config}", "hi"], 10, "config.json is not valid JSON"),
    ("truncated", ["generate", "{truncated_weights}", "--prompt", "hi"], 10, "model.safetensors is truncated"),
    ("unknown_type", ["embed", "{unknown_type}", "hi"], 10, "unknown model_type 'nosuchmodel'"),
    ("no_weights", ["embed", "{no_weights}", "hi"], 6, "does not appear to have a file named model.safetensors"),
    ("empty_prompt", ["generate", str(GPT2_DIR), "--prompt", ""], 2, "--prompt is empty"),
    ("zero_temperature", ["generate", str(GPT2_DIR), "--prompt", "a", "--temperature", "0", "--do-sample"], 2,
     "--temperature must be above 0"),
    ("invalid_repo_id", ["download", "not a/valid//id"], 3, "is not a valid Hub repo id"),
    ("unknown_mirror", ["embed", str(GPT2_DIR), "hi", "--mirror", "nowhere"], 2, "unknown mirror 'nowhere'"),
    ("encoder", ["generate", str(ROBERTA_DIR), "--prompt", "hi"], 11, "attends in both directions"),
    ("no_causal_lm", ["generate", str(DISTILBERT_DIR), "--prompt", "hi"], 11, "has no causal or sequence-to-sequence language-model head"),
    ("untrained_head", ["generate", "{untrained_head}", "--prompt", "hi"], 11,
     "no trained language-model head for LlamaForCausalLM (missing from the checkpoint: lm_head.weight)"),
])
def test_a_mistake_is_one_line_and_an_exit_code(case, command, code, says, broken_checkpoints, run):
    command = [part.format(**broken_checkpoints) for part in command]
    line = one_error_line(run(*command), code)
    assert says in line


def test_debug_flag_and_variable_show_the_traceback(run):
    for result in (run("--debug", "embed", "/tmp/no/such/model", "hi"),
                   run("embed", "/tmp/no/such/model", "hi", "--debug"),
                   run("embed", "/tmp/no/such/model", "hi", env={"MINDNLP_DEBUG": "1"})):
        assert result.returncode == 1
        assert "Traceback (most recent call last)" in result.stderr
        assert "RepoNotFoundError: /tmp/no/such/model is not a folder" in result.stderr


def test_output_piped_into_head_ends_quietly(hf_home):
    """`head` stops reading after a few bytes; the rest of a large output must not become a
    BrokenPipeError traceback."""
    texts = [f"sentence number {i}" for i in range(400)]  # about 150 KB of JSON, more than a pipe holds
    command = " ".join(mindnlp_command("embed", str(DISTILBERT_DIR), *texts))
    result = subprocess.run(f"{command} | head -c 20; exit ${{PIPESTATUS[0]}}", shell=True, executable="/bin/bash",
                            capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.stdout.startswith("[[")
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr and "error" not in result.stderr
    assert result.returncode == 141


# -- the hub, unreachable or refusing -------------------------------------------------------


class _Answer(BaseHTTPRequestHandler):
    """Answers every request with the server's status (and X-Error-Code), or never answers."""

    def _reply(self):
        if self.server.status is None:
            self.server.release.wait(30)
            return
        self.send_response(self.server.status)
        if self.server.error_code:
            self.send_header("X-Error-Code", self.server.error_code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _reply

    def log_message(self, *args):
        pass


@pytest.fixture
def answering():
    """answering(status, error_code=None) -> URL of a local server giving that answer;
    status None for a server that accepts connections and never answers."""
    servers = []

    def start(status, error_code=None):
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
        server.daemon_threads = True
        server.status, server.error_code, server.release = status, error_code, threading.Event()
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.release.set()
        server.shutdown()
        server.server_close()


NETWORK_CASES = [
    ("repo_not_found", (404, "RepoNotFound"), 3, "has no repository of that name"),
    ("bare_404", (404, None), 3, "has no repository of that name"),
    ("unauthorized", (401, None), 4, "refused access to someone/model (HTTP 401): it is private or gated"),
    ("forbidden", (403, None), 4, "refused access to someone/model (HTTP 403)"),
    ("gated", (401, "GatedRepo"), 4, "is a gated repository"),
    ("server_error", (500, None), 7, "answered HTTP 500"),
    ("stalled", (None,), 7, "cannot reach the Hub endpoint"),
    ("refused", "dead", 7, "cannot reach the Hub endpoint"),
]


@pytest.mark.parametrize("command", ["embed", "generate"])
@pytest.mark.parametrize("case, answer, code, says", NETWORK_CASES, ids=[c[0] for c in NETWORK_CASES])
def test_hub_failures_name_the_problem_and_the_endpoint(command, case, answer, code, says, answering, dead_endpoint,
                                                        run):
    endpoint = dead_endpoint if answer == "dead" else answering(*answer)
    args = ["--prompt", "hi"] if command == "generate" else ["hi"]
    started = time.monotonic()
    result = run(command, "someone/model", "--endpoint", endpoint, *args, env=FAST_RETRIES)
    elapsed = time.monotonic() - started
    line = one_error_line(result, code)
    assert says in line and endpoint in line
    if code == 4:
        assert "HF_TOKEN" in line
    if code == 7:
        assert "2 tries" in line and "MINDNLP_HUB_RETRIES=1" in line
    assert elapsed < 20


def test_offline_fails_at_once_naming_the_cache(hf_home, run):
    for command in (["embed", "someone/model", "hi"], ["generate", "someone/model", "--prompt", "hi"]):
        started = time.monotonic()
        line = one_error_line(run(*command, env={"HF_HUB_OFFLINE": "1"}), 7)
        assert time.monotonic() - started < 20
        assert "offline (HF_HUB_OFFLINE=1)" in line and str(hf_home / "hub") in line
        assert "someone/model (revision main) is not in the cache" in line


@pytest.mark.parametrize("load", [AutoConfig.from_pretrained, AutoTokenizer.from_pretrained],
                         ids=["config_first", "tokenizer_first"])
def test_the_same_error_whichever_file_is_asked_for_first(load, hf_home, dead_endpoint, monkeypatch):
    monkeypatch.setenv("MINDNLP_HUB_RETRIES", "0")
    with pytest.raises(HubUnreachableError, match=f"cannot reach the Hub endpoint {dead_endpoint}"):
        load("someone/model", endpoint=dead_endpoint)
    with pytest.raises(RepoNotFoundError, match="not a valid Hub repo id"):
        load("/tmp/no/such/model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachableError, match="offline .* someone/model .* is not in the cache"):
        load("someone/model")


def test_a_cached_model_loads_when_the_endpoint_is_down(hf_home, dead_endpoint, monkeypatch):
    from .hub_server import LocalHub

    files = {path.name: path.read_bytes() for path in GPT2_DIR.iterdir()}
    with LocalHub() as hub:
        hub.add_repo("tiny/gpt2", files)
        AutoConfig.from_pretrained("tiny/gpt2", endpoint=hub.url)
        # Cached at the commit the endpoint names: one HEAD request, no second one, no GET.
        hub.log.clear()
        AutoConfig.from_pretrained("tiny/gpt2", endpoint=hub.url)
        assert [(r.method, r.path.rsplit("/", 1)[-1]) for r in hub.log] == [("HEAD", "config.json")]
    monkeypatch.setenv("MINDNLP_HUB_RETRIES", "0")
    assert AutoConfig.from_pretrained("tiny/gpt2", endpoint=dead_endpoint).model_type == "gpt2"


def test_help_lists_every_exit_code(run):
    result = run("--help")
    assert result.returncode == 0
    for code in range(1, 12):
        assert f"\n  {code}  " in result.stdout or f"  {code}  " in result.stdout, code


def test_a_traceback_free_failure_in_process(capsys):
    from mindnlp.cli import main

    assert main(["embed", "/tmp/no/such/model", "hi"]) == 3
    assert capsys.readouterr().err.startswith("error: /tmp/no/such/model is not a folder")
    assert sys.exc_info() == (None, None, None)
