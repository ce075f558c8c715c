"""Gemma 3 image-text model: parity with HF transformers on the fixtures of
tests/fixtures/make_gemma3_multimodal_fixtures.py, the checkpoint layout HF writes, and the
errors of inputs that do not fit."""
import os
import tempfile

import numpy as np
import pytest
from safetensors import safe_open

from mindnlp import core
from mindnlp.transformers import (AutoConfig, AutoModel, AutoModelForCausalLM, AutoModelForImageTextToText,
                                  Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ForSequenceClassification,
                                  Gemma3Model, Gemma3TextConfig, SiglipVisionConfig)
from mindnlp.transformers.models.gemma3.modeling_gemma3 import image_block_ids

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "gemma3_multimodal")
ATOL = 1e-4


@pytest.fixture(scope="module")
def expected():
    return dict(np.load(os.path.join(FIXTURES, "expected.npz")))


@pytest.fixture(scope="module")
def model():
    return Gemma3ForConditionalGeneration.from_pretrained(os.path.join(FIXTURES, "model")).eval()


def inputs(expected, *names):
    return {name: core.tensor(expected[name]) for name in names}


def assert_close_where_attended(logits, theirs, expected):
    """Padding positions attend to nothing; what a model writes there is no output."""
    kept = expected["attention_mask"].astype(bool)
    np.testing.assert_allclose(logits.numpy()[kept], theirs[kept], atol=ATOL)


def checkpoint_keys(folder):
    with safe_open(os.path.join(folder, "model.safetensors"), "np") as f:
        return set(f.keys())


def test_logits_loss_and_image_features_match_hf(model, expected):
    with core.no_grad():
        out = model(**inputs(expected, "input_ids", "attention_mask", "token_type_ids", "pixel_values", "labels"))
    assert_close_where_attended(out.logits, expected["logits"], expected)
    np.testing.assert_allclose(out.image_hidden_states.numpy(), expected["image_features"], atol=ATOL)
    assert abs(out.loss.item() - expected["loss"].item()) < ATOL


def test_without_token_type_ids_images_attend_causally(model, expected):
    with core.no_grad():
        logits = model(**inputs(expected, "input_ids", "attention_mask", "pixel_values")).logits
    assert_close_where_attended(logits, expected["logits_no_token_types"], expected)
    # the image tokens' bidirectional attention changes the outputs
    assert np.abs(expected["logits_no_token_types"] - expected["logits"]).max() > 1e-3


def test_greedy_generation_matches_hf(model, expected):
    generated = model.generate(**inputs(expected, "input_ids", "attention_mask", "token_type_ids", "pixel_values"),
                               max_new_tokens=6, do_sample=False)
    np.testing.assert_array_equal(generated.numpy(), expected["greedy"])


def test_saved_checkpoint_has_hf_layout(model):
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        assert checkpoint_keys(folder) == checkpoint_keys(os.path.join(FIXTURES, "model"))
        reloaded = AutoModelForImageTextToText.from_pretrained(folder)
    assert isinstance(reloaded, Gemma3ForConditionalGeneration)
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(reloaded.state_dict()[name].numpy(), value.numpy())


