# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SentenceTransformer: a sentence-transformers model folder run on mindnlp.core.

The folder (local, or a hub repo resolved like `from_pretrained`, through the shared HF cache)
is read as sentence-transformers writes it: `modules.json` lists the modules in order, each
in its own subfolder; `config_sentence_transformers.json` holds the prompts, the default
prompt and the similarity function. A plain Hugging Face encoder folder (no modules.json)
gets what sentence-transformers gives it: the encoder followed by mean pooling.
"""
import logging
import os
import threading
from collections import OrderedDict

import numpy as np
from tqdm.auto import tqdm

from .. import __version__, core
from ..core.backends import get_backend
from ..core.nn import functional as F
from .modules import MODULE_TYPES, Pooling, Transformer, read_json, write_json
from .similarity import SIMILARITY_FUNCTIONS

logger = logging.getLogger(__name__)


class SentenceTransformer(core.nn.Sequential):
    """Texts → fixed-size embeddings, with sentence-transformers' loading, `encode` and `similarity`.

        model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
        embeddings = model.encode(["A man is eating food.", "A man is eating bread."])
        model.similarity(embeddings, embeddings)

    Hub arguments (revision, cache_folder, token, local_files_only, mirror, endpoint) are
    those of `from_pretrained`; `prompts` / `default_prompt_name` / `similarity_fn_name`
    given here win over the folder's.
    """

    def __init__(self, model_name_or_path=None, modules=None, device=None, prompts=None, default_prompt_name=None,
                 similarity_fn_name=None, cache_folder=None, revision=None, token=None, local_files_only=False,
                 mirror=None, endpoint=None, truncate_dim=None):
        prompts = dict(prompts or {})
        if model_name_or_path is not None:
            location = dict(revision=revision, cache_dir=cache_folder, token=token,
                            local_files_only=local_files_only, mirror=mirror, endpoint=endpoint)
            modules, saved = _load_modules(str(model_name_or_path), location)
            for name, text in saved.get("prompts", {}).items():
                prompts.setdefault(name, text or "")
            default_prompt_name = default_prompt_name or saved.get("default_prompt_name")
            similarity_fn_name = similarity_fn_name or saved.get("similarity_fn_name")
            truncate_dim = truncate_dim or saved.get("truncate_dim")
        if not modules:
            raise ValueError("SentenceTransformer needs a model name or path, or a list of modules")
        super().__init__(OrderedDict(modules if isinstance(modules, dict) else
                                     ((str(idx), module) for idx, module in enumerate(modules))))
        self.prompts = prompts
        self.default_prompt_name = default_prompt_name
        self.truncate_dim = truncate_dim
        self._similarity_fn_name = None
        if self.default_prompt_name is not None and self.default_prompt_name not in self.prompts:
            raise ValueError(f"default_prompt_name {self.default_prompt_name!r} is not one of the prompts "
                             f"{sorted(self.prompts)}")
        if similarity_fn_name is not None:
            self.similarity_fn_name = similarity_fn_name
        if device is not None:
            self.to(device)
        self.eval()

    # --- the pieces users reach for ---
    @property
    def tokenizer(self):
        return self[0].tokenizer

    @property
    def max_seq_length(self):
        return self[0].max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, value):
        self[0].max_seq_length = value

    def get_sentence_embedding_dimension(self):
        """Width of `encode`'s vectors: the last module that changes it, capped by truncate_dim."""
        dimension = next((module.get_embedding_dimension() for module in reversed(self._modules.values())
                          if hasattr(module, "get_embedding_dimension")), None)
        if self.truncate_dim is not None:
            return self.truncate_dim if dimension is None else min(dimension, self.truncate_dim)
        return dimension

    get_embedding_dimension = get_sentence_embedding_dimension

    @property
    def similarity_fn_name(self):
        """"cosine" (the default), "dot", "euclidean" or "manhattan": what `similarity` computes."""
        return self._similarity_fn_name or "cosine"

    @similarity_fn_name.setter
    def similarity_fn_name(self, value):
        value = getattr(value, "value", value)  # sentence-transformers' SimilarityFunction enum members
        if value not in SIMILARITY_FUNCTIONS:
            raise ValueError(f"unknown similarity_fn_name {value!r}: use one of {', '.join(SIMILARITY_FUNCTIONS)}")
        self._similarity_fn_name = value

    def similarity(self, embeddings1, embeddings2):
        """[len(embeddings1), len(embeddings2)] scores under `similarity_fn_name`."""
        return SIMILARITY_FUNCTIONS[self.similarity_fn_name][0](embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1, embeddings2):
        """The score of each pair embeddings1[i], embeddings2[i] under `similarity_fn_name`."""
        return SIMILARITY_FUNCTIONS[self.similarity_fn_name][1](embeddings1, embeddings2)

    # --- encoding ---
    def tokenize(self, texts):
        return self[0].tokenize(texts)

    def forward(self, features):
        for module in self._modules.values():
            features = module(features)
        return features

    def encode(self, sentences, *, prompt_name=None, prompt=None, batch_size=32, show_progress_bar=None,
               output_value="sentence_embedding", convert_to_numpy=True, convert_to_tensor=False,
               normalize_embeddings=False):
        """Embed one text (→ one vector) or a list of texts (→ one row per text, in input order).

        Texts are sorted by token count, longest first, and encoded `batch_size` at a time, so
        each batch pads to similar lengths; the results are put back in the input's order. On
        the CPU, several batches run at once, one per thread (`core.set_num_threads`).
        output_value "sentence_embedding" gives a NumPy array (convert_to_tensor=True: one core
        tensor; both False: a list of 1-D tensors); "token_embeddings" gives each text's token
        vectors without padding; None gives each text's dict of every feature.
        A prompt (the text itself, or the name of one of `prompts`; otherwise the default
        prompt, if the model has one) is put in front of every text.
        """
        if batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
        if show_progress_bar is None:
            show_progress_bar = logger.getEffectiveLevel() <= logging.INFO
        if output_value != "sentence_embedding":
            convert_to_numpy = convert_to_tensor = False
        single = isinstance(sentences, str)
        sentences = [sentences] if single else list(sentences)
        prompt = self._resolve_prompt(prompt, prompt_name)
        prompt_length = self._prompt_length(prompt) if prompt else None

        order = np.argsort([-n for n in self._text_lengths([prompt + text for text in sentences] if prompt
                                                           else sentences)], kind="stable")
        starts = range(0, len(sentences), batch_size)
        outputs = [None] * len(starts)
        device = next(self.parameters()).device
        tokenizing = threading.Lock()
        progress = tqdm(total=len(starts), desc="Batches", disable=not show_progress_bar)
        self.eval()

        def encode_batch(number):
            texts = [sentences[i] for i in order[starts[number]:starts[number] + batch_size]]
            with tokenizing:                  # a tokenizer keeps its padding settings in itself
                features = self.tokenize([prompt + text for text in texts] if prompt else texts)
            features = {name: ids.to(device) for name, ids in features.items()}
            if prompt_length is not None:
                features["prompt_length"] = prompt_length
            with core.no_grad():              # grad mode is per thread
                outputs[number] = self._batch_output(self(features), len(texts), output_value, normalize_embeddings)
            progress.update()

        # Batches are independent: the backend may run several at once (the longest first).
        try:
            get_backend(device).run_each(encode_batch, len(starts))
        finally:
            progress.close()
        inverse = np.argsort(order)

        if output_value != "sentence_embedding":
            rows = [row for batch in outputs for row in batch]
            result = [rows[i] for i in inverse]
        elif not outputs:
            result = core.tensor([]) if convert_to_tensor else np.array([]) if convert_to_numpy else []
        elif convert_to_tensor or not convert_to_numpy:
            stacked = core.cat(outputs)
            result = stacked[core.tensor(inverse, device=stacked.device)]
            if not convert_to_tensor:
                result = list(result)
        else:
            result = np.concatenate([batch.float().cpu().numpy() for batch in outputs])[inverse]
        return result[0] if single else result

    def _text_lengths(self, texts):
        """What `encode` sorts by: each text's token count where the first module can tell it
        (one pass of the tokenizer, about 1% of encoding), else its character count as
        sentence-transformers uses. Batches of equal token counts pad nothing: on 1,000
        sentences of 6-43 tokens, character order pads the batches by 9%, token order by 2%."""
        first = self[0] if len(self) else None
        if hasattr(first, "token_counts"):
            return first.token_counts(texts)
        return [len(text) for text in texts]

    def _resolve_prompt(self, prompt, prompt_name):
        if prompt is not None:
            return prompt
        if prompt_name is not None:
            if prompt_name not in self.prompts:
                raise ValueError(f"prompt_name {prompt_name!r} is not one of this model's prompts "
                                 f"{sorted(self.prompts)}")
            return self.prompts[prompt_name]
        return self.prompts.get(self.default_prompt_name) if self.default_prompt_name is not None else None

    def _prompt_length(self, prompt):
        """Tokens the prompt takes at the start of each text (its leading special tokens
        included, a trailing one not): what Pooling skips when include_prompt is False."""
        ids = self.tokenize([prompt])["input_ids"][0].tolist()
        return len(ids) - (ids[-1] in self.tokenizer.all_special_ids)

    def _batch_output(self, features, count, output_value, normalize):
        if output_value == "sentence_embedding":
            embeddings = features["sentence_embedding"]
            if self.truncate_dim is not None:
                embeddings = embeddings[:, :self.truncate_dim]
            return F.normalize(embeddings, p=2, dim=1) if normalize else embeddings
        if output_value == "token_embeddings":
            # Up to each text's last attended token (at least one token).
            kept = [max((i for i, m in enumerate(mask) if m), default=0) + 1
                    for mask in features["attention_mask"].tolist()]
            return [tokens[:n] for tokens, n in zip(features["token_embeddings"], kept)]
        if output_value is None:
            return [{name: value[i] if isinstance(value, core.Tensor) and value.dim() and value.shape[0] == count
                     else value for name, value in features.items()} for i in range(count)]
        raise ValueError(f"unknown output_value {output_value!r}: use 'sentence_embedding', 'token_embeddings' or None")

    # --- saving ---
    def save(self, path):
        """Write the folder layout sentence-transformers reads (and this class loads back):
        the first module in the root, each other in `<idx>_<Name>/`, modules.json and
        config_sentence_transformers.json."""
        os.makedirs(path, exist_ok=True)
        entries = []
        for idx, (name, module) in enumerate(self._modules.items()):
            kind = type(module).__name__
            subfolder = "" if idx == 0 and isinstance(module, Transformer) else f"{idx}_{kind}"
            os.makedirs(os.path.join(path, subfolder), exist_ok=True)
            module.save(os.path.join(path, subfolder))
            entries.append({"idx": idx, "name": name, "path": subfolder, "type": f"sentence_transformers.models.{kind}"})
        write_json(path, "modules.json", entries)
        config = {"__version__": {"mindnlp": __version__}, "model_type": "SentenceTransformer",
                  "prompts": self.prompts, "default_prompt_name": self.default_prompt_name,
                  "similarity_fn_name": self.similarity_fn_name}
        if self.truncate_dim is not None:
            config["truncate_dim"] = self.truncate_dim
        write_json(path, "config_sentence_transformers.json", config)

    save_pretrained = save


