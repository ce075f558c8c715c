# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""AutoTokenizer: pick the tokenizer class a checkpoint asks for and load it.

The class comes from tokenizer_config.json's `tokenizer_class`, else from config.json's
`tokenizer_class` or `model_type`. A class this library does not have falls back to the generic
`PreTrainedTokenizerFast` when the checkpoint has a tokenizer.json (which fully describes the
tokenizer); without one, the error names the missing class.
"""
import json

from ...tokenization_utils_base import FULL_TOKENIZER_FILE, TOKENIZER_CONFIG_FILE
from ...tokenization_utils_fast import PreTrainedTokenizerFast
from ...tokenization_utils_sentencepiece import SentencePieceBackend
from ...utils.hub import cached_file
from ..albert.tokenization_albert import AlbertTokenizerFast
from ..bert.tokenization_bert import BertTokenizerFast
from ..camembert.tokenization_camembert import CamembertTokenizerFast
from ..deberta_v2.tokenization_deberta_v2 import DebertaV2TokenizerFast
from ..distilbert.tokenization_distilbert import DistilBertTokenizerFast
from ..gemma.tokenization_gemma import GemmaTokenizerFast
from ..gpt2.tokenization_gpt2 import GPT2TokenizerFast
from ..llama.tokenization_llama import LlamaTokenizerFast
from ..marian.tokenization_marian import MarianTokenizer
from ..mbart.tokenization_mbart import MBartTokenizer
from ..mbart50.tokenization_mbart50 import MBart50Tokenizer
from ..mpnet.tokenization_mpnet import MPNetTokenizerFast
from ..gpt_neox.tokenization_gpt_neox import GPTNeoXTokenizerFast
from ..qwen2.tokenization_qwen2 import Qwen2TokenizerFast
from ..roberta.tokenization_roberta import RobertaTokenizerFast
from ..t5.tokenization_t5 import T5TokenizerFast
from ..whisper.tokenization_whisper import WhisperTokenizer

# model_type -> tokenizer class, for checkpoints whose tokenizer_config.json names no class.
TOKENIZER_MAPPING = {
    "camembert": CamembertTokenizerFast,
    "mpnet": MPNetTokenizerFast,
    "deberta-v2": DebertaV2TokenizerFast,
    "albert": AlbertTokenizerFast,
    "bart": RobertaTokenizerFast,
    "bert": BertTokenizerFast,
    "distilbert": DistilBertTokenizerFast,
    "electra": BertTokenizerFast,
    "roberta": RobertaTokenizerFast,
    "gpt2": GPT2TokenizerFast,
    "llama": LlamaTokenizerFast,
    "marian": MarianTokenizer,
    "mbart": MBartTokenizer,
    "mistral": LlamaTokenizerFast,
    "mixtral": LlamaTokenizerFast,
    "gemma": GemmaTokenizerFast,
    "gemma2": GemmaTokenizerFast,
    "gemma3": GemmaTokenizerFast,
    "gemma3_text": GemmaTokenizerFast,
    "phi3": LlamaTokenizerFast,
    "qwen2": Qwen2TokenizerFast,
    "qwen2_moe": Qwen2TokenizerFast,
    "qwen3": Qwen2TokenizerFast,
    "qwen3_moe": Qwen2TokenizerFast,
    "starcoder2": GPT2TokenizerFast,
    "gpt_neox": GPTNeoXTokenizerFast,
    "opt": GPT2TokenizerFast,
    "falcon": PreTrainedTokenizerFast,
    "t5": T5TokenizerFast,
    "mt5": T5TokenizerFast,
    "whisper": WhisperTokenizer,
}

# `tokenizer_class` names as HF writes them (v5 drops the "Fast" suffix that v4 wrote).
TOKENIZER_CLASSES = {
    cls.__name__.removesuffix("Fast"): cls
    for cls in (AlbertTokenizerFast, BertTokenizerFast, CamembertTokenizerFast, DebertaV2TokenizerFast, DistilBertTokenizerFast,
                MPNetTokenizerFast, RobertaTokenizerFast, GPT2TokenizerFast, GPTNeoXTokenizerFast, LlamaTokenizerFast,
                GemmaTokenizerFast, Qwen2TokenizerFast, T5TokenizerFast, MarianTokenizer, MBartTokenizer,
                MBart50Tokenizer, WhisperTokenizer)
}
TOKENIZER_CLASSES["PreTrainedTokenizer"] = PreTrainedTokenizerFast
TOKENIZER_CLASSES["TokenizersBackend"] = PreTrainedTokenizerFast
# HF v5 saves a generic sentencepiece tokenizer (a tokenizer.model, no tokenizer.json) under this name.
TOKENIZER_CLASSES["SentencePieceBackend"] = SentencePieceBackend


def tokenizer_class_from_name(name):
    """The class for a `tokenizer_class` value ("BertTokenizer", "BertTokenizerFast", ...), or None."""
    return TOKENIZER_CLASSES.get(name.removesuffix("Fast"))


def _uses_byte_level(tokenizer_file):
    """Whether a tokenizer.json is byte-level (GPT-2 style) anywhere in its pipeline."""
    with open(tokenizer_file, encoding="utf-8") as f:
        spec = json.load(f)
    return '"ByteLevel"' in json.dumps([spec.get("pre_tokenizer"), spec.get("decoder")])


class AutoTokenizer:
    """`AutoTokenizer.from_pretrained(name_or_path)` returns the checkpoint's tokenizer class,
    loaded. Not instantiable itself."""

    def __init__(self):
        raise OSError("AutoTokenizer is not instantiated directly: use AutoTokenizer.from_pretrained(name_or_path)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *inputs, config=None, tokenizer_type=None, **kwargs):
        """Load the tokenizer of a local folder, cached or hub checkpoint. `tokenizer_type` forces
        a model type's class; other keyword arguments go to the tokenizer (`revision`,
        `cache_dir`, `local_files_only`, `token`, `subfolder`, `mirror`, `endpoint`, or overrides
        such as `padding_side="left"`)."""
        kwargs.pop("use_fast", None)
        kwargs.pop("trust_remote_code", None)
        tokenizer_class = None
        if tokenizer_type is not None:
            if tokenizer_type not in TOKENIZER_MAPPING:
                raise ValueError(f"unknown tokenizer_type {tokenizer_type!r}; known: {sorted(TOKENIZER_MAPPING)}")
            tokenizer_class = TOKENIZER_MAPPING[tokenizer_type]
            return tokenizer_class.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)

        path = str(pretrained_model_name_or_path)
        hub = {key: kwargs[key] for key in ("revision", "cache_dir", "local_files_only", "token", "subfolder",
                                            "mirror", "endpoint") if key in kwargs}
        gguf_file = kwargs.pop("gguf_file", None)
        if gguf_file is not None:
            from ...configuration_utils import resolve_gguf_file
            from ...modeling_gguf_utils import GGUFFile, gguf_tokenizer

            for key in hub:
                kwargs.pop(key)
            gguf = GGUFFile(resolve_gguf_file(path, gguf_file, hub))
            return gguf_tokenizer(gguf, TOKENIZER_MAPPING.get(gguf.model_type, PreTrainedTokenizerFast), **kwargs)

        def read_json(filename):
            resolved = cached_file(path, filename, raise_if_missing=False, **hub)
            if resolved is None:
                return {}
            with open(resolved, encoding="utf-8") as f:
                return json.load(f)

        class_name = read_json(TOKENIZER_CONFIG_FILE).get("tokenizer_class")
        model_type = getattr(config, "model_type", None)
        if class_name is None:
            if config is None:
                model_config = read_json("config.json")
                class_name = model_config.get("tokenizer_class")
                model_type = model_config.get("model_type")
            else:
                class_name = getattr(config, "tokenizer_class", None)

        tokenizer_file = cached_file(path, FULL_TOKENIZER_FILE, raise_if_missing=False, **hub)
        if class_name is not None:
            tokenizer_class = tokenizer_class_from_name(class_name)
            if tokenizer_class is None and tokenizer_file is None:
                raise ValueError(
                    f"{path} asks for the tokenizer class {class_name!r}, which mindnlp does not have, and has no "
                    "tokenizer.json to load generically"
                )
        elif model_type is not None:
            tokenizer_class = TOKENIZER_MAPPING.get(model_type)
            if tokenizer_class is None and tokenizer_file is None:
                raise ValueError(
                    f"no tokenizer class for model_type {model_type!r} and {path} has no tokenizer.json; "
                    f"known model types: {sorted(TOKENIZER_MAPPING)}"
                )
        elif tokenizer_file is None:
            raise ValueError(
                f"cannot tell which tokenizer {path} needs: it has no tokenizer_config.json tokenizer_class, "
                "no config.json model_type and no tokenizer.json"
            )
        if tokenizer_class is None:
            tokenizer_class = PreTrainedTokenizerFast
        # Many byte-level BPE checkpoints (Llama 3 style) still name LlamaTokenizer, whose
        # sentencepiece-style defaults do not fit them; their tokenizer.json says everything.
        if tokenizer_class is LlamaTokenizerFast and tokenizer_file is not None and _uses_byte_level(tokenizer_file):
            tokenizer_class = PreTrainedTokenizerFast
        return tokenizer_class.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)
