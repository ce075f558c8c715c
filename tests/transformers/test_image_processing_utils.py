"""Image processors: parity with HF transformers' PIL-backed SigLIP processor on the fixtures of
tests/fixtures/make_image_processing_fixtures.py, the inputs they take, their files, and the
errors of inputs they cannot take."""
import json
import os
import sys

import numpy as np
import PIL.Image
import pytest

from mindnlp import core
from mindnlp.transformers import AutoImageProcessor, BaseImageProcessor, Gemma3ImageProcessor, SiglipImageProcessor

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "image_processing")
ATOL = 1e-6


@pytest.fixture(scope="module")
def expected():
    return dict(np.load(os.path.join(FIXTURES, "expected.npz")))


@pytest.fixture(scope="module")
def images():
    names = ("wide.png", "tall_rgba.png", "gray.png")
    return [PIL.Image.open(os.path.join(FIXTURES, "images", name)) for name in names]


@pytest.fixture(scope="module")
def siglip():
    return SiglipImageProcessor.from_pretrained(os.path.join(FIXTURES, "siglip"))


def assert_matches(out, expected, case):
    fields = sorted(key[len(case) + 1:] for key in expected if key.startswith(case + "."))
    assert sorted(out) == fields
    for field in fields:
        np.testing.assert_allclose(np.asarray(out[field]), expected[f"{case}.{field}"], atol=ATOL, rtol=0)


def test_pil_images_match_hf(siglip, images, expected):
    """RGB, RGBA (composited onto white) and grayscale PNGs, bicubic resizing."""
    assert_matches(siglip(images, return_tensors="np"), expected, "siglip_pil")


@pytest.mark.parametrize("case", ["hwc_uint8", "chw_float", "batch_uint8"])
def test_arrays_match_hf(siglip, expected, case):
    """Channels last or first, uint8 or float in [0, 1], one image or a 4-D stack."""
    assert_matches(siglip(expected[case], return_tensors="np"), expected, f"siglip_{case}")


def test_nested_lists_and_call_overrides_match_hf(siglip, images, expected):
    out = siglip([[images[0]], [images[2]]], resample=PIL.Image.BILINEAR, do_normalize=False, return_tensors="np")
    assert_matches(out, expected, "siglip_bilinear_no_normalize")


def test_tensors_lists_and_channel_layouts(siglip, expected):
    image = expected["hwc_uint8"]
    reference = siglip(image, return_tensors="np")["pixel_values"]
    as_list = siglip([image])["pixel_values"]
    assert isinstance(as_list, list) and as_list[0].dtype == np.float32
    np.testing.assert_array_equal(as_list[0], reference[0])
    pt = siglip(core.tensor(image), return_tensors="pt")["pixel_values"]
    assert isinstance(pt, core.Tensor)
    np.testing.assert_array_equal(pt.numpy(), reference)
    # a 3 x 5 x 3 array could hold its channels at either end: first unless told
    square = expected["batch_uint8"][0][:3, :5]
    last = siglip(square, input_data_format="channels_last", return_tensors="np")["pixel_values"]
    first = siglip(np.moveaxis(square, -1, 0), return_tensors="np")["pixel_values"]
    np.testing.assert_array_equal(last, first)
    assert not np.array_equal(siglip(square, return_tensors="np")["pixel_values"], last)
    np.testing.assert_array_equal(siglip(square, input_data_format="channels_last", data_format="channels_last",
                                         return_tensors="np")["pixel_values"],
                                  np.moveaxis(first, 1, -1))


def test_save_and_load_write_hf_settings(siglip, tmp_path):
    siglip.save_pretrained(tmp_path)
    with open(tmp_path / "preprocessor_config.json", encoding="utf-8") as reader:
        ours = json.load(reader)
    with open(os.path.join(FIXTURES, "siglip", "preprocessor_config.json"), encoding="utf-8") as reader:
        assert ours == json.load(reader)
    again = AutoImageProcessor.from_pretrained(tmp_path, size={"height": 8, "width": 8})
    assert isinstance(again, SiglipImageProcessor) and again.size == {"height": 8, "width": 8}
    assert SiglipImageProcessor(size=32).size == {"shortest_edge": 32}
    assert Gemma3ImageProcessor(size=32).size == {"height": 32, "width": 32}


def test_settings_from_processor_config(tmp_path):
    """transformers 5 writes a processor's image settings inside processor_config.json."""
    processor = AutoImageProcessor.from_pretrained(os.path.join(FIXTURES, "gemma3_processor"))
    assert isinstance(processor, Gemma3ImageProcessor) and processor.size == {"height": 16, "width": 16}
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"image_processor_type": "CLIPImageProcessor"}))
    with pytest.raises(ValueError, match="CLIPImageProcessor, which mindnlp does not have"):
        AutoImageProcessor.from_pretrained(tmp_path)
    with pytest.raises(OSError, match="no image processor settings"):
        BaseImageProcessor.get_feature_extractor_dict(os.path.join(FIXTURES, "images"))


def test_shortest_edge_keeps_the_aspect_ratio(expected):
    out = SiglipImageProcessor(size={"shortest_edge": 6})(expected["hwc_uint8"], return_tensors="np")
    assert out["pixel_values"].shape == (1, 3, 6, 7)


def test_bad_inputs_get_clear_errors(siglip, tmp_path):
    with pytest.raises(TypeError, match="unexpected arguments"):
        siglip(np.zeros((4, 4, 3), np.uint8), do_pan_and_scan=True)
    with pytest.raises(TypeError, match="an image is a PIL image, a NumPy array"):
        siglip([1, 2])
    with pytest.raises(ValueError, match="images must be an image .* got ndarray of shape \\(1, 1, 4, 4, 3\\)"):
        siglip(np.zeros((1, 1, 4, 4, 3), np.uint8))
    with pytest.raises(ValueError, match="cannot tell the channels"):
        siglip(np.zeros((5, 5, 7), np.uint8))
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        siglip(np.full((5, 5, 3), 1.5, np.float32))
    with pytest.raises(ValueError, match="does not download"):
        siglip("https://example.com/cat.png")
    with pytest.raises(FileNotFoundError, match="no image file"):
        siglip(str(tmp_path / "missing.png"))
    with pytest.raises(ValueError, match="image_mean has 2 values"):
        siglip(np.zeros((4, 4, 3), np.uint8), image_mean=[0.5, 0.5])
    with pytest.raises(ValueError, match="input_data_format"):
        siglip(np.zeros((4, 4, 3), np.uint8), input_data_format="nhwc")
    with pytest.raises(ValueError, match="data_format must be"):
        siglip(np.zeros((4, 4, 3), np.uint8), data_format=None)
    with pytest.raises(ValueError, match="size must have"):
        SiglipImageProcessor(size={"longest_edge": 4})
    unset = SiglipImageProcessor()
    unset.image_std = None
    with pytest.raises(ValueError, match="image_mean and image_std"):
        unset(np.zeros((4, 4, 3), np.uint8))


def test_without_pillow_the_error_says_how_to_install_it(monkeypatch):
    from mindnlp.transformers import image_utils

    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(ImportError, match="mindnlp\\[vision\\]"):
        image_utils.resize(np.zeros((3, 4, 4), np.uint8), 2, 2, resample=2)
    assert not image_utils.is_pil_image(np.zeros((4, 4, 3)))
