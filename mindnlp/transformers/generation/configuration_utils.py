"""`GenerationConfig`: how `generate()` decodes, read from and written to generation_config.json.

As in Hugging Face transformers v5, every setting defaults to None ("not set"). `generate()`
fills what is still unset from `DEFAULT_GENERATION_PARAMS`, e.g.
`config.update(defaults_only=True, **DEFAULT_GENERATION_PARAMS)`, so a file records only what
the model author chose and later default changes reach old checkpoints.
"""
import copy
import json
import logging
import os

from ..configuration_utils import TRANSFORMERS_VERSION, read_json_file, write_text_atomic
from ..utils import GENERATION_CONFIG_NAME
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
                        f"do_sample is not True, but {name}={value!r}: it only affects sampling. "
                        f"Set do_sample=True or unset {name}."
                    )

        if self.num_beams is None or self.num_beams == 1:
            beam_only = {"early_stopping": False, "length_penalty": 1.0}
            for name, neutral in beam_only.items():
                value = getattr(self, name)
                if value is not None and value != neutral and _user_set("num_beams", name, user_set_attributes):
                    issues[name] = (
                        f"num_beams is {self.num_beams}, but {name}={value!r}: it only affects beam search. "
                        f"Set num_beams>1 or unset {name}."
                    )

        if self.num_return_sequences is not None and self.num_return_sequences > 1:
            if self.num_beams is None or self.num_beams == 1:
                if not self.do_sample:
                    raise ValueError(
                        "greedy decoding (do_sample != True, num_beams == 1) returns one sequence per prompt, "
                        f"got num_return_sequences={self.num_return_sequences}"
                    )
            elif self.num_return_sequences > self.num_beams:
                raise ValueError(
                    f"num_return_sequences ({self.num_return_sequences}) must be <= num_beams ({self.num_beams})"
                )

        if self.use_cache is False:
            for name in ("cache_implementation", "cache_config"):
                if getattr(self, name) is not None:
                    issues[name] = f"use_cache is False, so {name}={getattr(self, name)!r} has no effect"

        if self.return_dict_in_generate is not True:
            for name in EXTRA_OUTPUT_FLAGS:
                if getattr(self, name) is True:
                    issues[name] = f"{name} is True but return_dict_in_generate is not, so it is ignored"

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
                raise ValueError(f"{name} is an argument of generate(), not a GenerationConfig setting")

        if issues:
            details = "\n".join(f"- {name}: {text}" for name, text in issues.items())
            if strict:
                raise ValueError("GenerationConfig is invalid:\n" + details)
            logger.warning("generation settings that will be ignored: %s\n%s", sorted(issues), details)

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
        # Integer dict keys (e.g. sequence_bias) become strings, as JSON requires.
        return json.dumps(json.loads(json.dumps(config_dict)), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file_path, use_diff=True, keys_to_pop=None):
        write_text_atomic(json_file_path, self.to_json_string(use_diff=use_diff, keys_to_pop=keys_to_pop))

    def save_pretrained(self, save_directory, config_file_name=None):
        """Write generation_config.json atomically. A config edited since it was loaded must
        pass `validate(strict=True)`; an unedited one is saved as it came, with warnings."""
        was_modified = getattr(self, "_original_object_hash", None) != hash(self)
        try:
            self.validate(strict=was_modified)
        except ValueError as err:
            raise ValueError(f"{err}\n\nFix these issues to save the generation config.") from err
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
            if hasattr(self, key):
                if not defaults_only or getattr(self, key) is None:
                    setattr(self, key, value)
                    used.append(key)
            elif allow_custom_entries:
                setattr(self, key, value)
                used.append(key)
        self.validate(user_set_attributes=set(used))
        return {key: value for key, value in kwargs.items() if key not in used}
