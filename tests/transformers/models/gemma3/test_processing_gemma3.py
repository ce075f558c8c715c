"""Gemma 3's image processor and processor: parity with HF transformers on the fixtures of
tests/fixtures/make_image_processing_fixtures.py (pixel values, pan-and-scan crops, ids, token
types, chat template), generation from the processor's output identical to HF's, the files, and
the errors of inputs that do not fit."""
import json
import os

import numpy as np
import PIL.Image
import pytest

from mindnlp import core
from mindnlp.transformers import (AutoProcessor, AutoTokenizer, Gemma3ForConditionalGeneration,
                                  Gemma3ImageProcessor, Gemma3Processor)
from mindnlp.transformers.models.gemma3.image_processing_gemma3 import pan_and_scan

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures")
IMAGES = os.path.join(FIXTURES, "image_processing", "images")
PROCESSOR = os.path.join(FIXTURES, "image_processing", "gemma3_processor")
ATOL = 1e-6
PAN_AND_SCAN = dict(do_pan_and_scan=True, pan_and_scan_min_crop_size=8, pan_and_scan_max_num_crops=3,
                    pan_and_scan_min_ratio_to_activate=1.2)
PROMPTS = ["A <start_of_image> cat.", "Two <start_of_image> and <start_of_image> here."]


@pytest.fixture(scope="module")
def expected():
    return dict(np.load(os.path.join(FIXTURES, "image_processing", "expected.npz")))


@pytest.fixture(scope="module")
def images():
    return [PIL.Image.open(os.path.join(IMAGES, name)) for name in ("wide.png", "tall_rgba.png", "gray.png")]


@pytest.fixture(scope="module")
def processor():
    return AutoProcessor.from_pretrained(PROCESSOR)


