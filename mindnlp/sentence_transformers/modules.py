# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The modules a sentence-transformers folder chains: Transformer → Pooling → Dense → Normalize.

Each module reads and writes the files sentence-transformers keeps for it (the Transformer in
the folder's root, the others in `<idx>_<Name>/`), takes the running `features` dict and
adds its output to it, as sentence-transformers' modules do: the Transformer adds
`token_embeddings`, Pooling turns them into `sentence_embedding`, Dense and Normalize rewrite
that. Both config generations are read: the 2.x-5.x layout (`max_seq_length` /
`do_lower_case` in sentence_bert_config.json, `pooling_mode_*_tokens` flags) and 6.x's
(`pooling_mode` names, the lengths kept in the tokenizer's own config).
"""
import inspect
import json
import os

from .. import core
from ..safetensors import load_file, save_file
from ..transformers import AutoModel, AutoTokenizer
from ..transformers.utils.hub import cached_file
from ..core.nn import functional as F


def read_json(name_or_path, filename, subfolder, location):
    """The parsed JSON file of a module's folder, or None when the folder has no such file."""
    path = cached_file(name_or_path, filename, subfolder=subfolder, raise_if_missing=False, **location)
    if path is None:
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write_json(folder, filename, content):
    with open(os.path.join(folder, filename), "w", encoding="utf-8") as fh:
        json.dump(content, fh, indent=2)
        fh.write("\n")


class Transformer(core.nn.Module):
    """A Hugging Face encoder and its tokenizer: text → `input_ids`... → `token_embeddings`.

    The sequence limit lives on the tokenizer (`model_max_length`), as in sentence-transformers,
    so that tokenizing truncates to it and saving the tokenizer records it.
    """

    # The names sentence-transformers gave this file for each model family before settling on one.
    CONFIG_FILES = ("sentence_bert_config.json", "sentence_roberta_config.json", "sentence_distilbert_config.json",
                    "sentence_camembert_config.json", "sentence_albert_config.json",
                    "sentence_xlm-roberta_config.json", "sentence_xlnet_config.json")

    def __init__(self, auto_model, tokenizer, max_seq_length=None, do_lower_case=False):
        super().__init__()
        self.auto_model = auto_model
        self.tokenizer = tokenizer
        self.do_lower_case = do_lower_case
        if max_seq_length is not None:
            tokenizer.model_max_length = max_seq_length
        else:
            limit = getattr(auto_model.config, "max_position_embeddings", -1)
            if limit != -1:
                tokenizer.model_max_length = min(tokenizer.model_max_length, limit)
        if do_lower_case:
            _lowercase_before_normalizing(tokenizer)
        forward_parameters = inspect.signature(auto_model.forward).parameters
        self._model_inputs = {"input_ids", "attention_mask", "token_type_ids"} & set(forward_parameters)

    @classmethod
    def load(cls, name_or_path, subfolder, location):
        config = {}
        for filename in cls.CONFIG_FILES:
            config = read_json(name_or_path, filename, subfolder, location)
            if config is not None:
                break
        config = config or {}
        task = config.get("transformer_task", "feature-extraction")
        if task != "feature-extraction":
            raise ValueError(f"{name_or_path}: the Transformer module's transformer_task is {task!r}; "
                             "only 'feature-extraction' (token embeddings) is supported")
        hub = dict(location, subfolder=subfolder)
        return cls(AutoModel.from_pretrained(name_or_path, **hub), AutoTokenizer.from_pretrained(name_or_path, **hub),
                   max_seq_length=config.get("max_seq_length"), do_lower_case=config.get("do_lower_case", False))

    @property
    def max_seq_length(self):
        return self.tokenizer.model_max_length

    @max_seq_length.setter
    def max_seq_length(self, value):
        self.tokenizer.model_max_length = value

    def tokenize(self, texts):
        return dict(self.tokenizer(texts, padding=True, truncation="longest_first", return_tensors="pt"))

    def token_counts(self, texts, chunk=4096):
        """How many tokens `tokenize` gives each text before padding (a chunk of texts at a time,
        so that the token lists of a large corpus are never all held at once)."""
        counts = []
        for start in range(0, len(texts), chunk):
            encoded = self.tokenizer(texts[start:start + chunk], truncation="longest_first",
                                     return_attention_mask=False, return_token_type_ids=False)
            counts.extend(len(ids) for ids in encoded["input_ids"])
        return counts

    def forward(self, features):
        inputs = {name: value for name, value in features.items() if name in self._model_inputs}
        features["token_embeddings"] = self.auto_model(**inputs).last_hidden_state
        return features

    def get_embedding_dimension(self):
        return self.auto_model.config.hidden_size

    def save(self, folder):
        self.auto_model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        write_json(folder, "sentence_bert_config.json",
                   {"max_seq_length": self.max_seq_length, "do_lower_case": self.do_lower_case})


def _lowercase_before_normalizing(tokenizer):
    """Put a Lowercase step in front of the tokenizer's normalizer unless it already has one, as
    sentence-transformers does for `do_lower_case` (a BertNormalizer's own lowercase flag does
    not count, so such a tokenizer gets the extra step too; lowercasing twice changes nothing)."""
    from tokenizers.normalizers import Lowercase, Sequence

    backend = tokenizer.backend_tokenizer
    current = backend.normalizer
    if isinstance(current, Lowercase) or (isinstance(current, Sequence) and any(isinstance(n, Lowercase)
                                                                                for n in current)):
        return
    steps = [Lowercase()] + (list(current) if isinstance(current, Sequence) else [current] if current else [])
    backend.normalizer = Sequence(steps)


class Pooling(core.nn.Module):
    """Token embeddings → one vector per text, by one or several modes concatenated in the given order.

    With include_prompt=False the prompt's tokens (features["prompt_length"], counted from the
    first real token) are masked out before pooling, for models trained that way (INSTRUCTOR).
    """

    MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
    # The 2.x-5.x config flags, in the order those versions concatenated the modes.
    LEGACY_FLAGS = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
                    "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
                    "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}

    def __init__(self, embedding_dimension, pooling_mode="mean", include_prompt=True):
        super().__init__()
        modes = (pooling_mode,) if isinstance(pooling_mode, str) else tuple(pooling_mode)
        unknown = [mode for mode in modes if mode not in self.MODES]
        if unknown or not modes:
            raise ValueError(f"unknown pooling mode(s) {unknown or modes}: use one or more of {', '.join(self.MODES)}")
        self.embedding_dimension = embedding_dimension
        self.modes = modes
        self.include_prompt = include_prompt

    @classmethod
    def load(cls, name_or_path, subfolder, location):
        config = read_json(name_or_path, "config.json", subfolder, location)
        if config is None:
            raise OSError(f"{name_or_path}: the Pooling module's folder {subfolder!r} has no config.json")
        dimension = config.get("embedding_dimension", config.get("word_embedding_dimension"))
        modes = config.get("pooling_mode")
        if modes is None:
            modes = [mode for flag, mode in cls.LEGACY_FLAGS.items() if config.get(flag)] or ["mean"]
        return cls(dimension, modes, include_prompt=config.get("include_prompt", True))

    def forward(self, features):
        tokens = features["token_embeddings"]
        mask = features.get("attention_mask")
        if mask is None or mask.shape[-1] != tokens.shape[1]:
            mask = core.ones(tokens.shape[:-1], dtype=core.int64, device=tokens.device)
        # Index of each row's first real token: not 0 when the tokenizer pads on the left.
        starts = mask.to(core.int32).argmax(dim=1)
        pooled_mask = mask
        prompt_length = features.get("prompt_length")
        if not self.include_prompt and prompt_length:
            positions = core.arange(mask.shape[1], device=mask.device).unsqueeze(0)
            pooled_mask = mask.masked_fill(positions < (starts + prompt_length).unsqueeze(1), 0)
        compute_dtype = core.float32 if tokens.dtype in (core.float16, core.bfloat16) else tokens.dtype
        pooled = [self._pool(mode, tokens, pooled_mask, starts, compute_dtype).to(tokens.dtype) for mode in self.modes]
        features["sentence_embedding"] = core.cat(pooled, dim=-1)
        return features

    @staticmethod
    def _pool(mode, tokens, mask, starts, compute_dtype):
        hidden = tokens.shape[-1]
        if mode == "cls":
            first = mask.to(core.int32).argmax(dim=1)
            return core.gather(tokens, 1, first.view(-1, 1, 1).expand(-1, 1, hidden)).squeeze(1)
        if mode == "max":
            return tokens.masked_fill((mask == 0).unsqueeze(-1), float("-inf")).max(dim=1).values
        if mode in ("mean", "mean_sqrt_len_tokens"):
            weights = mask.unsqueeze(-1).to(compute_dtype)
            summed = (tokens.to(compute_dtype) * weights).sum(dim=1)
            count = weights.sum(dim=1).clamp(min=1e-9)
            return summed / (count if mode == "mean" else count.sqrt())
        if mode == "weightedmean":
            # Position weights 1, 2, ... counted from the first real token; prompt tokens
            # masked out keep the weights of the tokens after them unchanged.
            positions = core.arange(1, tokens.shape[1] + 1, dtype=compute_dtype, device=tokens.device).view(1, -1, 1)
            weights = mask.unsqueeze(-1).to(compute_dtype) * (positions - starts.view(-1, 1, 1).to(compute_dtype))
            summed = (tokens.to(compute_dtype) * weights).sum(dim=1)
            return summed / weights.sum(dim=1).clamp(min=1e-9)
        # lasttoken: the last attended position of each row (the last position of a row with none).
        length = tokens.shape[1]
        found, from_end = mask.flip(1).max(dim=1)
        from_end = core.where(found == 0, core.full_like(from_end, length - 1), from_end)
        last = (length - 1 - from_end).view(-1, 1, 1).expand(-1, 1, hidden)
        masked = tokens * mask.unsqueeze(-1).to(tokens.dtype)
        return core.gather(masked, 1, last).squeeze(1)

    def get_embedding_dimension(self):
        return self.embedding_dimension * len(self.modes)

    def save(self, folder):
        """Write the 2.x-5.x flags, which every sentence-transformers release reads, unless the
        modes' order is one those flags cannot express; then 6.x's list of names."""
        if self.modes == tuple(mode for mode in self.LEGACY_FLAGS.values() if mode in self.modes):
            config = {"word_embedding_dimension": self.embedding_dimension}
            config.update({flag: mode in self.modes for flag, mode in self.LEGACY_FLAGS.items()})
        else:
            config = {"embedding_dimension": self.embedding_dimension, "pooling_mode": list(self.modes)}
        config["include_prompt"] = self.include_prompt
        write_json(folder, "config.json", config)


class Dense(core.nn.Module):
    """A linear layer + activation on one feature (the sentence embedding), optionally residual.

    The activation is named in the config by its torch class path
    (`torch.nn.modules.activation.Tanh`); the same class of mindnlp.core.nn stands in for it.
    """

    def __init__(self, in_features, out_features, bias=True, activation_function=None,
                 module_input_name="sentence_embedding", module_output_name=None, use_residual=False):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.bias = bias
        self.linear = core.nn.Linear(in_features, out_features, bias=bias)
        self.activation_function = core.nn.Tanh() if activation_function is None else activation_function
        self.module_input_name = module_input_name
        self.module_output_name = module_output_name or module_input_name
        self.use_residual = use_residual
        if use_residual and in_features != out_features:
            self.residual = core.nn.Linear(in_features, out_features, bias=False)

    @classmethod
    def load(cls, name_or_path, subfolder, location):
        config = read_json(name_or_path, "config.json", subfolder, location)
        if config is None:
            raise OSError(f"{name_or_path}: the Dense module's folder {subfolder!r} has no config.json")
        activation = config.get("activation_function")
        layer = cls(config["in_features"], config["out_features"], bias=config.get("bias", True),
                    activation_function=None if activation is None else _activation(activation),
                    module_input_name=config.get("module_input_name", "sentence_embedding"),
                    module_output_name=config.get("module_output_name"),
                    use_residual=config.get("use_residual", False))
        state = _load_weights(name_or_path, subfolder, location)
        missing, unexpected = layer.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise ValueError(f"{name_or_path}: the Dense weights in {subfolder!r} do not fit its config "
                             f"(missing {sorted(missing)}, unexpected {sorted(unexpected)})")
        return layer

    def forward(self, features):
        x = features[self.module_input_name]
        out = self.activation_function(self.linear(x))
        if self.use_residual:
            out = out + (self.residual(x) if self.in_features != self.out_features else x)
        features[self.module_output_name] = out
        return features

    def get_embedding_dimension(self):
        return self.out_features

    def save(self, folder):
        config = {"in_features": self.in_features, "out_features": self.out_features, "bias": self.bias,
                  "activation_function": f"torch.nn.{type(self.activation_function).__name__}",
                  "module_input_name": self.module_input_name, "module_output_name": self.module_output_name}
        if self.use_residual:
            config["use_residual"] = True
        write_json(folder, "config.json", config)
        save_file({name: tensor.contiguous() for name, tensor in self.state_dict().items()},
                  os.path.join(folder, "model.safetensors"))


def _activation(class_path):
    name = class_path.rsplit(".", 1)[-1]
    activation = getattr(core.nn, name, None)
    if not class_path.startswith("torch.") or not (isinstance(activation, type)
                                                   and issubclass(activation, core.nn.Module)):
        raise ValueError(f"Dense activation {class_path!r} is not a torch.nn module class that mindnlp.core.nn has")
    return activation()


def _load_weights(name_or_path, subfolder, location):
    path = cached_file(name_or_path, "model.safetensors", subfolder=subfolder, raise_if_missing=False, **location)
    if path is not None:
        return load_file(path)
    path = cached_file(name_or_path, "pytorch_model.bin", subfolder=subfolder, raise_if_missing=False, **location)
    if path is None:
        raise OSError(f"{name_or_path}: the folder {subfolder!r} has neither model.safetensors nor pytorch_model.bin")
    return core.load(path)


class Normalize(core.nn.Module):
    """Scales one feature (the sentence embedding) to unit L2 length, so dot product = cosine."""

    def __init__(self, module_input_name="sentence_embedding", module_output_name=None):
        super().__init__()
        self.module_input_name = module_input_name
        self.module_output_name = module_output_name or module_input_name

    @classmethod
    def load(cls, name_or_path, subfolder, location):
        # Releases before 6.x wrote no config for Normalize: the folder may be empty or absent.
        config = read_json(name_or_path, "config.json", subfolder, location) or {}
        return cls(config.get("module_input_name", "sentence_embedding"), config.get("module_output_name"))

    def forward(self, features):
        x = features.get(self.module_input_name)
        if x is not None:
            features[self.module_output_name] = F.normalize(x, p=2, dim=-1)
        return features

    def save(self, folder):
        write_json(folder, "config.json",
                   {"module_input_name": self.module_input_name, "module_output_name": self.module_output_name})


MODULE_TYPES = {cls.__name__: cls for cls in (Transformer, Pooling, Dense, Normalize)}
