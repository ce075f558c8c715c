# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Quantization configs with HF transformers' class names and fields, for weight-only int8/int4.

`from_pretrained(..., quantization_config=QuantoConfig(weights="int4"))` and the
bitsandbytes recipes (`BitsAndBytesConfig(load_in_4bit=True, ...)`) both map onto the CPU
kernels of core.nn.QuantizedLinear. Activations stay float32. Each config rounds as its library
does: quanto's int8 is symmetric with one scale per output row and its int4 is affine (a scale
and an offset per group of 128 inputs, its default); bitsandbytes' layers (its own format on
disk, see integrations/bitsandbytes.py) are LLM.int8's rows and its NF4 or FP4 codebook with one
absmax per block of 64 weights, double-quantized on request. What differs from bitsandbytes,
said plainly: its int8 product, which also rounds the activations to int8 and keeps outlier
columns (`llm_int8_threshold`) in float16, is not reproduced. The config is written into
config.json as HF writes it, so a saved quantized model reloads quantized.
"""
import copy
import json

from ... import core

_QUANTO = "quanto"
_BITS_AND_BYTES = "bitsandbytes"
# The group sizes tried, in order after the config's own, for layers whose input width the
# preferred size does not divide (576 = 9 x 64, SmolLM's width, is not a multiple of 128).
_FALLBACK_GROUP_SIZES = (128, 64, 32)


class QuantizationConfigMixin:
    """Dict and JSON round trips shared by the configs (HF's QuantizationConfigMixin)."""

    quant_method = None

    @classmethod
    def from_dict(cls, config_dict, return_unused_kwargs=False, **kwargs):
        config = cls(**{**config_dict, **kwargs})
        return (config, {}) if return_unused_kwargs else config

    def to_dict(self):
        return {key.lstrip("_"): _jsonable(value) for key, value in self.__dict__.items()}

    def to_json_string(self, use_diff=True):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file_path):
        with open(json_file_path, "w", encoding="utf-8") as fh:
            fh.write(self.to_json_string())

    def update(self, **kwargs):
        """Set the attributes named in kwargs that exist; return the others."""
        unused = {}
        for key, value in kwargs.items():
            if hasattr(self, key):
                setattr(self, key, value)
            else:
                unused[key] = value
        return unused

    def __iter__(self):
        yield from copy.deepcopy(self.to_dict()).items()

    def __repr__(self):
        return f"{type(self).__name__} {self.to_json_string()}"

    def __eq__(self, other):
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    # What the CPU formats need, answered by each config.
    @property
    def weight_bits(self):
        raise NotImplementedError

    @property
    def group_size(self):
        """The preferred int4 group size (None: int8, per output row)."""
        return None

    @property
    def scheme(self):
        """How the integers stand for values (core.nn.functional.quantized.SCHEMES)."""
        return "symmetric"

    @property
    def skip_modules(self):
        """Module names (patterns, HF's matching) kept in float; None: HF's defaults (lm_head, tied)."""
        return None

    def group_size_for(self, in_features):
        """The group size used for a layer `in_features` wide: the preferred one when it
        divides the width, else the largest of 128, 64, 32 that does; None keeps the layer in
        float (int4 only: int8 needs no groups)."""
        if self.weight_bits == 8:
            return None
        for size in (self.group_size,) + _FALLBACK_GROUP_SIZES:
            if in_features % size == 0:
                return size
        return None


def _jsonable(value):
    if isinstance(value, core.dtype):
        return str(value).split(".")[-1]
    return value


class QuantoConfig(QuantizationConfigMixin):
    """optimum-quanto's config: `weights` "int8" (symmetric, per output row) or "int4" (affine
    in groups of 128: quanto's default MaxOptimizer, scale = (max - min) / 15 and offset = min
    per group); HF also accepts "float8" and "int2", which have no CPU kernel here.
    `activations` must stay None (float32)."""

    def __init__(self, weights="int8", activations=None, modules_to_not_convert=None, **kwargs):
        self.quant_method = _QUANTO
        self.weights = weights
        self.activations = activations
        self.modules_to_not_convert = modules_to_not_convert
        self.post_init()

    def post_init(self):
        accepted = ["float8", "int8", "int4", "int2"]
        if self.weights not in accepted:
            raise ValueError(f"Only support weights in {accepted} but found {self.weights}")
        if self.weights not in ("int8", "int4"):
            raise NotImplementedError(f"weights={self.weights!r} has no CPU kernel in mindnlp: use 'int8' or 'int4'")
        if self.activations not in (None, "int8", "float8"):
            raise ValueError(f"Only support activations in [None, 'int8', 'float8'] but found {self.activations}")
        if self.activations is not None:
            raise NotImplementedError("mindnlp quantizes weights only: activations stay float32 (activations=None)")

    @property
    def weight_bits(self):
        return 8 if self.weights == "int8" else 4

    @property
    def group_size(self):
        return None if self.weights == "int8" else 128

    @property
    def scheme(self):
        return "symmetric" if self.weights == "int8" else "affine"

    @property
    def skip_modules(self):
        return self.modules_to_not_convert


