# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PreTrainedConfig`: a model's hyper-parameters, read from and written to config.json.

The on-disk format and the in-memory behaviour follow Hugging Face transformers v5, so that a
config.json written by either library loads in the other with the same `to_dict()`.

Fields are declared the way transformers v5 declares them: annotated class attributes with a
default, e.g. `hidden_size: int = 768`. Plain (unannotated) class attributes such as
`model_type` and `attribute_map` are class-level settings, never serialised. Building a config
sets every field (from the keyword arguments or the default), checks each value against its
annotation, hands the remaining keyword arguments to `__post_init__` (which keeps unknown keys
as attributes, so they are written back on save), and finally runs `validate()`.
"""
import copy
import inspect
import json
import logging
import math
import os
import types
import typing


from ..core.serialization import write_text_atomic
from ..hub import CheckpointError
from . import modeling_rope_utils
from .utils import CONFIG_NAME
from .utils.hub import cached_file
from .utils.quantization_config import QuantizationConfigMixin

logger = logging.getLogger(__name__)

# The Hugging Face transformers release whose file formats this package reads and writes; it is
# what `transformers_version` records in saved files, so that transformers reads them as its own.
TRANSFORMERS_VERSION = "5.23.0"

ATTN_IMPLEMENTATIONS = ("eager", "sdpa")
EXPERTS_IMPLEMENTATIONS = ("eager", "batched_mm", "grouped_mm")

ALLOWED_LAYER_TYPES = (
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "linear_attention",
)

# Keys that live in `__dict__` for bookkeeping and are never written to config.json.
_PRIVATE_KEYS = ("_attn_implementation_internal", "_experts_implementation_internal", "_commit_hash", "_auto_class")

# Python's json writes inf/nan as bare Infinity/NaN, which strict JSON readers reject;
# transformers stores them as {"__float__": "Infinity"} and so do we.
_FLOAT_TAG = "__float__"
_TAGGED_FLOATS = {"Infinity": float("inf"), "-Infinity": float("-inf"), "NaN": float("nan")}


def _type_name(expected):
    return getattr(expected, "__name__", None) or str(expected)


def check_type(name, value, expected):
    """Raise TypeError when `value` does not match the annotation `expected`.

    Understands what config annotations use: plain classes (bool is not accepted as int),
    `X | Y`, `Optional`, `Literal`, `list[X]`, `tuple[X, ...]`, `dict[K, V]`, `typing.Any`, and TypedDicts
    (checked as plain dicts).
    """
    if expected is typing.Any:
        return
    if expected is None or expected is type(None):
        if value is not None:
            raise TypeError(f"config field {name!r} must be None, got {value!r}")
        return
    origin = typing.get_origin(expected)
    args = typing.get_args(expected)
    if origin in (typing.Union, types.UnionType):
        for option in args:
            try:
                check_type(name, value, option)
                return
            except TypeError:
                continue
        allowed = " | ".join(_type_name(option) for option in args)
        raise TypeError(f"config field {name!r} must be {allowed}, got {type(value).__name__} {value!r}")
    if origin is typing.Literal:
        # `True == 1`, so compare types too: Literal[1] must not accept True.
        if not any(value == arg and type(value) is type(arg) for arg in args):
            raise TypeError(f"config field {name!r} must be one of {list(args)}, got {value!r}")
        return
    if origin is list:
        if not isinstance(value, list):
            raise TypeError(f"config field {name!r} must be a list, got {type(value).__name__} {value!r}")
        if args:
            for index, item in enumerate(value):
                check_type(f"{name}[{index}]", item, args[0])
        return
    if origin is tuple:
        if not isinstance(value, tuple):
            raise TypeError(f"config field {name!r} must be a tuple, got {type(value).__name__} {value!r}")
        # tuple[X, ...] is any length of X; tuple[X, Y] is exactly one of each, in order
        items = args[:1] * len(value) if len(args) == 2 and args[1] is Ellipsis else args
        if items and len(items) != len(value):
            raise TypeError(f"config field {name!r} must have {len(items)} items, got {value!r}")
        for index, (item, annotation) in enumerate(zip(value, items)):
            check_type(f"{name}[{index}]", item, annotation)
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise TypeError(f"config field {name!r} must be a dict, got {type(value).__name__} {value!r}")
        if args:
            for key, item in value.items():
                check_type(f"{name} key", key, args[0])
                check_type(f"{name}[{key!r}]", item, args[1])
        return
    if typing.is_typeddict(expected):
        expected = dict
    if isinstance(expected, type):
        if (expected is int and isinstance(value, bool)) or not isinstance(value, expected):
            raise TypeError(f"config field {name!r} must be {expected.__name__}, got {type(value).__name__} {value!r}")
        return
    raise TypeError(f"config field {name!r} has an annotation this checker does not understand: {expected!r}")


def _encode_special_floats(obj):
    if isinstance(obj, float):
        if math.isnan(obj):
            return {_FLOAT_TAG: "NaN"}
        if math.isinf(obj):
            return {_FLOAT_TAG: "Infinity" if obj > 0 else "-Infinity"}
        return obj
    if isinstance(obj, dict):
        return {key: _encode_special_floats(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encode_special_floats(value) for value in obj]
    return obj


def _decode_special_floats(obj):
    if isinstance(obj, dict):
        if set(obj) == {_FLOAT_TAG} and obj[_FLOAT_TAG] in _TAGGED_FLOATS:
            return _TAGGED_FLOATS[obj[_FLOAT_TAG]]
        return {key: _decode_special_floats(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_decode_special_floats(value) for value in obj]
    return obj


def read_json_file(path):
    """Load a JSON config file, with an error that names the file when it is not valid JSON."""
    try:
        with open(path, encoding="utf-8") as reader:
            return _decode_special_floats(json.load(reader))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"the config file at {path} is not valid JSON: {err}") from err


def dtype_to_str(value):
    """'float16' for 'float16', torch.float16 or a mindnlp.core dtype (whose str is 'x.float16')."""
    if value is None or isinstance(value, (str, int)):
        return value
    return str(value).rsplit(".", 1)[-1]


def _as_core_dtype(name):
    """The mindnlp.core dtype called `name` ('float16', 'bfloat16', ...)."""
    from .. import core

    dtype = getattr(core, name, None)
    if not isinstance(dtype, core.dtype):
        raise ValueError(f"dtype must name a floating-point or integer dtype such as 'float16', got {name!r}")
    return dtype


class NotAField:
    """Marks a field of the parent config that this family's config does not have, as HF's
    modular files do: `pretraining_tp = NotAField()` in `MistralConfig(LlamaConfig)` leaves it out
    of Mistral's keyword arguments, attributes and config.json (a config.json that still carries
    the key keeps it, as any unknown key)."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        raise AttributeError(f"{(owner or type(instance)).__name__} has no field {self.name!r}")


