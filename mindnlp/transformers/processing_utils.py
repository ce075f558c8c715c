"""ProcessorMixin: one object for a model whose inputs need more than a tokenizer (Whisper: a
feature extractor for the audio and a tokenizer for the text), saved to and loaded from one
folder as Hugging Face's processors are: each part writes its own files there.

A subclass lists its parts in `attributes` and the classes that load them in
`<part>_class`; decoding goes to the tokenizer.
"""


class ProcessorMixin:
    attributes = ["feature_extractor", "tokenizer"]
    feature_extractor_class = None
    tokenizer_class = None

    def __init__(self, *args, **kwargs):
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

    def save_pretrained(self, save_directory, **kwargs):
        """Every part saved in `save_directory`; returns the files written."""
        files = []
        for name in self.attributes:
            written = getattr(self, name).save_pretrained(save_directory)
            files += list(written) if isinstance(written, (list, tuple)) else [written]
        return files

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        """Every part loaded from the same folder or hub repo."""
        parts = [cls._part_class(name).from_pretrained(pretrained_model_name_or_path, **kwargs)
                 for name in cls.attributes]
        return cls(*parts)

    @classmethod
    def _part_class(cls, name):
        """The class named by `<name>_class`, from mindnlp.transformers."""
        import importlib

        return getattr(importlib.import_module(__package__), getattr(cls, f"{name}_class"))

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


__all__ = ["ProcessorMixin"]
