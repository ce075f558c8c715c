# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma3Processor: the image processor and the tokenizer of the image-text Gemma 3.

Each image is written in a prompt as the begin-of-image token (`<start_of_image>`, what the chat
template writes for an image part); the processor expands it to the run the model reads:
"\\n\\n" + begin-of-image + `image_seq_length` image soft tokens + end-of-image + "\\n\\n". An
image pan-and-scan cut into crops becomes "Here is the original image <run> and here are some
crops to help you see better <run> <run> ...", one run per crop. `token_type_ids` marks the soft
tokens (1), which the model lets attend to each other within an image.
"""
from ...feature_extraction_utils import BatchFeature
from ...image_utils import fetch_images, make_nested_list_of_images
from ...processing_utils import ProcessorMixin

# what the processor asks of the image processor where its own settings leave these unset
IMAGE_DEFAULTS = {"do_convert_rgb": True, "do_pan_and_scan": False, "pan_and_scan_min_crop_size": 256,
                  "pan_and_scan_max_num_crops": 4, "pan_and_scan_min_ratio_to_activate": 1.2}


class Gemma3Processor(ProcessorMixin):
    """`processor(text=..., images=...)` or `processor.apply_chat_template(messages, tokenize=True,
    return_dict=True)` gives `input_ids`, `attention_mask`, `token_type_ids` and `pixel_values`
    for Gemma3ForConditionalGeneration. Keyword arguments that name an image processor setting
    (or come in `images_kwargs`) go to the image processor, the others (or `text_kwargs`) to
    the tokenizer; `return_tensors` to both."""

    attributes = ["image_processor", "tokenizer"]
    image_processor_class = "Gemma3ImageProcessor"
    tokenizer_class = "AutoTokenizer"
    processor_settings = ("image_seq_length",)

    def __init__(self, image_processor, tokenizer, chat_template=None, image_seq_length=256):
        missing = [name for name in ("boi_token", "eoi_token", "image_token") if getattr(tokenizer, name, None) is None]
        if missing:
            raise ValueError(f"Gemma3Processor needs a tokenizer with Gemma 3's image tokens; this one lacks {missing}")
        super().__init__(image_processor, tokenizer, chat_template=chat_template)
        self.image_seq_length = image_seq_length
        self.boi_token = tokenizer.boi_token
        self.image_token = tokenizer.image_token
        self.image_token_id = tokenizer.image_token_id
        self.full_image_sequence = f"\n\n{tokenizer.boi_token}{tokenizer.image_token * image_seq_length}" \
                                   f"{tokenizer.eoi_token}\n\n"

    def __call__(self, images=None, text=None, images_kwargs=None, text_kwargs=None, return_tensors=None,
                 return_mm_token_type_ids=True, **kwargs):
        if text is None and images is None:
            raise ValueError("Provide at least one of `text` or `images`.")
        images_kwargs, text_kwargs = self._split_kwargs(images_kwargs, text_kwargs, kwargs)
        if isinstance(text, str):
            text = [text]
        elif text is not None and not (isinstance(text, (list, tuple)) and all(isinstance(t, str) for t in text)):
            raise TypeError("Invalid input text. Please provide a string, or a list of strings")
        image_inputs = {}
        if images is not None:
            batched = make_nested_list_of_images(fetch_images(images))
            image_inputs = self.image_processor(batched, **images_kwargs)
            num_crops = iter(int(n) for n in image_inputs.pop("num_crops"))
            crops = [[next(num_crops) for _ in group] for group in batched]
            if not text:
                text = [" ".join([self.boi_token] * len(group)) for group in batched]
            if len(batched) != len(text):
                raise ValueError(f"Received inconsistently sized batches of images ({len(batched)}) and text "
                                 f"({len(text)}).")
            text = [self._expand(prompt, counts) for prompt, counts in zip(text, crops)]
        text_inputs = self.tokenizer(list(text), **text_kwargs)
        ids = text_inputs["input_ids"]
        self._check_image_tokens(text, ids)
        if return_mm_token_type_ids:
            text_inputs["token_type_ids"] = [[int(t == self.image_token_id) for t in row] for row in ids]
        return BatchFeature({**text_inputs, **image_inputs}, tensor_type=return_tensors)

    def _split_kwargs(self, images_kwargs, text_kwargs, kwargs):
        settings = self.image_processor.settings
        images_kwargs = {**{k: v for k, v in kwargs.items() if k in settings}, **(images_kwargs or {})}
        text_kwargs = {**{k: v for k, v in kwargs.items() if k not in settings}, **(text_kwargs or {})}
        for name, value in IMAGE_DEFAULTS.items():
            if images_kwargs.get(name) is None and getattr(self.image_processor, name, None) is None:
                images_kwargs[name] = value
        return images_kwargs, text_kwargs

    def _expand(self, prompt, crops):
        """The prompt with each begin-of-image token written as its image's token runs."""
        pieces = prompt.split(self.boi_token)
        if len(pieces) - 1 != len(crops):
            raise ValueError(f"Prompt contained {len(pieces) - 1} image tokens but received {len(crops)} images.")
        expanded = [pieces[0]]
        for count, piece in zip(crops, pieces[1:]):
            run = self.full_image_sequence
            if count:
                run = (f"Here is the original image {run} and here are some crops to help you see better "
                       + " ".join([run] * count))
            expanded += [run, piece]
        return "".join(expanded)

    def _check_image_tokens(self, text, ids):
        """Truncation must not cut an image's run of soft tokens."""
        in_ids = [list(row).count(self.image_token_id) for row in ids]
        in_text = [prompt.count(self.image_token) for prompt in text]
        if in_ids != in_text:
            raise ValueError(f"Mismatch in `image` token count between text and `input_ids`. Got ids={in_ids} and "
                             f"text={in_text}. Likely due to `truncation='max_length'`. Please disable truncation "
                             "or increase `max_length`.")

    @property
    def model_input_names(self):
        names = self.tokenizer.model_input_names + ["token_type_ids"]
        return names + [n for n in self.image_processor.model_input_names if n != "num_crops"]


__all__ = ["Gemma3Processor"]