class PreTrainedConfig:
    """Base class of every model configuration.

    Class-level settings a model config overrides:
    - `model_type`: the key written to config.json and used by `AutoConfig`.
    - `attribute_map`: aliases, e.g. GPT-2's `{"hidden_size": "n_embd"}`; reading and writing
      `config.hidden_size` reads and writes `config.n_embd`.
    - `default_theta`: the RoPE base used when a config gives none.

    Fields common to all models are declared below; `output_attentions`, `num_labels`,
    `name_or_path`, `use_return_dict`, `torch_dtype` and `_attn_implementation` are properties
    layered on them.
    """

    model_type = ""
    attribute_map = {}
    default_theta = modeling_rope_utils.DEFAULT_THETA
    # Composite configs (a model made of sub-models) name their parts' config classes here,
    # e.g. {"text_config": LlamaConfig}; `base_config_key` is the key a part is stored under
    # in its parent's config.json, so that the part alone loads from the parent's file.
    sub_configs = {}
    base_config_key = ""
    has_no_defaults_at_init = False
    # How a base model's modules would shard for tensor / pipeline / expert parallelism
    # ({module pattern: style}); metadata that models assemble into `model.tp_plan`.
    base_model_tp_plan = None
    base_model_pp_plan = None
    base_model_ep_plan = None
    # Fields whose None stands for a value computed from the other fields, {name: function of
    # the config}, filled in before `__post_init__`; a subclass's config inherits them and skips
    # those it marks `NotAField()`.
    derived_defaults = {}

    transformers_version: str | None = None
    architectures: list[str] | None = None
    output_hidden_states: bool | None = False
    return_dict: bool | None = True
    dtype: typing.Any = None
    chunk_size_feed_forward: int = 0
    is_encoder_decoder: bool = False
    id2label: dict | None = None
    label2id: dict | None = None
    problem_type: typing.Literal["regression", "single_label_classification", "multi_label_classification"] | None = (
        None
    )

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._fields = cls._collect_fields()
        if "__init__" not in cls.__dict__:
            cls.__init__ = _init_with_signature(cls._fields)

    @classmethod
    def _collect_fields(cls):
        """{name: (annotation, default)} over the class and its bases, base fields first; a
        subclass re-annotates a field to change its default and marks one it lacks `NotAField()`."""
        fields = {}
        for klass in reversed(cls.__mro__):
            if not (isinstance(klass, type) and issubclass(klass, PreTrainedConfig)):
                continue
            for name, value in vars(klass).items():
                if isinstance(value, NotAField):
                    fields.pop(name, None)
            for name, annotation in inspect.get_annotations(klass).items():
                if name not in klass.__dict__:
                    raise TypeError(f"{klass.__name__}.{name} is annotated but has no default value")
                fields[name] = (annotation, klass.__dict__[name])
        return fields

    def __init__(self, **kwargs):
        for name, (_, default) in self._fields.items():
            value = kwargs.pop(name) if name in kwargs else copy.deepcopy(default)
            setattr(self, name, value)
        for name, derive in self.derived_defaults.items():
            if name in self._fields and getattr(self, name) is None:
                setattr(self, name, derive(self))
        self.__post_init__(**kwargs)
        self.validate()

    def __post_init__(self, **kwargs):
        """Derive what depends on several fields and absorb the keyword arguments that are not
        fields: v4 spellings, properties, and unknown keys (kept as attributes)."""
        # v4 configs on the hub write `torch_dtype`; if both are given, `dtype` wins.
        torch_dtype = kwargs.pop("torch_dtype", None)
        if self.dtype is None and torch_dtype is not None:
            self.dtype = torch_dtype
        if isinstance(self.dtype, str) and self.dtype != "auto":
            # a dtype object, as from_pretrained's dtype argument is; config.json stores the name
            self.dtype = _as_core_dtype(self.dtype)

        num_labels = kwargs.pop("num_labels", None)
        if self.id2label is None:
            self.num_labels = num_labels if num_labels is not None else 2
        else:
            # JSON object keys are always strings; label ids are ints.
            self.id2label = {int(key): value for key, value in self.id2label.items()}
            if num_labels is not None and num_labels != len(self.id2label):
                # As in HF, an explicit num_labels wins: the labels become LABEL_0..LABEL_{n-1}.
                logger.warning(
                    "You passed `num_labels=%d` which is incompatible to the `id2label` map of length `%d`.",
                    num_labels,
                    len(self.id2label),
                )
                self.num_labels = num_labels
        if self.problem_type == "single_label_classification" and self.num_labels == 1:
            raise ValueError(
                'problem_type="single_label_classification" needs num_labels > 1: use num_labels=2 for binary '
                'classification, or problem_type="regression" for a single-output head'
            )

        if "rope_parameters" in self._fields:
            kwargs = modeling_rope_utils.convert_rope_params_to_dict(self, kwargs)

        # Generation settings belong in generation_config.json; old config.json files still carry
        # them, and transformers drops them on load, so we do too.
        from .generation.configuration_utils import DEFAULT_GENERATION_PARAMS

        for key in DEFAULT_GENERATION_PARAMS:
            kwargs.pop(key, None)

        self._name_or_path = str(kwargs.pop("name_or_path", ""))
        kwargs.pop("_commit_hash", None)
        self._attn_implementation = kwargs.pop("attn_implementation", None)
        self._experts_implementation = kwargs.pop("experts_implementation", None)
        self._output_attentions = False
        self.output_attentions = kwargs.pop("output_attentions", False)

        for key, value in kwargs.items():
            if key in ("_attn_implementation_internal", "_post_init_done"):
                continue  # internal state some writers leaked into config.json
            setattr(self, key, value)

    # ------------------------------------------------------------------ attribute access

    def __setattr__(self, key, value):
        key = type(self).attribute_map.get(key, key)
        field = type(self)._fields.get(key)
        if field is not None:
            check_type(key, value, field[0])
        super().__setattr__(key, value)

    def __getattr__(self, key):
        # Only reached when normal lookup fails, i.e. for aliases and for missing attributes.
        attribute_map = type(self).attribute_map
        if key in attribute_map:
            return getattr(self, attribute_map[key])
        raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")

    def __delattr__(self, key):
        super().__delattr__(type(self).attribute_map.get(key, key))

    def __iter__(self):
        return iter(self.__dict__)

    def __eq__(self, other):
        return isinstance(other, PreTrainedConfig) and self.__dict__ == other.__dict__

    def __repr__(self):
        return f"{type(self).__name__} {self.to_json_string()}"

    @property
    def name_or_path(self):
        return self._name_or_path

    @name_or_path.setter
    def name_or_path(self, value):
        self._name_or_path = str(value)  # a Path would not serialise to JSON

    @property
    def num_labels(self):
        """Number of classification labels: derived from `id2label`, never stored on its own."""
        return len(self.id2label) if self.id2label is not None else None

    @num_labels.setter
    def num_labels(self, num_labels):
        if self.id2label is None or self.num_labels != num_labels:
            self.id2label = {i: f"LABEL_{i}" for i in range(num_labels)}
            self.label2id = {label: i for i, label in self.id2label.items()}

    @property
    def output_attentions(self):
        return self._output_attentions

    @output_attentions.setter
    def output_attentions(self, value):
        # Attention weights only exist when attention is computed explicitly: asking for them
        # before an implementation is chosen picks eager, as transformers does.
        if value and self._attn_implementation is None:
            self._attn_implementation = "eager"
        if value and self._attn_implementation != "eager":
            raise ValueError(
                f"output_attentions=True needs attn_implementation='eager', not {self._attn_implementation!r}"
            )
        self._output_attentions = value

    @property
    def _attn_implementation(self):
        return self._attn_implementation_internal

    @_attn_implementation.setter
    def _attn_implementation(self, value):
        """None means "not chosen": the model picks sdpa when it supports it, as transformers does.

        Set on a composite config it applies to every sub-config too; a dict sets each part
        ({"": own, "text_config": ..., ...}) and leaves unnamed parts as they are.
        """
        self._set_recursively("_attn_implementation_internal", value, ATTN_IMPLEMENTATIONS, "attn_implementation")

    @property
    def _experts_implementation(self):
        return self.__dict__.get("_experts_implementation_internal")

    @_experts_implementation.setter
    def _experts_implementation(self, value):
        """How mixture-of-experts layers run (see integrations.moe); set recursively like _attn_implementation."""
        self._set_recursively("_experts_implementation_internal", value, EXPERTS_IMPLEMENTATIONS,
                              "experts_implementation")

    def _set_recursively(self, attribute, value, allowed, name):
        own = value.get("", self.__dict__.get(attribute)) if isinstance(value, dict) else value
        if own is not None and own not in allowed:
            raise ValueError(f"{name} must be one of {list(allowed)} in mindnlp, got {own!r}")
        self.__dict__[attribute] = own
        for key in self.sub_configs:
            sub_config = self.__dict__.get(key)
            if isinstance(sub_config, PreTrainedConfig):
                part = value.get(key, sub_config.__dict__.get(attribute)) if isinstance(value, dict) else value
                sub_config._set_recursively(attribute, part, allowed, name)

    @property
    def use_return_dict(self):
        """v4 name of `return_dict`, still read by ported model code."""
        return self.return_dict

    @property
    def torch_dtype(self):
        """v4 name of `dtype`."""
        return self.dtype

    @torch_dtype.setter
    def torch_dtype(self, value):
        self.dtype = value

    @property
    def rope_scaling(self):
        """v4 name of `rope_parameters` (v5 keeps `rope_theta` inside the same dict)."""
        return getattr(self, "rope_parameters", None)

    @rope_scaling.setter
    def rope_scaling(self, value):
        self.rope_parameters = value
        if value is not None:
            modeling_rope_utils.standardize_rope_params(self)

    # ------------------------------------------------------------------ validation

    def validate(self):
        """Check the config as a whole; raise ValueError naming the inconsistency.

        Runs at the end of construction and before saving. Each field's type was already
        checked when it was set.
        """
        for name, (annotation, _) in self._fields.items():
            check_type(name, self.__dict__[name], annotation)
        self.validate_output_attentions()
        self.validate_architecture()
        self.validate_token_ids()
        self.validate_layer_type()
        self.validate_rope()

    def validate_output_attentions(self):
        if self.output_attentions and self._attn_implementation not in ("eager", None):
            raise ValueError(
                f"output_attentions=True needs attn_implementation='eager', not {self._attn_implementation!r}"
            )

    def validate_architecture(self):
        """Shape constraints between fields; model configs extend this."""
        if all(hasattr(self, name) for name in ("head_dim", "num_heads", "embed_dim")):
            if self.head_dim * self.num_heads != self.embed_dim:
                raise ValueError(
                    f"embed_dim ({self.embed_dim}) must equal head_dim ({self.head_dim}) x num_heads ({self.num_heads})"
                )

    def validate_token_ids(self):
        """Warn (not raise: hub configs carry e.g. pad_token_id=-1) on special-token ids outside
        the vocabulary."""
        text_config = self.get_text_config(decoder=True)
        vocab_size = getattr(text_config, "vocab_size", None)
        if vocab_size is None:
            return
        for name in list(text_config):
            value = getattr(text_config, name)
            if name.endswith("_token_id") and isinstance(value, int) and not 0 <= value < vocab_size:
                logger.warning(
                    "%s must be None or an id in the vocabulary [0, %d), got %d", name, vocab_size, value
                )

    def validate_layer_type(self):
        layer_types = getattr(self, "layer_types", None)
        if layer_types is None or not hasattr(self, "num_hidden_layers"):
            return
        unknown = [layer_type for layer_type in layer_types if layer_type not in ALLOWED_LAYER_TYPES]
        if unknown:
            raise ValueError(f"layer_types entries must be in {list(ALLOWED_LAYER_TYPES)}, got {unknown}")
        if self.num_hidden_layers is not None and self.num_hidden_layers != len(layer_types):
            raise ValueError(
                f"num_hidden_layers ({self.num_hidden_layers}) must equal the number of layer_types ({len(layer_types)})"
            )

    def validate_rope(self):
        modeling_rope_utils.validate_rope(self)

    def standardize_rope_params(self):
        modeling_rope_utils.standardize_rope_params(self)

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        """Load a config from a local folder, a JSON file, the HF cache, or a hub repo id.

        Keyword arguments `cache_dir`, `revision`, `local_files_only`, `token`, `subfolder`,
        `mirror` and `endpoint` choose where the file comes from. Every other keyword overrides
        the loaded value when it names a config attribute; with `return_unused_kwargs=True` the
        ones that do not are returned as a dict next to the config.
        """
        config_dict, kwargs = cls.get_config_dict(pretrained_model_name_or_path, **kwargs)
        if config_dict.get("model_type") not in (None, cls.model_type) and cls.model_type:
            logger.warning(
                "loading a config of model_type %r into %s (model_type %r); this works only if the two share fields",
                config_dict["model_type"],
                cls.__name__,
                cls.model_type,
            )
        return cls.from_dict(config_dict, **kwargs)

    @classmethod
    def get_config_dict(cls, pretrained_model_name_or_path, **kwargs):
        """Resolve and read config.json (or, with gguf_file=, a GGUF file's metadata); return (the
        config dict, the kwargs not used for locating it)."""
        location = {
            key: kwargs.pop(key)
            for key in ("cache_dir", "revision", "local_files_only", "token", "subfolder", "mirror", "endpoint")
            if key in kwargs
        }
        path = str(pretrained_model_name_or_path)
        gguf_file = kwargs.pop("gguf_file", None)
        if gguf_file is not None:
            from .modeling_gguf_utils import GGUFFile

            return GGUFFile(resolve_gguf_file(path, gguf_file, location)).config_dict(), kwargs
        resolved = path if os.path.isfile(path) else cached_file(path, CONFIG_NAME, **location)
        config_dict = read_json_file(resolved)
        if not isinstance(config_dict, dict):
            raise OSError(f"the config file at {resolved} must hold a JSON object, got {type(config_dict).__name__}")
        if "model_type" in kwargs and config_dict.get("model_type") != kwargs["model_type"]:
            logger.warning(
                "%s has model_type=%r, overridden by model_type=%r",
                resolved,
                config_dict.get("model_type"),
                kwargs["model_type"],
            )
            config_dict["model_type"] = kwargs["model_type"]
        return config_dict, kwargs

    @classmethod
    def from_dict(cls, config_dict, **kwargs):
        """Build a config from a dict such as config.json's; kwargs override as in from_pretrained."""
        return_unused_kwargs = kwargs.pop("return_unused_kwargs", False)
        config_dict = dict(config_dict)
        config_dict.pop("model_type", None)  # a class attribute, not an init argument
        # These only take effect at construction (they feed __post_init__), so they go in first.
        for key in ("num_labels", "attn_implementation", "output_attentions", "name_or_path"):
            if key in kwargs:
                config_dict[key] = kwargs.pop(key)
        for key in ("dtype", "torch_dtype"):
            if key in kwargs:
                value = kwargs.pop(key)
                if value != "auto":  # "auto" means: keep what the checkpoint says
                    config_dict[key] = dtype_to_str(value)
        config = cls(**config_dict)

        unused = {}
        for key, value in kwargs.items():
            if hasattr(config, key):
                setattr(config, key, value)
            else:
                unused[key] = value
        if return_unused_kwargs:
            return config, unused
        return config

    @classmethod
    def from_json_file(cls, json_file):
        return cls(**{k: v for k, v in read_json_file(json_file).items() if k != "model_type"})

    # ------------------------------------------------------------------ saving

    def to_dict(self):
        """Every attribute, JSON-ready, plus `model_type` and `transformers_version`."""
        output = copy.deepcopy(self.__dict__)
        output["model_type"] = type(self).model_type
        output["transformers_version"] = TRANSFORMERS_VERSION
        for key, value in output.items():
            if isinstance(value, PreTrainedConfig):
                value = value.to_dict()
                del value["transformers_version"]
            elif isinstance(value, tuple):
                value = json.loads(json.dumps(value))  # tuples, nested too, become lists as in JSON
            elif isinstance(value, QuantizationConfigMixin):
                value = value.to_dict()
            output[key] = value
        self._remove_private_keys(output)
        output["dtype"] = dtype_to_str(output.get("dtype"))
        return output

    def to_diff_dict(self):
        """What config.json holds: model-specific fields always, common fields only where they
        differ from the defaults of `PreTrainedConfig` or of this class."""
        config_dict = self.to_dict()
        base_defaults = PreTrainedConfig().to_dict()
        class_defaults = {name: default for name, (_, default) in self._fields.items() if default is not None}
        diff = {}
        for key, value in config_dict.items():
            if (
                key not in base_defaults
                or key == "transformers_version"
                or value != base_defaults[key]
                or value != class_defaults.get(key, value)
            ):
                diff[key] = value
        diff.pop("_name_or_path", None)
        return diff

    @staticmethod
    def _remove_private_keys(d):
        for key in _PRIVATE_KEYS:
            d.pop(key, None)
        if "_output_attentions" in d:
            d["output_attentions"] = d.pop("_output_attentions")

    def to_json_string(self, use_diff=True):
        config_dict = self.to_diff_dict() if use_diff else self.to_dict()
        return json.dumps(_encode_special_floats(config_dict), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file_path, use_diff=True):
        write_text_atomic(json_file_path, self.to_json_string(use_diff=use_diff))

    def save_pretrained(self, save_directory):
        """Write `save_directory`/config.json (atomically), creating the folder if needed."""
        save_directory = str(save_directory)
        if os.path.isfile(save_directory):
            raise OSError(f"save_pretrained needs a directory, but {save_directory} is a file")
        generation_parameters = self._get_generation_parameters()
        if generation_parameters:
            raise ValueError(
                "generation parameters are set on the model config; they belong in the generation config "
                f"(model.generation_config): {generation_parameters}"
            )
        self.validate()
        os.makedirs(save_directory, exist_ok=True)
        path = os.path.join(save_directory, CONFIG_NAME)
        self.to_json_file(path, use_diff=True)
        return path

    def _get_generation_parameters(self):
        """Generation settings stored as loose attributes (not declared fields) of this config."""
        from .generation.configuration_utils import DEFAULT_GENERATION_PARAMS

        found = {}
        for key in DEFAULT_GENERATION_PARAMS:
            if key == "use_cache" or key in self._fields:
                continue
            value = self.__dict__.get(key)
            if value is not None:
                found[key] = value
        return found

    # ------------------------------------------------------------------ editing

    def update(self, config_dict):
        """Set each key of `config_dict` as an attribute (aliases and type checks apply)."""
        for key, value in config_dict.items():
            setattr(self, key, value)

    def update_from_string(self, update_str):
        """Apply "n_embd=10,resid_pdrop=0.2,scale_attn_weights=false" to existing attributes,
        parsing each value as the type the attribute already has."""
        for item in update_str.split(","):
            key, _, raw = item.partition("=")
            if not hasattr(self, key):
                raise ValueError(f"{key!r} is not an attribute of this config")
            old = getattr(self, key)
            if isinstance(old, bool):
                if raw.lower() in ("true", "1", "y", "yes"):
                    value = True
                elif raw.lower() in ("false", "0", "n", "no"):
                    value = False
                else:
                    raise ValueError(f"cannot read {raw!r} as a boolean for {key!r}")
            elif isinstance(old, (int, float, str)):
                value = type(old)(raw)
            else:
                raise TypeError(f"update_from_string only sets int, float, bool and str values; {key!r} is {old!r}")
            setattr(self, key, value)

    def get_text_config(self, decoder=None, encoder=None):
        """The config of the text part: a nested `text_config`/`decoder`/`generator`
        (`text_encoder` for the encoder side) where the model has one, else this config."""
        decoder_names = ("decoder", "generator", "text_config")
        encoder_names = ("text_encoder",)
        if decoder == encoder:
            names = encoder_names + decoder_names
        elif decoder:
            names = decoder_names
        else:
            names = encoder_names
        found = [name for name in names if isinstance(self.__dict__.get(name), PreTrainedConfig)]
        if len(found) > 1:
            raise ValueError(f"this config holds several text configs {found}; pick one explicitly")
        return self.__dict__[found[0]] if found else self