class BitsAndBytesConfig(QuantizationConfigMixin):
    """bitsandbytes' config, so copied QLoRA recipes and its `*-bnb-4bit` checkpoints run on a
    CPU: load_in_8bit gives LLM.int8's int8 rows (the weight rounded to float16, then to 127
    levels of each row's absmax), load_in_4bit its `bnb_4bit_quant_type` codebook ("nf4" or
    "fp4", 4-bit codes times one absmax per block of 64 weights of the flattened weight).
    `bnb_4bit_use_double_quant` stores those absmax values as bitsandbytes does, in 8-bit
    blocks of 256 around their mean (its dynamic map), and computes with their decoded values;
    the kernels read them decoded to float32. `bnb_4bit_compute_dtype` is recorded; products
    compute in float32 whatever it says (float16/bfloat16 are storage dtypes on CPU)."""

    def __init__(self, load_in_8bit=False, load_in_4bit=False, llm_int8_threshold=6.0, llm_int8_skip_modules=None,
                 llm_int8_enable_fp32_cpu_offload=False, llm_int8_has_fp16_weight=False, bnb_4bit_compute_dtype=None,
                 bnb_4bit_quant_type="fp4", bnb_4bit_use_double_quant=False, bnb_4bit_quant_storage=None, **kwargs):
        self.quant_method = _BITS_AND_BYTES
        if load_in_4bit and load_in_8bit:
            raise ValueError("load_in_4bit and load_in_8bit are both True, but only one can be used at the same time")
        self._load_in_8bit = load_in_8bit
        self._load_in_4bit = load_in_4bit
        self.llm_int8_threshold = llm_int8_threshold
        self.llm_int8_skip_modules = llm_int8_skip_modules
        self.llm_int8_enable_fp32_cpu_offload = llm_int8_enable_fp32_cpu_offload
        self.llm_int8_has_fp16_weight = llm_int8_has_fp16_weight
        self.bnb_4bit_quant_type = bnb_4bit_quant_type
        self.bnb_4bit_use_double_quant = bnb_4bit_use_double_quant
        self.bnb_4bit_compute_dtype = _as_dtype(bnb_4bit_compute_dtype, core.float32, "bnb_4bit_compute_dtype")
        self.bnb_4bit_quant_storage = _as_dtype(bnb_4bit_quant_storage, core.uint8, "bnb_4bit_quant_storage")
        self.post_init()

    @property
    def load_in_4bit(self):
        return self._load_in_4bit

    @load_in_4bit.setter
    def load_in_4bit(self, value):
        if not isinstance(value, bool):
            raise TypeError("load_in_4bit must be a boolean")
        if self.load_in_8bit and value:
            raise ValueError("load_in_4bit and load_in_8bit are both True, but only one can be used at the same time")
        self._load_in_4bit = value

    @property
    def load_in_8bit(self):
        return self._load_in_8bit

    @load_in_8bit.setter
    def load_in_8bit(self, value):
        if not isinstance(value, bool):
            raise TypeError("load_in_8bit must be a boolean")
        if self.load_in_4bit and value:
            raise ValueError("load_in_4bit and load_in_8bit are both True, but only one can be used at the same time")
        self._load_in_8bit = value

    def post_init(self):
        for name in ("load_in_4bit", "load_in_8bit", "llm_int8_enable_fp32_cpu_offload", "llm_int8_has_fp16_weight",
                     "bnb_4bit_use_double_quant"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a boolean")
        if not isinstance(self.llm_int8_threshold, (int, float)):
            raise TypeError("llm_int8_threshold must be a float")
        if self.llm_int8_skip_modules is not None and not isinstance(self.llm_int8_skip_modules, list):
            raise TypeError("llm_int8_skip_modules must be a list of strings")
        if not isinstance(self.bnb_4bit_quant_type, str):
            raise TypeError("bnb_4bit_quant_type must be a string")
        if self.bnb_4bit_quant_type not in ("fp4", "nf4"):
            raise ValueError(f"bnb_4bit_quant_type must be 'fp4' or 'nf4', got {self.bnb_4bit_quant_type!r}")

    def is_quantizable(self):
        return self.load_in_8bit or self.load_in_4bit

    def quantization_method(self):
        if self.load_in_8bit:
            return "llm_int8"
        if self.load_in_4bit:
            return self.bnb_4bit_quant_type
        return None

    def to_dict(self):
        output = super().to_dict()
        output["load_in_4bit"] = self.load_in_4bit
        output["load_in_8bit"] = self.load_in_8bit
        return output

    @property
    def weight_bits(self):
        if not self.is_quantizable():
            raise ValueError("BitsAndBytesConfig quantizes nothing: set load_in_8bit=True or load_in_4bit=True")
        return 8 if self.load_in_8bit else 4

    @property
    def group_size(self):
        return None if self.load_in_8bit else 64

    @property
    def scheme(self):
        return "symmetric" if self.load_in_8bit else self.bnb_4bit_quant_type

    @property
    def skip_modules(self):
        return self.llm_int8_skip_modules


def _as_dtype(value, default, name):
    if value is None:
        return default
    if isinstance(value, str):
        dtype = getattr(core, value, None)
        if not isinstance(dtype, core.dtype):
            raise ValueError(f"{name} must name a dtype, got {value!r}")
        return dtype
    if isinstance(value, core.dtype):
        return value
    raise ValueError(f"{name} must be a string or a dtype")


_CONFIG_CLASSES = {_QUANTO: QuantoConfig, _BITS_AND_BYTES: BitsAndBytesConfig}


def quantization_config_from_dict(config):
    """The config object for a config.json's `quantization_config` (a dict) or the object itself."""
    if isinstance(config, QuantizationConfigMixin):
        return config
    if not isinstance(config, dict):
        raise TypeError(f"quantization_config must be a QuantoConfig, a BitsAndBytesConfig or a dict, got "
                        f"{type(config).__name__}")
    method = config.get("quant_method")
    if method not in _CONFIG_CLASSES:
        raise NotImplementedError(f"quant_method {method!r} is not supported by mindnlp; supported: "
                                  f"{sorted(_CONFIG_CLASSES)}")
    fields = {k: v for k, v in config.items() if k != "quant_method"}
    return _CONFIG_CLASSES[method](**fields)