def messages(image):
    return [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": [{"type": "image", **image}, {"type": "text", "text": "What is this"}]}]


def assert_matches(out, expected, case):
    fields = sorted(key[len(case) + 1:] for key in expected if key.startswith(case + "."))
    assert sorted(out) == fields
    for field in fields:
        ours = out[field].numpy() if isinstance(out[field], core.Tensor) else np.asarray(out[field])
        theirs = expected[f"{case}.{field}"]
        if theirs.dtype.kind == "f":
            np.testing.assert_allclose(ours, theirs, atol=ATOL, rtol=0)
        else:
            np.testing.assert_array_equal(ours, theirs)


def test_image_processor_matches_hf(images, expected):
    image_processor = Gemma3ImageProcessor.from_pretrained(os.path.join(FIXTURES, "image_processing", "gemma3_image"))
    assert_matches(image_processor(images, return_tensors="np"), expected, "gemma3_image")
    assert_matches(image_processor(images, return_tensors="np", **PAN_AND_SCAN), expected, "gemma3_pan_and_scan")


def test_pan_and_scan_crops_along_the_long_side():
    image = np.arange(3 * 10 * 31).reshape(3, 10, 31)
    crops = pan_and_scan(image, min_crop_size=4, max_num_crops=5, min_ratio_to_activate=1.2)
    assert [crop.shape for crop in crops] == [(3, 10, 11), (3, 10, 11), (3, 10, 9)]
    np.testing.assert_array_equal(np.concatenate(crops, axis=2), image)
    tall = pan_and_scan(image.transpose(0, 2, 1), min_crop_size=4, max_num_crops=2, min_ratio_to_activate=1.2)
    assert [crop.shape for crop in tall] == [(3, 16, 10), (3, 15, 10)]
    assert pan_and_scan(image, min_crop_size=12, max_num_crops=5, min_ratio_to_activate=1.2) == []
    assert pan_and_scan(image[:, :, :11], min_crop_size=2, max_num_crops=5, min_ratio_to_activate=1.2) == []
    with pytest.raises(ValueError, match="do_pan_and_scan needs \\['pan_and_scan_max_num_crops'\\]"):
        Gemma3ImageProcessor(do_pan_and_scan=True, pan_and_scan_min_crop_size=4,
                             pan_and_scan_min_ratio_to_activate=1.2)(image.astype(np.uint8))


def test_processor_matches_hf(processor, images, expected):
    assert isinstance(processor, Gemma3Processor) and processor.image_seq_length == 4
    # tokenizer_config.json names the image tokens at its top level, as HF writes them
    assert {name: processor.tokenizer.special_tokens_map[name] for name in ("boi_token", "eoi_token", "image_token")} \
        == {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"}
    batch = processor(text=PROMPTS, images=[[images[0]], [images[1], images[2]]], padding=True, return_tensors="np")
    assert_matches(batch, expected, "processor_batch")
    crops = processor(text=["See <start_of_image> now."], images=[images[0]], return_tensors="np",
                      images_kwargs=PAN_AND_SCAN)
    assert_matches(crops, expected, "processor_pan_and_scan")
    assert_matches(processor(text="No image.", return_tensors="np"), expected, "processor_text_only")


def test_image_settings_can_be_given_flat(processor, images):
    nested = processor(text=["See <start_of_image> now."], images=[images[0]], images_kwargs=PAN_AND_SCAN)
    flat = processor(text=["See <start_of_image> now."], images=[images[0]], **PAN_AND_SCAN)
    assert nested["input_ids"] == flat["input_ids"]
    np.testing.assert_array_equal(np.stack(nested["pixel_values"]), np.stack(flat["pixel_values"]))


def test_images_alone_get_a_prompt_of_image_tokens(processor, images):
    alone = processor(images=[images[0]])
    placed = processor(text=["<start_of_image>"], images=[images[0]])
    assert alone["input_ids"] == placed["input_ids"]


def test_chat_template_matches_hf(processor, expected):
    chat = messages({"path": os.path.join(IMAGES, "wide.png")})
    assert processor.apply_chat_template(chat, add_generation_prompt=True) == str(expected["chat_text"])
    out = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=True,
                                        return_tensors="pt")
    assert_matches(out, expected, "chat")
    ids = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
    assert ids == expected["chat.input_ids"].tolist()
    with PIL.Image.open(os.path.join(IMAGES, "wide.png")) as image:
        given = processor.apply_chat_template(messages({"image": image.convert("RGB")}), add_generation_prompt=True,
                                              tokenize=True, return_dict=True, return_tensors="np")
    np.testing.assert_array_equal(given["pixel_values"], expected["chat.pixel_values"])
    openai = [chat[0], {"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": os.path.join(IMAGES, "wide.png")}},
        {"type": "text", "text": "What is this"}]}]
    assert processor.apply_chat_template(openai, add_generation_prompt=True, tokenize=True) == ids
    batched = processor.apply_chat_template([chat, chat], add_generation_prompt=True, tokenize=True,
                                            return_dict=True, return_tensors="np")
    np.testing.assert_array_equal(batched["input_ids"], np.repeat(expected["chat.input_ids"], 2, axis=0))


@pytest.fixture(scope="module")
def model():
    return Gemma3ForConditionalGeneration.from_pretrained(os.path.join(FIXTURES, "gemma3_multimodal", "model")).eval()


def test_generation_from_processor_output_matches_hf(processor, model, images, expected):
    chat = processor.apply_chat_template(messages({"path": os.path.join(IMAGES, "wide.png")}),
                                         add_generation_prompt=True, tokenize=True, return_dict=True,
                                         return_tensors="pt")
    generated = model.generate(**chat, max_new_tokens=5, do_sample=False)
    np.testing.assert_array_equal(generated.numpy(), expected["chat_greedy"])
    batch = processor(text=PROMPTS, images=[[images[0]], [images[1], images[2]]], padding=True, return_tensors="pt")
    generated = model.generate(**batch, max_new_tokens=5, do_sample=False)
    np.testing.assert_array_equal(generated.numpy(), expected["batch_greedy"])