def build_sub_config(value, config_class):
    """A part of a composite config (its `sub_configs`) from what config.json (a dict) or a caller
    (a config, or None for the part's defaults) gives."""
    if value is None:
        return config_class()
    if isinstance(value, dict):
        return config_class(**{key: item for key, item in value.items() if key != "model_type"})
    if not isinstance(value, config_class):
        raise TypeError(f"expected a {config_class.__name__} or a dict, got {type(value).__name__}")
    return value


def attention_heads(config):
    """`num_key_value_heads`' default: one key/value head per query head (no grouping)."""
    return config.num_attention_heads


def hidden_size_per_head(config):
    """`head_dim`'s default: the hidden size split evenly over the attention heads."""
    return config.hidden_size // config.num_attention_heads


def _init_with_signature(fields):
    """An __init__ for a config class whose signature lists its fields as keyword arguments
    with their defaults, so that `inspect.signature(Config.__init__)` shows what a config
    takes, as for HF's hand-written constructors."""

    def __init__(self, **kwargs):
        PreTrainedConfig.__init__(self, **kwargs)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
                   for name, (_, default) in fields.items()]
    parameters.append(inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD))
    __init__.__signature__ = inspect.Signature(parameters)
    return __init__


PreTrainedConfig._fields = PreTrainedConfig._collect_fields()

# transformers v4 spelling; both names are the same class.
PretrainedConfig = PreTrainedConfig


def resolve_gguf_file(name_or_path, gguf_file, location):
    """The local path of `gguf_file` inside a folder, the HF cache or a hub repo (or a path itself)."""
    if os.path.isfile(gguf_file):
        return gguf_file
    if os.path.isfile(name_or_path) and name_or_path.endswith(".gguf"):
        return name_or_path
    return cached_file(name_or_path, gguf_file, **location)
