"""`mindnlp env`, `mindnlp --help`, `python -m mindnlp`, and importing without side effects."""
import subprocess
import sys

from .conftest import REPO_ROOT

import mindnlp


def test_help_lists_the_commands(run):
    result = run("--help")

    assert result.returncode == 0
    assert "download" in result.stdout and "env" in result.stdout


def test_no_command_prints_usage_and_fails(run):
    result = run()

    assert result.returncode == 2
    assert "download" in result.stderr


def test_version(run):
    result = run("--version")

    assert result.returncode == 0
    assert result.stdout.strip() == f"mindnlp {mindnlp.__version__}"


def test_env_reports_versions_cache_and_endpoint(hf_home, run):
    import huggingface_hub

    result = run("env", env={"HF_ENDPOINT": "http://127.0.0.1:9/"})

    assert result.returncode == 0, result.stderr
    report = dict(line.split(":", 1) for line in result.stdout.splitlines())
    report = {key: value.strip() for key, value in report.items()}
    assert report["mindnlp"] == mindnlp.__version__
    assert report["huggingface_hub"] == huggingface_hub.__version__
    assert report["python"].startswith(".".join(map(str, sys.version_info[:3])))
    assert report["hub cache"] == str(hf_home / "hub")
    assert report["endpoint"] == "http://127.0.0.1:9 (from HF_ENDPOINT)"
    assert report["token"] == "not set"
    # "cpu" first once the tensor core imports; until then the report says why it cannot tell.
    assert report["backends"].startswith(("cpu", "unknown (mindnlp.core"))
    assert "default dtype" in report
    import numba
    import scipy

    assert report["numba"] == numba.__version__ and report["scipy"] == scipy.__version__
    assert "threads in use" in report["cpu"] and "features:" in report["cpu"]


def test_importing_mindnlp_leaves_the_environment_alone():
    code = (
        "import os; before = dict(os.environ)\n"
        "import mindnlp, mindnlp.hub, mindnlp.cli, mindnlp.download, mindnlp.transformers.utils.hub\n"
        "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)

    assert result.returncode == 0, result.stderr
