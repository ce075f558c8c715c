# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ProcessorMixin: one object for a model whose inputs need more than a tokenizer (Whisper: a
feature extractor for the audio and a tokenizer for the text; Gemma 3: an image processor and a
tokenizer), saved to and loaded from one folder as Hugging Face's processors are: each part
writes its own files there, the processor its own settings (`processor_config.json`) and chat
template (`chat_template.jinja`).

A subclass lists its parts in `attributes`, the classes that load them in `<part>_class`, and
its own saved settings in `processor_settings`; decoding goes to the tokenizer.
"""
import json
import os

from .utils.hub import cached_file

PROCESSOR_NAME = "processor_config.json"
CHAT_TEMPLATE_FILE = "chat_template.jinja"
LEGACY_CHAT_TEMPLATE_FILE = "chat_template.json"
_HUB_KWARGS = ("cache_dir", "local_files_only", "token", "revision", "subfolder", "mirror", "endpoint")


class ProcessorMixin:
    attributes = ["feature_extractor", "tokenizer"]
    feature_extractor_class = None
    image_processor_class = None
    tokenizer_class = None
    processor_settings = ()

    def __init__(self, *args, chat_template=None, **kwargs):
        if len(args) > len(self.attributes):
            raise TypeError(f"{type(self).__name__} takes {len(self.attributes)} parts ({self.attributes}), "
                            f"got {len(args)}")
        parts = dict(zip(self.attributes, args), **{k: kwargs.pop(k) for k in self.attributes if k in kwargs})
        missing = [name for name in self.attributes if name not in parts]
        if missing:
            raise ValueError(f"{type(self).__name__} needs {missing}")
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected arguments {sorted(kwargs)}")
        for name, part in parts.items():
            setattr(self, name, part)
        self.chat_template = chat_template

    def save_pretrained(self, save_directory, **kwargs):
        """Every part saved in `save_directory`, with the processor's settings and chat template;
        returns the files written."""
        files = []
        for name in self.attributes:
            written = getattr(self, name).save_pretrained(save_directory)
            files += list(written) if isinstance(written, (list, tuple)) else [written]
        if self.processor_settings:
            settings = {name: getattr(self, name) for name in self.processor_settings}
            files.append(os.path.join(save_directory, PROCESSOR_NAME))
            with open(files[-1], "w", encoding="utf-8") as writer:
                json.dump({**settings, "processor_class": type(self).__name__}, writer, indent=2, sort_keys=True)
                writer.write("\n")
        if isinstance(self.chat_template, str):
            files.append(os.path.join(save_directory, CHAT_TEMPLATE_FILE))
            with open(files[-1], "w", encoding="utf-8") as writer:
                writer.write(self.chat_template)
        return list(dict.fromkeys(files))

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        """Every part loaded from the same folder or hub repo, with the processor's settings
        (keyword arguments named in `processor_settings` override the saved ones)."""
        overrides = {name: kwargs.pop(name) for name in cls.processor_settings if name in kwargs}
        chat_template = kwargs.pop("chat_template", None)
        location = {k: kwargs[k] for k in _HUB_KWARGS if k in kwargs}
        parts = [cls._part_class(name).from_pretrained(pretrained_model_name_or_path, **kwargs)
                 for name in cls.attributes]
        saved = cls._saved_settings(pretrained_model_name_or_path, location)
        saved_template = saved.pop("chat_template", None)
        if chat_template is None and saved_template is not None:
            chat_template = saved_template
        template = {} if chat_template is None else {"chat_template": chat_template}
        return cls(*parts, **template, **{**saved, **overrides})

    @classmethod
    def _saved_settings(cls, path, location):
        """The settings of processor_config.json named in `processor_settings`, and the chat
        template of chat_template.jinja (or of the older chat_template.json)."""
        settings = {}
        found = cached_file(path, PROCESSOR_NAME, raise_if_missing=False, **location)
        if found is not None:
            with open(found, encoding="utf-8") as reader:
                saved = json.load(reader)
            settings = {name: saved[name] for name in (*cls.processor_settings, "chat_template") if name in saved}
        found = cached_file(path, CHAT_TEMPLATE_FILE, raise_if_missing=False, **location)
        if found is not None:
            with open(found, encoding="utf-8") as reader:
                settings["chat_template"] = reader.read()
        elif (found := cached_file(path, LEGACY_CHAT_TEMPLATE_FILE, raise_if_missing=False, **location)) is not None:
            with open(found, encoding="utf-8") as reader:
                settings["chat_template"] = json.load(reader)["chat_template"]
        return settings

    @classmethod
    def _part_class(cls, name):
        """The class named by `<name>_class`, from mindnlp.transformers."""
        import importlib

        return getattr(importlib.import_module(__package__), getattr(cls, f"{name}_class"))

    def apply_chat_template(self, conversation, chat_template=None, tools=None, documents=None,
                            add_generation_prompt=False, continue_final_message=False, tokenize=False,
                            return_tensors=None, return_dict=False, processor_kwargs=None, **kwargs):
        """Render a conversation (or a batch of them) with the chat template, as the tokenizer's
        `apply_chat_template` does; message contents may be lists of parts, images among them
        (`{"type": "image", "image": <PIL image or path>}`, or `"path"` / `"url"` for a local
        file). With `tokenize=True` the processor is called on the text and the images:
        `return_dict=True` gives all its outputs, otherwise the ids. Keyword arguments the
        template does not use go to the processor, as `processor_kwargs` do."""
        from .tokenization_utils_base import _compile_chat_template, _render_chat

        if continue_final_message and add_generation_prompt:
            raise ValueError("continue_final_message and add_generation_prompt cannot both be set")
        template = self.tokenizer.get_chat_template(chat_template if chat_template is not None
                                                    else self.chat_template, tools)
        processor_kwargs = dict(processor_kwargs or {})
        used = _template_variables(_compile_chat_template(template), template)
        processor_kwargs.update({k: kwargs.pop(k) for k in list(kwargs) if k not in used})
        if not isinstance(conversation, (list, tuple)) or not conversation:
            raise ValueError("conversation must be a non-empty list of messages (or a list of such lists)")
        is_batched = isinstance(conversation[0], (list, tuple))
        conversations = [_with_image_parts(chat) for chat in (conversation if is_batched else [conversation])]
        prompts = [_render_chat(template, chat, tools=tools, documents=documents,
                                add_generation_prompt=add_generation_prompt,
                                continue_final_message=continue_final_message, track_generation=False,
                                template_kwargs={**self.tokenizer.special_tokens_map, **kwargs})[0]
                   for chat in conversations]
        if not tokenize:
            return prompts if is_batched else prompts[0]
        images = [[_image_of(part) for message in chat for part in _parts(message) if part.get("type") == "image"]
                  for chat in conversations]
        bos = self.tokenizer.bos_token
        if bos is not None and prompts[0].startswith(bos):
            processor_kwargs.setdefault("add_special_tokens", False)
        out = self(text=prompts if is_batched else prompts[0], images=images if any(images) else None,
                   return_tensors=return_tensors, **processor_kwargs)
        return out if return_dict else out["input_ids"]

    def batch_decode(self, *args, **kwargs):
        return self.tokenizer.batch_decode(*args, **kwargs)

    def decode(self, *args, **kwargs):
        return self.tokenizer.decode(*args, **kwargs)

    @property
    def model_input_names(self):
        names = []
        for name in self.attributes:
            names += [n for n in getattr(getattr(self, name), "model_input_names", []) if n not in names]
        return names

    def __repr__(self):
        parts = "\n".join(f"- {name}: {getattr(self, name)!r}" for name in self.attributes)
        return f"{type(self).__name__}:\n{parts}"


def _template_variables(compiled, source):
    from jinja2 import meta

    return meta.find_undeclared_variables(compiled.environment.parse(source))


def _parts(message):
    content = message.get("content")
    return content if isinstance(content, list) else []


def _with_image_parts(chat):
    """The conversation with OpenAI's `{"type": "image_url", "image_url": {"url": ...}}` parts
    written as `{"type": "image", "url": ...}`, the form chat templates read; audio and video
    parts are refused."""
    normalized = []
    for message in chat:
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            content = []
            for part in message["content"]:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in ("audio", "video"):
                    raise NotImplementedError(f"mindnlp's processors take text and images, not {kind}")
                if kind == "image_url":
                    url = part["image_url"]
                    part = {"type": "image", "url": url.get("url") if isinstance(url, dict) else url}
                content.append(part)
            message = {**message, "content": content}
        normalized.append(message)
    return normalized


def _image_of(part):
    from .image_utils import load_image

    for key in ("image", "path", "url"):
        if part.get(key) is not None:
            return load_image(part[key])
    raise ValueError(f"an image part needs an `image`, `path` or `url` entry, got {sorted(part)}")


__all__ = ["ProcessorMixin"]
