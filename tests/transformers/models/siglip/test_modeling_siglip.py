"""SigLIP's vision tower: parity with HF transformers (with its attention-pooling head) on the
fixtures of tests/fixtures/make_gemma3_multimodal_fixtures.py, and both checkpoint layouts."""
import os
import tempfile

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

from mindnlp import core
from mindnlp.transformers import AutoModel, SiglipVisionConfig, SiglipVisionModel

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "gemma3_multimodal")
ATOL = 1e-4


@pytest.fixture(scope="module")
def expected():
    return dict(np.load(os.path.join(FIXTURES, "expected.npz")))


def run(model, expected):
    with core.no_grad():
        return model(core.tensor(expected["siglip_pixel_values"]))


def read(folder):
    with safe_open(os.path.join(folder, "model.safetensors"), "np") as f:
        return {key: f.get_tensor(key) for key in f.keys()}


def test_hidden_states_and_pooled_output_match_hf(expected):
    model = AutoModel.from_pretrained(os.path.join(FIXTURES, "siglip")).eval()
    assert isinstance(model, SiglipVisionModel)
    out = run(model, expected)
    np.testing.assert_allclose(out.last_hidden_state.numpy(), expected["siglip_last_hidden_state"], atol=ATOL)
    np.testing.assert_allclose(out.pooler_output.numpy(), expected["siglip_pooler_output"], atol=ATOL)


def test_saves_hf_layout_and_loads_the_nested_one(expected):
    model = SiglipVisionModel.from_pretrained(os.path.join(FIXTURES, "siglip")).eval()
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        saved = read(folder)
        assert set(saved) == set(read(os.path.join(FIXTURES, "siglip")))
        # checkpoints written before transformers 5 (the hub's) keep the modules under vision_model.
        save_file({f"vision_model.{key}": value for key, value in saved.items()},
                  os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
        older = SiglipVisionModel.from_pretrained(folder).eval()
    np.testing.assert_allclose(run(older, expected).pooler_output.numpy(), expected["siglip_pooler_output"],
                               atol=ATOL)


def test_hidden_states_and_attentions_per_layer(expected):
    config = SiglipVisionConfig(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2,
                                image_size=16, patch_size=4, vision_use_head=False)
    model = SiglipVisionModel(config).eval()
    config._attn_implementation = "eager"
    with core.no_grad():
        out = model(core.tensor(expected["siglip_pixel_values"]), output_hidden_states=True, output_attentions=True)
    assert out.pooler_output is None and not hasattr(model, "head")
    assert len(out.hidden_states) == 3 and tuple(out.attentions[0].shape) == (2, 2, 16, 16)
    np.testing.assert_allclose(out.attentions[1].sum(-1).numpy(), 1.0, rtol=1e-5)


def test_bad_inputs_and_configs_are_refused():
    with pytest.raises(ValueError, match="divisible"):
        SiglipVisionConfig(hidden_size=10, num_attention_heads=4)
    model = SiglipVisionModel(SiglipVisionConfig(hidden_size=8, intermediate_size=8, num_hidden_layers=1,
                                                 num_attention_heads=2, image_size=8, patch_size=4))
    with pytest.raises(ValueError, match="patches"):
        model(core.zeros(1, 3, 12, 12))
    with pytest.raises(NotImplementedError, match="interpolate_pos_encoding"):
        model(core.zeros(1, 3, 8, 8), interpolate_pos_encoding=True)
