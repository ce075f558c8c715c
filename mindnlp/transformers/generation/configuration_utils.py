# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`GenerationConfig`: how `generate()` decodes, read from and written to generation_config.json.

As in Hugging Face transformers v5, every setting defaults to None ("not set"). `generate()`
fills what is still unset from `DEFAULT_GENERATION_PARAMS`, e.g.
`config.update(defaults_only=True, **DEFAULT_GENERATION_PARAMS)`, so a file records only what
the model author chose and later default changes reach old checkpoints.

Beside it live the settings objects a GenerationConfig carries: `WatermarkingConfig` and
`SynthIDTextWatermarkingConfig` (`watermarking_config=`, built into logits processors by
`generate()`) and `CompileConfig` (`compile_config=`, HF's torch.compile options).
"""
import copy
import dataclasses
import json
import logging
import os
from enum import Enum

from ..configuration_utils import TRANSFORMERS_VERSION, read_json_file, write_text_atomic
from ..utils import GENERATION_CONFIG_NAME
from ..utils import logging as transformers_logging
from ..utils.hub import cached_file

logger = logging.getLogger(__name__)

# Values `generate()` uses for settings that neither the model nor the caller gave.
DEFAULT_GENERATION_PARAMS = {
    "max_length": 20,
    "min_length": 0,
    "do_sample": False,
    "use_cache": True,
    "early_stopping": False,
    "num_beams": 1,
    "temperature": 1.0,
    "top_k": 50,
    "top_p": 1.0,
    "typical_p": 1.0,
    "repetition_penalty": 1.0,
    "length_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "bad_words_ids": None,
    "num_return_sequences": 1,
    "output_scores": False,
    "return_dict_in_generate": False,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "remove_invalid_values": False,
    "exponential_decay_length_penalty": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "epsilon_cutoff": 0.0,
    "eta_cutoff": 0.0,
    "encoder_repetition_penalty": 1.0,
    "num_assistant_tokens": 20,
    "num_assistant_tokens_schedule": "constant",
    "assistant_confidence_threshold": 0.4,
    "assistant_lookbehind": 10,
    "target_lookbehind": 10,
    "num_beam_groups": 1,
    "diversity_penalty": 0.0,
}

# Every setting transformers' GenerationConfig declares, grouped as it documents them.
GENERATION_FIELDS = (
    # output length
    "max_length", "max_new_tokens", "min_length", "min_new_tokens", "early_stopping", "max_time", "stop_strings",
    # strategy
    "do_sample", "num_beams", "use_mtp",
    # cache
    "use_cache", "cache_implementation", "cache_config", "max_cache_len",
    # logits manipulation
    "temperature", "top_k", "top_p", "min_p", "top_h", "typical_p", "epsilon_cutoff", "eta_cutoff",
    "repetition_penalty", "encoder_repetition_penalty", "length_penalty", "no_repeat_ngram_size", "bad_words_ids",
    "renormalize_logits", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
    "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens", "sequence_bias",
    "token_healing", "guidance_scale", "watermarking_config",
    # outputs
    "num_return_sequences", "output_attentions", "output_hidden_states", "output_scores", "output_logits",
    "return_dict_in_generate",
    # special tokens
    "pad_token_id", "bos_token_id", "eos_token_id",
    # encoder-decoder
    "encoder_no_repeat_ngram_size", "decoder_start_token_id",
    # assisted generation
    "is_assistant", "num_assistant_tokens", "num_assistant_tokens_schedule", "assistant_confidence_threshold",
    "prompt_lookup_num_tokens", "max_matching_ngram_size", "assistant_early_exit", "assistant_lookbehind",
    "target_lookbehind", "assistant_ensemble_weight", "speculation_type",
    # performance
    "compile_config", "disable_compile", "continuous_batching_config",
    # superseded strategies, still found in files
    "low_memory", "penalty_alpha", "dola_layers", "diversity_penalty", "num_beam_groups", "constraints",
    "force_words_ids",
    "prefill_chunk_size",
)  # fmt: skip

CACHE_IMPLEMENTATIONS = (
    "static",
    "offloaded_static",
    "sliding_window",
    "hybrid",
    "hybrid_chunked",
    "offloaded_hybrid",
    "offloaded_hybrid_chunked",
    "dynamic",
    "dynamic_full",
    "offloaded",
    "quantized",
    "paged",
)

# Fields describing where a config came from, not how to generate.
METADATA_FIELDS = ("_from_model_config", "_commit_hash", "_original_object_hash", "transformers_version")

EXTRA_OUTPUT_FLAGS = ("output_attentions", "output_hidden_states", "output_scores", "output_logits")

# Arguments of generate() itself that people put in the config by mistake.
_GENERATE_ONLY_ARGUMENTS = (
    "logits_processor",
    "stopping_criteria",
    "prefix_allowed_tokens_fn",
    "synced_gpus",
    "assistant_model",
    "streamer",
    "negative_prompt_ids",
    "negative_prompt_attention_mask",
)


class GenerationMode(str, Enum):
    """The decoding strategy a GenerationConfig asks for (`GenerationConfig.get_generation_mode`)."""

    CONTRASTIVE_SEARCH = "contrastive_search"
    GREEDY_SEARCH = "greedy_search"
    SAMPLE = "sample"
    ASSISTED_GENERATION = "assisted_generation"
    DOLA_GENERATION = "dola_generation"
    BEAM_SEARCH = "beam_search"
    BEAM_SAMPLE = "beam_sample"
    CONSTRAINED_BEAM_SEARCH = "constrained_beam_search"
    GROUP_BEAM_SEARCH = "group_beam_search"

    def __str__(self):
        return self.value


def _user_set(outer, inner, user_set_attributes):
    """Whether to warn that `inner` (e.g. top_p) is ignored given `outer` (e.g. do_sample).

    Stay quiet only when the caller set `outer` but `inner` came from the model's file: asking
    for greedy decoding on a model whose file sets top_p is not a mistake.
    """
    if user_set_attributes is None:
        return True
    return not (outer in user_set_attributes and inner not in user_set_attributes)


class GenerationConfig:
    """Decoding settings for `generate()`; keyword arguments set fields, unknown ones are kept as
    attributes (model-specific settings) and written back on save."""

    def __init__(self, **kwargs):
        user_set_attributes = set(kwargs)
        for name in GENERATION_FIELDS:
            setattr(self, name, kwargs.pop(name, None))
        self.watermarking_config = _as_watermarking_config(self.watermarking_config)
        kwargs.pop("_commit_hash", None)
        self._from_model_config = kwargs.pop("_from_model_config", None)
        self.transformers_version = kwargs.pop("transformers_version", None)
        # Built from a model config, the leftovers are that model's hyper-parameters: drop them.
        if not self._from_model_config:
            for key, value in kwargs.items():
                setattr(self, key, value)
        elif kwargs.get("force_bos_token_to_be_generated", False):
            self.forced_bos_token_id = self.bos_token_id
        self.validate(user_set_attributes=user_set_attributes)

    def __hash__(self):
        return hash(self.to_json_string(ignore_metadata=True))

    def __eq__(self, other):
        if not isinstance(other, GenerationConfig):
            return False
        return self.to_json_string(use_diff=False, ignore_metadata=True) == other.to_json_string(
            use_diff=False, ignore_metadata=True
        )

    def __repr__(self):
        return f"{type(self).__name__} {self.to_json_string(ignore_metadata=True)}"

    @staticmethod
    def _get_default_generation_params():
        """The values `generate()` uses for settings nobody set (a fresh copy)."""
        return dict(DEFAULT_GENERATION_PARAMS)

    def get_generation_mode(self, assistant_model=None):
        """The `GenerationMode` these settings ask for, as HF decides it: beam or not, sampling or
        not, then assisted generation (an assistant model, prompt lookup or early exit) or DoLa
        on top of greedy search and sampling. Which modes `generate()` runs is its own business."""
        if self.constraints is not None or self.force_words_ids is not None:
            mode = GenerationMode.CONSTRAINED_BEAM_SEARCH
        elif self.num_beams is None or self.num_beams == 1:
            if self.do_sample is True:
                mode = GenerationMode.SAMPLE
            elif (self.top_k is not None and self.top_k > 1 and self.penalty_alpha is not None
                  and self.penalty_alpha > 0):
                mode = GenerationMode.CONTRASTIVE_SEARCH
            else:
                mode = GenerationMode.GREEDY_SEARCH
        elif self.num_beam_groups is not None and self.num_beam_groups > 1:
            mode = GenerationMode.GROUP_BEAM_SEARCH
        elif self.do_sample is True:
            mode = GenerationMode.BEAM_SAMPLE
        else:
            mode = GenerationMode.BEAM_SEARCH

        if assistant_model is not None or self.prompt_lookup_num_tokens is not None \
                or self.assistant_early_exit is not None:
            if mode in (GenerationMode.GREEDY_SEARCH, GenerationMode.SAMPLE):
                mode = GenerationMode.ASSISTED_GENERATION
            else:
                logger.warning(
                    "You've set `assistant_model`, which triggers assisted generate. Currently, assisted generate "
                    "is only supported with Greedy Search and Sample. However, the base decoding mode (based on "
                    f"current flags) is {mode} -- some of the set flags will be ignored."
                )
        if self.dola_layers is not None:
            if mode in (GenerationMode.GREEDY_SEARCH, GenerationMode.SAMPLE):
                mode = GenerationMode.DOLA_GENERATION
            else:
                logger.warning(
                    "You've set `dola_layers`, which triggers DoLa generate. Currently, DoLa generate "
                    "is only supported with Greedy Search and Sample.  However, the base decoding mode (based on "
                    f"current flags) is {mode} -- some of the set flags will be ignored."
                )
        return mode

    def validate(self, strict=False, user_set_attributes=None):
        """Raise ValueError for settings that cannot work; for settings that are merely ignored
        (e.g. top_p without sampling) warn, or raise when `strict`.

        `user_set_attributes` names the fields the caller set explicitly; ignored-setting
        warnings are limited to those (see `_user_set`).
        """
        if self.early_stopping not in (None, True, False, "never"):
            raise ValueError(f"early_stopping must be a boolean or 'never', got {self.early_stopping!r}")
        if self.max_new_tokens is not None and self.max_new_tokens <= 0:
            raise ValueError(f"max_new_tokens must be greater than 0, got {self.max_new_tokens}")
        if self.assistant_ensemble_weight is not None and not 0.0 < self.assistant_ensemble_weight < 1.0:
            raise ValueError(
                f"assistant_ensemble_weight must be in the open interval (0, 1), got {self.assistant_ensemble_weight}"
            )
        if self.cache_implementation is not None and self.cache_implementation not in CACHE_IMPLEMENTATIONS:
            raise ValueError(
                f"cache_implementation {self.cache_implementation!r} is not one of {list(CACHE_IMPLEMENTATIONS)}"
            )
        if self.compile_config is not None and not isinstance(self.compile_config, CompileConfig):
            raise ValueError(
                f"You provided `compile_config` as an instance of {type(self.compile_config)}, but it must be an "
                "instance of `CompileConfig`."
            )
        if self.watermarking_config is not None:
            _as_watermarking_config(self.watermarking_config).validate()

        issues = {}
        if self.pad_token_id is not None and self.pad_token_id < 0:
            issues["pad_token_id"] = (
                f"pad_token_id should be >= 0, got {self.pad_token_id}; batched generation with padding will fail"
            )

        if self.do_sample is not True:
            sampling_only = {
                "temperature": 1.0,
                "top_p": 1.0,
                "min_p": None,
                "top_h": None,
                "typical_p": 1.0,
                "top_k": 50,
                "epsilon_cutoff": 0.0,
                "eta_cutoff": 0.0,
            }
            for name, neutral in sampling_only.items():
                value = getattr(self, name)
                if value is not None and value != neutral and _user_set("do_sample", name, user_set_attributes):
                    issues[name] = (
                        f"`do_sample` is set not to set `True`. However, `{name}` is set to `{value}` -- this flag is "
                        "only used in sample-based generation modes. You should set `do_sample=True` or unset "
                        f"`{name}`."
                    )

        if self.num_beams is None or self.num_beams == 1:
            beam_only = {"early_stopping": False, "length_penalty": 1.0}
            for name, neutral in beam_only.items():
                value = getattr(self, name)
                if value is not None and value != neutral and _user_set("num_beams", name, user_set_attributes):
                    issues[name] = (
                        f"`num_beams` is set to {self.num_beams}. However, `{name}` is set to `{value}` -- this flag "
                        "is only used in beam-based generation modes. You should set `num_beams>1` or unset "
                        f"`{name}`."
                    )

        if self.num_return_sequences is not None and self.num_return_sequences > 1:
            if self.num_beams is None or self.num_beams == 1:
                if not self.do_sample:
                    raise ValueError(
                        "Greedy methods (do_sample != True) without beam search do not support "
                        f"`num_return_sequences` different than 1 (got {self.num_return_sequences})."
                    )
            elif self.num_return_sequences > self.num_beams:
                raise ValueError(
                    f"`num_return_sequences` ({self.num_return_sequences}) has to be smaller or equal to `num_beams` "
                    f"({self.num_beams})."
                )

        if self.use_cache is False:
            for name in ("cache_implementation", "cache_config"):
                if getattr(self, name) is not None:
                    issues[name] = (
                        f"You have not set `use_cache` to `True`, but {name} is set to {getattr(self, name)}. "
                        f"{name} will have no effect."
                    )

        if self.return_dict_in_generate is not True:
            for name in EXTRA_OUTPUT_FLAGS:
                if getattr(self, name) is True:
                    issues[name] = (
                        f"`return_dict_in_generate` is NOT set to `True`, but `{name}` is. When "
                        f"`return_dict_in_generate` is not `True`, `{name}` is ignored."
                    )

        if self.suppress_tokens is not None:
            suppressed = set(self.suppress_tokens)
            for name in ("forced_bos_token_id", "forced_eos_token_id"):
                forced = getattr(self, name)
                if forced is None:
                    continue
                forced = {forced} if isinstance(forced, int) else set(forced)
                if forced and forced <= suppressed:
                    raise ValueError(
                        f"every token in {name} ({sorted(forced)}) is also in suppress_tokens: all logits would be "
                        f"-inf at the forcing step. Remove the overlap (to delay EOS, use min_new_tokens)."
                    )

        for name in _GENERATE_ONLY_ARGUMENTS:
            if name in self.__dict__:
                raise ValueError(
                    f"Argument `{name}` is not a valid argument of `GenerationConfig`. It should be passed to "
                    "`generate()` (or a pipeline) directly."
                )

        if issues:
            details = "\n".join(f"- `{name}`: {text}" for name, text in issues.items())
            details += ("\nIf you're using a pretrained model, note that some of these attributes may be set through "
                        "the model's `generation_config.json` file.")
            if strict:
                raise ValueError("GenerationConfig is invalid: \n" + details)
            # A one-line summary at WARNING, the explanations at INFO (as HF logs them).
            summary = f"The following generation flags are not valid and may be ignored: {list(issues)}."
            if transformers_logging.get_verbosity() >= logging.WARNING:
                summary += " Set `TRANSFORMERS_VERBOSITY=info` for more details."
            logger.warning(summary)
            logger.info(details)

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_pretrained(cls, pretrained_model_name, config_file_name=None, **kwargs):
        """Read generation_config.json (or `config_file_name`) from a folder, the HF cache or a
        hub repo. Location keywords as in `PretrainedConfig.from_pretrained`; other keywords
        override settings, and with `return_unused_kwargs=True` the unknown ones come back."""
        config_file_name = config_file_name or GENERATION_CONFIG_NAME
        location = {
            key: kwargs.pop(key)
            for key in ("cache_dir", "revision", "local_files_only", "token", "subfolder", "mirror", "endpoint")
            if key in kwargs
        }
        path = os.path.join(str(pretrained_model_name), str(config_file_name))
        if os.path.isfile(path):
            resolved = path
        else:
            resolved = cached_file(pretrained_model_name, config_file_name, **location)
        config_dict = read_json_file(resolved)
        if not isinstance(config_dict, dict):
            raise OSError(f"the generation config at {resolved} must hold a JSON object")
        if kwargs.pop("_from_model_config", False):
            return cls.from_model_config(config_dict)
        result = cls.from_dict(config_dict, **kwargs)
        config = result[0] if isinstance(result, tuple) else result
        config._original_object_hash = hash(config)  # lets save_pretrained tell edited from pristine
        return result

    @classmethod
    def from_dict(cls, config_dict, **kwargs):
        return_unused_kwargs = kwargs.pop("return_unused_kwargs", False)
        config = cls(**{**config_dict, **kwargs})
        unused_kwargs = config.update(**kwargs)
        if return_unused_kwargs:
            return config, unused_kwargs
        return config

    @classmethod
    def from_model_config(cls, model_config):
        """Build the generation config a model gets when its checkpoint has no
        generation_config.json: special-token ids (and any legacy generation settings) are taken
        from the model config, its text sub-config included."""
        config_dict = model_config if isinstance(model_config, dict) else model_config.to_dict()
        config_dict = {key: value for key, value in config_dict.items() if value is not None}
        config_dict.pop("_from_model_config", None)
        generation_config = cls.from_dict(config_dict, _from_model_config=True)

        if isinstance(model_config, dict):
            text_config = next(
                (model_config[name] for name in ("decoder", "generator", "text_config") if model_config.get(name)),
                model_config,
            )
        else:
            text_config = model_config.get_text_config(decoder=True).to_dict()
        default = GenerationConfig()
        for attr in generation_config.to_dict():
            if attr in text_config and getattr(generation_config, attr) == getattr(default, attr, None):
                setattr(generation_config, attr, text_config[attr])

        if not generation_config.return_dict_in_generate and any(
            getattr(generation_config, flag, False) for flag in EXTRA_OUTPUT_FLAGS
        ):
            generation_config.return_dict_in_generate = True
        generation_config._original_object_hash = hash(generation_config)
        return generation_config

    # ------------------------------------------------------------------ saving

    def to_dict(self):
        output = copy.deepcopy(self.__dict__)
        for key in ("_commit_hash", "_original_object_hash"):
            output.pop(key, None)
        output["transformers_version"] = TRANSFORMERS_VERSION
        return output

    def to_diff_dict(self):
        """Only what differs from `GenerationConfig()`, plus `transformers_version`."""
        default = GenerationConfig().to_dict()
        return {
            key: value
            for key, value in self.to_dict().items()
            if key not in default or key == "transformers_version" or value != default[key]
        }

    def to_json_string(self, use_diff=True, ignore_metadata=False, keys_to_pop=None):
        config_dict = self.to_diff_dict() if use_diff else self.to_dict()
        for key in keys_to_pop or ():
            config_dict.pop(key, None)
        if ignore_metadata:
            for key in METADATA_FIELDS:
                config_dict.pop(key, None)
        # Integer dict keys (e.g. sequence_bias) become strings, as JSON requires; the settings
        # objects (watermarking, compile) are written as their dicts.
        plain = json.loads(json.dumps(config_dict, default=_settings_object_to_dict))
        return json.dumps(plain, indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file_path, use_diff=True, keys_to_pop=None):
        write_text_atomic(json_file_path, self.to_json_string(use_diff=use_diff, keys_to_pop=keys_to_pop))

    def save_pretrained(self, save_directory, config_file_name=None, push_to_hub=False, **kwargs):
        """Write generation_config.json atomically. A config edited since it was loaded must
        pass `validate(strict=True)`; an unedited one is saved as it came, with warnings.

        `compile_config` is not saved (as in HF). Other keyword arguments are HF's options for
        pushing to the Hub, which this method does not do (`push_to_hub=True` raises)."""
        if push_to_hub:
            raise NotImplementedError(
                "GenerationConfig.save_pretrained(push_to_hub=True) is not supported: save to a folder and upload it "
                "with huggingface_hub")
        was_modified = getattr(self, "_original_object_hash", None) != hash(self)
        try:
            self.validate(strict=was_modified)
        except ValueError as err:
            raise ValueError(f"{err}\n\nFix these issues to save the configuration.") from err
        save_directory = str(save_directory)
        if os.path.isfile(save_directory):
            raise OSError(f"save_pretrained needs a directory, but {save_directory} is a file")
        os.makedirs(save_directory, exist_ok=True)
        path = os.path.join(save_directory, config_file_name or GENERATION_CONFIG_NAME)
        self.to_json_file(path, use_diff=True, keys_to_pop=["compile_config"])
        return path

    # ------------------------------------------------------------------ editing

    def update(self, defaults_only=False, allow_custom_entries=False, **kwargs):
        """Set the keyword arguments that name existing settings (with `defaults_only`, only
        those still None; with `allow_custom_entries`, new names too) and return the rest."""
        used = []
        for key, value in kwargs.items():
            if key == "watermarking_config":
                value = _as_watermarking_config(value)
            if hasattr(self, key):
                if not defaults_only or getattr(self, key) is None:
                    setattr(self, key, value)
                    used.append(key)
            elif allow_custom_entries:
                setattr(self, key, value)
                used.append(key)
        self.validate(user_set_attributes=set(used))
        return {key: value for key, value in kwargs.items() if key not in used}


# ---------------------------------------------------------------------- settings objects


def _settings_object_to_dict(obj):
    """JSON fallback for the settings objects a GenerationConfig holds."""
    if isinstance(obj, (BaseWatermarkingConfig, CompileConfig)):
        return obj.to_dict()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _as_watermarking_config(value):
    """A watermarking setting as given (None or a config object), or built from its dict (as a
    saved generation_config.json holds it): SynthID's when it has `ngram_len`, else
    Kirchenbauer's."""
    if isinstance(value, dict):
        kind = SynthIDTextWatermarkingConfig if "ngram_len" in value else WatermarkingConfig
        return kind.from_dict(value)
    return value


_WATERMARK_ARGUMENT_ERROR = (
    "Some of the keys in `watermarking_config` are defined incorrectly. `{key}` should be {correct_value}` "
    "but found {found_value}"
)


class BaseWatermarkingConfig:
    """Settings of a watermarking scheme: a dict-like record (`to_dict`, `update`, JSON) that
    `generate()` turns into a logits processor with `construct_processor(vocab_size, device)`."""

    @classmethod
    def from_dict(cls, config_dict, **kwargs):
        """Build from a dict; keyword arguments naming existing attributes override it."""
        config = cls(**config_dict)
        for key, value in kwargs.items():
            if hasattr(config, key):
                setattr(config, key, value)
        return config

    def to_json_file(self, json_file_path):
        with open(json_file_path, "w", encoding="utf-8") as writer:
            writer.write(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")

    def to_dict(self):
        return copy.deepcopy(self.__dict__)

    def __iter__(self):
        yield from copy.deepcopy(self.__dict__).items()

    def __eq__(self, other):
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None

    def __repr__(self):
        return f"{type(self).__name__} {self.to_json_string()}"

    def to_json_string(self):
        return json.dumps(self.__dict__, indent=2, default=_plain_number) + "\n"

    def update(self, **kwargs):
        """Set the keyword arguments that name existing attributes; others are ignored."""
        for key, value in kwargs.items():
            if hasattr(self, key):
                setattr(self, key, value)

    def validate(self):
        raise NotImplementedError(f"{type(self).__name__} must implement validate")

    def construct_processor(self, vocab_size, device):
        raise NotImplementedError(f"{type(self).__name__} must implement construct_processor")


def _plain_number(obj):
    """JSON fallback for NumPy scalars and arrays (SynthID keys are often given as an array)."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


class WatermarkingConfig(BaseWatermarkingConfig):
    """Kirchenbauer et al.'s "green list" watermark (arXiv 2306.04634), for
    `generate(watermarking_config=...)` and `WatermarkDetector`.

    greenlist_ratio: share of the vocabulary that is green at each step (0.25).
    bias: added to the green tokens' scores (2.0; lower it if quality suffers).
    hashing_key: the secret seeding the green lists (15485863, the millionth prime: use your own).
    seeding_scheme: "lefthash" (the green list depends on the previous token) or "selfhash"
        (also on the candidate token: more robust, slower).
    context_width: how many previous tokens seed the green list (selfhash uses them all).
    """

    def __init__(self, greenlist_ratio=0.25, bias=2.0, hashing_key=15485863, seeding_scheme="lefthash",
                 context_width=1):
        self.greenlist_ratio = greenlist_ratio
        self.bias = bias
        self.hashing_key = hashing_key
        self.seeding_scheme = seeding_scheme
        self.context_width = context_width

    def validate(self):
        if self.seeding_scheme not in ("selfhash", "lefthash"):
            raise ValueError(_WATERMARK_ARGUMENT_ERROR.format(
                key="seeding_scheme", correct_value="[`selfhash`, `lefthash`]", found_value=self.seeding_scheme))
        if not 0.0 <= self.greenlist_ratio <= 1.0:
            raise ValueError(_WATERMARK_ARGUMENT_ERROR.format(
                key="greenlist_ratio", correct_value="in range between 0.0 and 1.0", found_value=self.greenlist_ratio))
        if not self.context_width >= 1:
            raise ValueError(_WATERMARK_ARGUMENT_ERROR.format(
                key="context_width", correct_value="a positive integer", found_value=self.context_width))

    def construct_processor(self, vocab_size, device):
        from .logits_process import WatermarkLogitsProcessor

        return WatermarkLogitsProcessor(
            vocab_size=vocab_size, device=device, greenlist_ratio=self.greenlist_ratio, bias=self.bias,
            hashing_key=self.hashing_key, seeding_scheme=self.seeding_scheme, context_width=self.context_width)


class SynthIDTextWatermarkingConfig(BaseWatermarkingConfig):
    """SynthID Text's watermark (Dathathri et al. 2024, Nature), for
    `generate(watermarking_config=..., do_sample=True)`.

    ngram_len: tokens hashed together (the previous ngram_len - 1 and the candidate).
    keys: the secret, one integer per tournament layer.
    context_history_size: how many recent contexts are remembered so as not to watermark a
        repeated context twice (1024).
    sampling_table_seed, sampling_table_size: the table mapping hashes to g-values (0, 2**16).
    skip_first_ngram_calls: leave the first ngram_len - 1 steps unwatermarked.
    debug_mode: replace the model's scores by uniform ones before watermarking (for tests).
    """

    def __init__(self, ngram_len, keys, context_history_size=1024, sampling_table_seed=0,
                 sampling_table_size=2 ** 16, skip_first_ngram_calls=False, debug_mode=False):
        self.ngram_len = ngram_len
        self.keys = keys
        self.sampling_table_size = sampling_table_size
        self.sampling_table_seed = sampling_table_seed
        self.context_history_size = context_history_size
        self.skip_first_ngram_calls = skip_first_ngram_calls
        self.debug_mode = debug_mode

    def validate(self):
        if self.sampling_table_size > 2 ** 24:
            raise ValueError(_WATERMARK_ARGUMENT_ERROR.format(
                key="sampling_table_size", correct_value="< 2**24", found_value=self.sampling_table_size))

    def construct_processor(self, vocab_size, device):
        from .logits_process import SynthIDTextWatermarkLogitsProcessor

        return SynthIDTextWatermarkLogitsProcessor(
            ngram_len=self.ngram_len, keys=self.keys, sampling_table_size=self.sampling_table_size,
            sampling_table_seed=self.sampling_table_seed, context_history_size=self.context_history_size,
            device=device, skip_first_ngram_calls=self.skip_first_ngram_calls, debug_mode=self.debug_mode)


@dataclasses.dataclass
class CompileConfig:
    """HF's options for compiling the model's decoding steps inside `generate()`: fullgraph,
    dynamic, backend, mode ("reduce-overhead"), options, given to core.compile (which has
    torch.compile's signature). As in HF, generate() compiles only with a static cache and, on
    a CPU, only when `_compile_all_devices` is set; otherwise the config has no effect.
    """

    fullgraph: bool = False
    dynamic: object = None
    backend: object = "inductor"
    mode: str = "reduce-overhead"
    options: object = None
    # HF's switch to compile on any device, the CPU included (used by its tests)
    _compile_all_devices = None

    def to_dict(self):
        return copy.deepcopy({key: value for key, value in self.__dict__.items() if key != "_compile_all_devices"})