def test_checkpoint_with_nested_siglip_tower_loads(model, expected):
    """Checkpoints written before transformers 5 (the hub's Gemma 3 ones) keep the tower's
    modules under `vision_tower.vision_model.`."""
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        with safe_open(os.path.join(folder, "model.safetensors"), "np") as f:
            tensors = {key.replace("vision_tower.", "vision_tower.vision_model.", 1): f.get_tensor(key)
                       for key in f.keys()}
        from safetensors.numpy import save_file
        save_file(tensors, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
        older = Gemma3ForConditionalGeneration.from_pretrained(folder).eval()
    with core.no_grad():
        features = older.get_image_features(core.tensor(expected["pixel_values"])).pooler_output
    np.testing.assert_allclose(features.numpy(), expected["image_features"], atol=ATOL)


def test_auto_classes_and_config_round_trip():
    config = AutoConfig.from_pretrained(os.path.join(FIXTURES, "model"))
    assert isinstance(config, Gemma3Config) and isinstance(config.text_config, Gemma3TextConfig)
    assert isinstance(config.vision_config, SiglipVisionConfig) and not config.vision_config.vision_use_head
    assert config.image_token_id == config.image_token_index == 5
    again = Gemma3Config(**{k: v for k, v in config.to_dict().items() if k != "model_type"})
    assert again.to_dict() == config.to_dict()
    assert isinstance(AutoModel.from_config(config), Gemma3Model)
    assert isinstance(AutoModelForCausalLM.from_config(config), Gemma3ForConditionalGeneration)
    with pytest.raises(TypeError, match="SiglipVisionConfig or a dict"):
        Gemma3Config(vision_config=config.text_config)


def test_each_run_of_image_tokens_is_one_image():
    ids = image_block_ids(core.tensor([[1, 1, 0, 1, 1, 0], [0, 1, 1, 1, 0, 0]]))
    assert ids.tolist() == [[0, 0, -1, 1, 1, -1], [-1, 0, 0, 0, -1, -1]]


def test_image_token_and_image_count_must_agree(model, expected):
    ids = core.tensor(expected["input_ids"])
    with pytest.raises(ValueError, match="Image features and image tokens do not match"):
        model(input_ids=ids, pixel_values=core.tensor(expected["pixel_values"][:1]))


def test_sequence_classification_reads_last_token(expected):
    config = Gemma3Config.from_pretrained(os.path.join(FIXTURES, "model"), num_labels=3)
    classifier = Gemma3ForSequenceClassification(config).eval()
    with core.no_grad():
        out = classifier(**inputs(expected, "input_ids", "attention_mask", "token_type_ids", "pixel_values"),
                         labels=core.tensor([0, 2]))
    assert tuple(out.logits.shape) == (2, 3) and out.loss.item() > 0


def test_projector_needs_enough_patches():
    config = Gemma3Config(text_config=dict(vocab_size=16, hidden_size=8, intermediate_size=8, num_hidden_layers=1,
                                           num_attention_heads=1, num_key_value_heads=1, head_dim=8),
                          vision_config=dict(hidden_size=8, intermediate_size=8, num_hidden_layers=1,
                                             num_attention_heads=1, image_size=8, patch_size=4),
                          mm_tokens_per_image=16)
    with pytest.raises(ValueError, match="patches per side"):
        Gemma3Model(config)


def test_nested_vision_tower_initialises_by_its_own_rules():
    """Built on the meta device then initialised, the SigLIP tower's modules get SigLIP's
    initialisation (its position ids, its zero attention biases), not the text model's."""
    config = Gemma3Config.from_pretrained(os.path.join(FIXTURES, "model"))
    with core.device("meta"):
        model = Gemma3Model(config)
    model.to_empty(device="cpu")
    model.init_weights()
    embeddings = model.vision_tower.embeddings
    assert embeddings.position_ids.tolist() == [list(range(embeddings.num_patches))]
    attention = model.vision_tower.encoder.layers[0].self_attn
    assert not attention.q_proj.bias.any() and attention.q_proj.weight.std().item() > 0.05


def test_untied_head_follows_the_outer_config():
    """`tie_word_embeddings` of the image-text config decides, as in HF; an untied head is saved
    under HF's `language_model.lm_head`."""
    config = Gemma3Config.from_pretrained(os.path.join(FIXTURES, "model"))
    config.tie_word_embeddings = False
    model = Gemma3ForConditionalGeneration(config)
    assert model.lm_head.weight is not model.get_input_embeddings().weight
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        keys = checkpoint_keys(folder)
        reloaded = Gemma3ForConditionalGeneration.from_pretrained(folder)
    assert keys == checkpoint_keys(os.path.join(FIXTURES, "model")) | {"language_model.lm_head.weight"}
    np.testing.assert_array_equal(reloaded.lm_head.weight.detach().numpy(), model.lm_head.weight.detach().numpy())