def _load_modules(name_or_path, location):
    """({name: module} in modules.json's order, the folder's config_sentence_transformers.json)."""
    if not os.path.isdir(name_or_path) and (os.path.isabs(name_or_path) or name_or_path.startswith((".", "~"))):
        raise OSError(f"{name_or_path} is not a folder")
    entries = read_json(name_or_path, "modules.json", "", location)
    saved = read_json(name_or_path, "config_sentence_transformers.json", "", location) or {}
    if entries is None:
        logger.warning("%s has no modules.json: using its encoder with mean pooling", name_or_path)
        encoder = Transformer.load(name_or_path, "", location)
        return {"0": encoder, "1": Pooling(encoder.get_embedding_dimension(), "mean")}, saved
    modules = {}
    for entry in sorted(entries, key=lambda e: e.get("idx", 0)):
        kind = entry["type"].rsplit(".", 1)[-1]
        if kind not in MODULE_TYPES:
            raise ValueError(f"{name_or_path}: modules.json lists a module of type {entry['type']!r}, which mindnlp "
                             f"cannot run (supported: {', '.join(MODULE_TYPES)})")
        modules[str(entry.get("name", entry.get("idx")))] = MODULE_TYPES[kind].load(name_or_path, entry.get("path", ""),
                                                                                    location)
    return modules, saved