def test_saved_processor_reloads(processor, images, tmp_path):
    processor.save_pretrained(tmp_path)
    with open(tmp_path / "processor_config.json", encoding="utf-8") as reader:
        assert json.load(reader) == {"image_seq_length": 4, "processor_class": "Gemma3Processor"}
    assert (tmp_path / "chat_template.jinja").read_text() == processor.chat_template
    again = AutoProcessor.from_pretrained(tmp_path)
    assert isinstance(again, Gemma3Processor) and again.image_processor.to_dict() == processor.image_processor.to_dict()
    inputs = dict(text=PROMPTS, images=[[images[0]], [images[1], images[2]]], padding=True, return_tensors="np")
    for name, value in processor(**inputs).items():
        np.testing.assert_array_equal(again(**inputs)[name], value)
    longer = Gemma3Processor.from_pretrained(tmp_path, image_seq_length=6)
    assert longer(text="<start_of_image>", images=images[2])["input_ids"][0].count(longer.image_token_id) == 6
    assert processor.model_input_names == ["input_ids", "attention_mask", "token_type_ids", "pixel_values"]


def test_bad_inputs_get_clear_errors(processor, images):
    with pytest.raises(ValueError, match="at least one of `text` or `images`"):
        processor()
    with pytest.raises(TypeError, match="a string, or a list of strings"):
        processor(text=[1, 2])
    with pytest.raises(ValueError, match="Prompt contained 1 image tokens but received 2 images"):
        processor(text=["<start_of_image>"], images=[[images[0], images[2]]])
    with pytest.raises(ValueError, match="inconsistently sized batches of images \\(1\\) and text \\(2\\)"):
        processor(text=PROMPTS, images=[images[0]])
    with pytest.raises(ValueError, match="Mismatch in `image` token count"):
        processor(text=["<start_of_image>"], images=[images[0]], truncation=True, max_length=5)
    with pytest.raises(ValueError, match="rows have different shapes"):
        processor(text=PROMPTS, images=[[images[0]], [images[1], images[2]]], return_tensors="pt")
    with pytest.raises(ValueError, match="does not download"):
        processor.apply_chat_template(messages({"url": "https://example.com/cat.png"}), tokenize=True)
    with pytest.raises(ValueError, match="needs an `image`, `path` or `url`"):
        processor.apply_chat_template(messages({}), tokenize=True)
    with pytest.raises(NotImplementedError, match="not video"):
        processor.apply_chat_template([{"role": "user", "content": [{"type": "video", "path": "a.mp4"}]}])
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(FIXTURES, "tokenizers", "llama_chat"))
    with pytest.raises(ValueError, match="lacks \\['boi_token', 'eoi_token', 'image_token'\\]"):
        Gemma3Processor(processor.image_processor, tokenizer)


def test_hub_layout_loads(images, expected, tmp_path):
    """The hub's Gemma 3 repos keep the image settings in preprocessor_config.json, unset ones
    as null, and only `image_seq_length` in processor_config.json."""
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        (tmp_path / name).write_bytes(open(os.path.join(PROCESSOR, name), "rb").read())
    with open(os.path.join(PROCESSOR, "processor_config.json"), encoding="utf-8") as reader:
        settings = json.load(reader)["image_processor"]
    settings.update(do_convert_rgb=None, do_pan_and_scan=None, pan_and_scan_max_num_crops=None,
                    pan_and_scan_min_crop_size=None, pan_and_scan_min_ratio_to_activate=None, image_seq_length=4,
                    processor_class="Gemma3Processor")
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(settings))
    (tmp_path / "processor_config.json").write_text(json.dumps({"image_seq_length": 4,
                                                                "processor_class": "Gemma3Processor"}))
    processor = AutoProcessor.from_pretrained(tmp_path)
    batch = processor(text=PROMPTS, images=[[images[0]], [images[1], images[2]]], padding=True, return_tensors="np")
    assert_matches(batch, expected, "processor_batch")
    crops = processor(text=["See <start_of_image> now."], images=[images[0]], return_tensors="np",
                      images_kwargs=PAN_AND_SCAN)
    assert_matches(crops, expected, "processor_pan_and_scan")
