# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PreTrainedModel`: loading, saving and the common plumbing of every model.

`from_pretrained` reads Hugging Face checkpoints as they are published (safetensors,
sharded safetensors, PyTorch `.bin` zips and their shard indexes) with no conversion: our
parameter names are HF's. A base-model checkpoint loads into a model with a head and the
reverse, by adding or removing `base_model_prefix`, as HF does. `save_pretrained` writes
files that HF transformers loads.
"""
import contextlib
import itertools
import json
import logging
import mmap
import os
import re
from collections import Counter

import numpy as np

from .. import core
from .._context import graph_mode
from ..core import nn
from ..core.serialization import staged_folder, write_text_atomic
from .configuration_utils import PretrainedConfig
from .conversion_mapping import get_model_conversion_mapping
from .core_model_loading import ConvertedWeights, rename_key, revert_conversions
from .modeling_rope_utils import rope_init
from .generation.configuration_utils import GenerationConfig
from .integrations.quantization import dequantize_model, mark_quantized, replace_with_quantized_linear
from .modeling_inputs import check_model_inputs, explain_failure
from .utils import CONFIG_NAME, SAFE_WEIGHTS_INDEX_NAME, SAFE_WEIGHTS_NAME, WEIGHTS_INDEX_NAME, WEIGHTS_NAME
from ..hub import CheckpointError, FileNotFoundOnHubError
from .utils.hub import cached_file
from .utils.quantization_config import quantization_config_from_dict

logger = logging.getLogger(__name__)

FLASH_ATTN_KERNEL_FALLBACK = {
    "flash_attention_2": "kernels-community/flash-attn2",
    "flash_attention_3": "kernels-community/vllm-flash-attn3",
}
"""HF's hub kernels for flash attention; mindnlp loads no hub kernels (attention runs as eager or sdpa)."""

_INIT_FUNCTION_NAMES = (
    "uniform_", "normal_", "trunc_normal_", "constant_", "xavier_uniform_", "xavier_normal_",
    "kaiming_uniform_", "kaiming_normal_", "uniform", "normal", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal_", "zeros_", "ones_", "eye_", "dirac_", "sparse_",
)


@contextlib.contextmanager
def no_init_weights():
    """Skip the random initialisation layers do in their constructors.

    Weights about to be overwritten by a checkpoint need no random values; the keys the
    checkpoint lacks are initialised afterwards with the model's `_init_weights`.
    """
    from ..core.nn import init

    saved = {name: getattr(init, name) for name in _INIT_FUNCTION_NAMES if hasattr(init, name)}

    def skip(tensor, *args, **kwargs):
        return tensor

    try:
        for name in saved:
            setattr(init, name, skip)
        yield
    finally:
        for name, fn in saved.items():
            setattr(init, name, fn)


def _as_dtype(value):
    if value is None or isinstance(value, core.dtype):
        return value
    return core._dtype.as_dtype(value)


def _size_in_bytes(text):
    """'5GB' / '500MB' / an int → bytes (powers of 10, as HF counts shard sizes)."""
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?I?B)\s*", text.upper())
    if not match:
        raise ValueError(f"max_shard_size must be an int or a string like '5GB', got {text!r}")
    number, unit = float(match.group(1)), match.group(2)
    scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
             "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}[unit]
    return int(number * scale)


def load_state_dict(checkpoint_file, map_location="cpu", weights_only=True):
    """The tensors of one checkpoint file (safetensors or a PyTorch `.bin`), by name."""
    tensors = _load_file(str(checkpoint_file))
    if map_location not in (None, "cpu"):
        tensors = {k: v.to(map_location) for k, v in tensors.items()}
    return tensors


def _get_tied_weight_keys(module):
    """Every tied target name of the module tree, as HF lists them (from `_tied_weights_keys`)."""
    keys = []
    for name, submodule in module.named_modules():
        tied = getattr(submodule, "_tied_weights_keys", None) or {}
        keys.extend(f"{name}.{k}" if name else k for k in tied)
    return keys


class ModuleUtilsMixin:
    """Small helpers HF models and tests use: parameter counts, masks, dtype and device."""

    @property
    def device(self):
        for p in self.parameters():
            return p.device
        return core.device("cpu")

    @property
    def dtype(self):
        for p in self.parameters():
            if p.is_floating_point():
                return p.dtype
        return core.get_default_dtype()

    def num_parameters(self, only_trainable=False, exclude_embeddings=False):
        excluded = set()
        if exclude_embeddings:
            for module in self.modules():
                if isinstance(module, nn.Embedding):
                    excluded.add(id(module.weight))
        seen, total = set(), 0
        for p in self.parameters():
            if id(p) in seen or id(p) in excluded or (only_trainable and not p.requires_grad):
                continue
            seen.add(id(p))
            total += p.numel()
        return total

    def get_extended_attention_mask(self, attention_mask, input_shape, dtype=None):
        """(batch, seq) or (batch, q, k) 0/1 mask → additive (batch, 1, q|1, k) mask."""
        dtype = dtype or self.dtype
        if attention_mask.ndim == 3:
            extended = attention_mask[:, None, :, :]
        elif attention_mask.ndim == 2:
            if getattr(self.config, "is_decoder", False):
                seq_len = input_shape[-1]
                causal = core.tril(core.ones(seq_len, seq_len, device=attention_mask.device))
                extended = causal[None, None, :, :] * attention_mask[:, None, None, :]
            else:
                extended = attention_mask[:, None, None, :]
        else:
            raise ValueError(
                f"Wrong shape for input_ids (shape {tuple(input_shape)}) or attention_mask (shape "
                f"{tuple(attention_mask.shape)})"
            )
        extended = extended.to(dtype)
        return (1.0 - extended) * core.finfo(dtype).min

    def invert_attention_mask(self, encoder_attention_mask):
        if encoder_attention_mask.ndim == 3:
            extended = encoder_attention_mask[:, None, :, :]
        else:
            extended = encoder_attention_mask[:, None, None, :]
        extended = extended.to(self.dtype)
        return (1.0 - extended) * core.finfo(self.dtype).min


class PreTrainedModel(nn.Module, ModuleUtilsMixin):
    """Base class of all models: holds the config and implements loading and saving."""

    config_class = PretrainedConfig
    base_model_prefix = ""
    main_input_name = "input_ids"
    input_modalities = "text"
    model_tags = None
    supports_gradient_checkpointing = False
    _no_split_modules = None
    _keys_to_ignore_on_load_missing = None
    _keys_to_ignore_on_load_unexpected = None
    _keys_to_ignore_on_save = None
    # {target: source} parameter names that share one tensor when the config ties them
    _tied_weights_keys = None
    _checkpoint_conversion_mapping = {}
    # Modules kept in float32 when the model is loaded or cast to float16 (the _strict ones
    # also under bfloat16): names matched against the module path, as in HF.
    _keep_in_fp32_modules = None
    _keep_in_fp32_modules_strict = None
    # Tensor/pipeline/expert-parallel plans for the modules a class adds itself ({"lm_head":
    # "colwise_gather_output"}); the base model's come from its config. Metadata HF's tooling
    # reads: mindnlp runs unsharded.
    _tp_plan = None
    _pp_plan = None
    _ep_plan = None
    # Attention kernels a family can run: eager always, sdpa through core's fused
    # scaled_dot_product_attention; flash and flex attention are CUDA kernels mindnlp does not have.
    _supports_sdpa = True
    _supports_flash_attn = False
    _supports_flex_attn = False
    _supports_attention_backend = False
    # Models whose state lives outside the cache (recurrent layers) cannot roll back a generation
    # step, which assisted decoding needs.
    _is_stateful = False
    # mindnlp has no graph compiler, so no model compiles without graph breaks.
    _can_compile_fullgraph = False

    def __init__(self, config, *inputs, **kwargs):
        super().__init__()
        if not isinstance(config, PretrainedConfig):
            raise TypeError(
                f"Parameter config in `{self.__class__.__name__}(config)` should be an instance of class "
                f"`PretrainedConfig`, got {type(config).__name__}"
            )
        self.config = config
        if config._attn_implementation is None:
            config._attn_implementation = "sdpa" if self._supports_sdpa else "eager"
        self.name_or_path = getattr(config, "name_or_path", "")
        self.generation_config = GenerationConfig.from_model_config(config) if self.can_generate() else None
        self.gradient_checkpointing = False

    def __call__(self, *args, **kwargs):
        """Module call with the input checks every family shares (see modeling_inputs)."""
        ids = check_model_inputs(self, args, kwargs)
        call = self._graph_call() if graph_mode() else super().__call__
        try:
            return call(*args, **kwargs)
        except (IndexError, RuntimeError, ValueError) as err:
            explained = explain_failure(self, err, ids, kwargs)
            if explained is None:
                raise
            raise explained from err

    def _graph_call(self):
        """This model's call compiled (GRAPH_MODE); made on first use, kept with the model."""
        compiled = self.__dict__.get("_graph_call_fn")
        if compiled is None:
            compiled = self.__dict__["_graph_call_fn"] = core.compile(nn.Module.__call__.__get__(self))
        return compiled

    # --- initialisation ---
    def post_init(self):
        """Every model calls this at the end of __init__: gather what submodels declare
        (parallel plans, tied keys, float32 modules, unsplittable modules) onto this model,
        then initialise the weights and tie them."""
        own = self.base_model is self
        for plan in ("tp", "pp", "ep"):
            from_config = getattr(self.config, f"base_model_{plan}_plan", None) if own else None
            setattr(self, f"_{plan}_plan", {**(getattr(type(self), f"_{plan}_plan") or {}), **(from_config or {})})
        self.all_tied_weights_keys = self._own_tied_weights_keys()
        self._keep_in_fp32_modules = set(type(self)._keep_in_fp32_modules or [])
        self._keep_in_fp32_modules_strict = set(type(self)._keep_in_fp32_modules_strict or [])
        self._no_split_modules = set(type(self)._no_split_modules or [])
        for name, child in self.named_children():
            for plan in ("_tp_plan", "_pp_plan", "_ep_plan"):
                getattr(self, plan).update({f"{name}.{k}": v for k, v in (getattr(child, plan, None) or {}).items()})
            tied = getattr(child, "all_tied_weights_keys", None) or {}
            self.all_tied_weights_keys.update({f"{name}.{k}": f"{name}.{v}" for k, v in tied.items()})
            for attribute in ("_keep_in_fp32_modules", "_keep_in_fp32_modules_strict", "_no_split_modules"):
                getattr(self, attribute).update(getattr(child, attribute, None) or ())
        self.init_weights()
        if getattr(self.config, "gradient_checkpointing", False) and self.supports_gradient_checkpointing:
            # v4 configs could ask for checkpointing; it is a training-time switch now
            self.gradient_checkpointing_enable()
            del self.config.gradient_checkpointing

    def _own_tied_weights_keys(self):
        """This model's `_tied_weights_keys` when its config ties word embeddings, else {}."""
        if not self._tied_weights_keys:
            return {}
        if not getattr(self.config, "tie_word_embeddings", False):
            return {}
        return dict(self._tied_weights_keys)

    @property
    def tp_plan(self):
        """{module pattern: tensor-parallel style} for the whole model (metadata: mindnlp runs unsharded)."""
        return self._tp_plan

    @tp_plan.setter
    def tp_plan(self, plan):
        if plan is not None and not isinstance(plan, dict):
            raise ValueError("Can only set a dictionary as `tp_plan`")
        self._tp_plan = dict(plan or {})

    @property
    def pp_plan(self):
        return self._pp_plan

    def init_weights(self):
        """Initialise every module not yet initialised, then tie. Built under the meta device
        there is no memory to write: nothing is initialised (nor marked so), and a later
        `to_empty(device=...)` + `init_weights()` initialises parameters and buffers alike."""
        if core.get_default_device().type != "meta":
            self._apply_own_init(self)
        self.tie_weights()

    def _apply_own_init(self, module, only=None):
        """`_initialize_weights` over `module`'s tree, children first as `Module.apply`; a nested
        model (a multimodal model's vision tower) initialises its own modules by its own rules.
        `only`: the ids of the modules to initialise, which hold their ancestors too."""
        for child in module.children():
            if only is not None and id(child) not in only:
                continue
            if isinstance(child, PreTrainedModel):
                child._apply_own_init(child, only)
            else:
                self._apply_own_init(child, only)
        if only is None or id(module) in only:
            self._initialize_weights(module)

    def _initialize_weights(self, module):
        if getattr(module, "_is_hf_initialized", False):
            return
        self._init_weights(module)
        module._is_hf_initialized = True

    def _init_weights(self, module):
        """HF's default initialisation: normal(0, std) for linear, convolution and embedding
        weights, 1/0 for norms (batch norms' statistics reset too); the std is
        `initializer_range`, `init_std` (BART, Marian) or `initializer_factor`, as the config names it."""
        if hasattr(self.config, "initializer_range"):
            std = self.config.initializer_range or 0.02
        elif hasattr(self.config, "init_std"):
            std = self.config.init_std
        else:
            std = getattr(self.config, "initializer_factor", 0.02)
        if isinstance(module, (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d)):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.padding_idx is not None:
                # through nn.init on a view of the row: in place, and skipped under no_init_weights
                nn.init.zeros_(module.weight[module.padding_idx])
        elif isinstance(module, nn.MultiheadAttention):
            module._reset_parameters()  # torch's own initialisation, as HF keeps it
        elif isinstance(module, (nn.GroupNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)) or any(
                kind in type(module).__name__ for kind in ("LayerNorm", "RMSNorm")):
            # by name, as HF matches them: families name their own norm classes
            if getattr(module, "weight", None) is not None:
                nn.init.ones_(module.weight)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)
            if getattr(module, "running_mean", None) is not None:
                nn.init.zeros_(module.running_mean)
                nn.init.ones_(module.running_var)
                nn.init.zeros_(module.num_batches_tracked)
        elif hasattr(module, "original_inv_freq") and hasattr(module, "config"):
            # A rotary embedding: its frequencies are a function of the config, never stored in a
            # checkpoint, so initialising means computing them again (a model built on meta needs it).
            inv_freq, _ = rope_init(module.config, layer_type=getattr(module, "layer_type", None))
            with core.no_grad():
                module.inv_freq.copy_(core.tensor(inv_freq))
                module.original_inv_freq.copy_(core.tensor(inv_freq))

    @property
    def base_model(self):
        return getattr(self, self.base_model_prefix, self)

    # --- attention and experts implementations ---
    @classmethod
    def _can_set_attn_implementation(cls):
        """mindnlp's attention layers read `config._attn_implementation` at every call, so the
        implementation can change after construction."""
        return True

    @classmethod
    def _can_set_experts_implementation(cls):
        """Only models with mixture-of-experts layers (MoePreTrainedModel) have experts to switch."""
        return False

    def get_correct_attn_implementation(self, requested_attention, is_init_check=False):
        """The implementation to run for a request: None means sdpa where supported, else eager."""
        from .configuration_utils import ATTN_IMPLEMENTATIONS

        if requested_attention is None:
            return "sdpa" if self._supports_sdpa else "eager"
        if requested_attention not in ATTN_IMPLEMENTATIONS or (requested_attention == "sdpa" and not self._supports_sdpa):
            supported = ['"eager"'] + (['"sdpa"'] if self._supports_sdpa else [])
            raise ValueError(
                f'Specified `attn_implementation="{requested_attention}"` is not supported by {type(self).__name__} '
                f"in mindnlp. The possible arguments are {', '.join(supported)}."
            )
        return requested_attention

    def set_attn_implementation(self, attn_implementation):
        """Switch the attention kernel of this model and of its sub-models (a dict sets each
        sub-config's part by key, "" for this model's own)."""
        own = attn_implementation.get("", self.config._attn_implementation) if isinstance(attn_implementation, dict) \
            else attn_implementation
        own = self.get_correct_attn_implementation(own)
        if isinstance(attn_implementation, dict):
            self.config._attn_implementation = {**attn_implementation, "": own}
        else:
            self.config._attn_implementation = own

    def set_experts_implementation(self, experts_implementation):
        if not self._can_set_experts_implementation():
            raise ValueError(f"{type(self).__name__} has no mixture-of-experts layers whose implementation can be set")
        self.config._experts_implementation = experts_implementation

    def get_encoder(self, modality=None):
        """The text encoder of an encoder-decoder model (or a modality's encoder), else the model itself."""
        names = {None: ("text_encoder", "encoder"), "image": ("vision_tower", "visual", "vision_model",
                 "vision_encoder", "image_tower"), "audio": ("audio_tower", "audio_encoder", "speech_encoder")}
        names["video"] = names["image"]
        if modality not in names:
            raise ValueError(f'Unrecognized modality, has to be "image", "video" or "audio" but found {modality}')
        for name in names[modality]:
            if hasattr(self, name):
                return getattr(self, name)
        base = self.base_model
        if base is not self and isinstance(base, PreTrainedModel):
            encoder = base.get_encoder(modality=modality)
            if encoder is not base:
                return encoder
        return self

    _DECODER_NAMES = ("language_model", "text_model", "decoder", "text_decoder")

    def get_decoder(self):
        """The decoder of an encoder-decoder or multimodal model (or of its base model); a
        decoder-only base model is its own decoder."""
        for name in self._DECODER_NAMES:
            if hasattr(self, name):
                return getattr(self, name)
        base = self.base_model
        if base is not self and isinstance(base, PreTrainedModel):
            return base.get_decoder()
        return self

    def set_decoder(self, decoder):
        """Replace the module `get_decoder` returns."""
        for name in self._DECODER_NAMES[:3]:
            if hasattr(self, name):
                setattr(self, name, decoder)
                return
        base = self.base_model
        if base is not self and isinstance(base, PreTrainedModel):
            base.set_decoder(decoder)
        elif base is not self:
            self.model = decoder
        else:
            raise ValueError(f"{type(self).__name__} has no decoder module to replace")

    def get_position_embeddings(self):
        raise NotImplementedError(
            f"`get_position_embeddings` is not implemented for {self.__class__}`. You should try to overwrite it "
            f"in {self.__class__}`"
        )

    def resize_position_embeddings(self, new_num_position_embeddings):
        raise NotImplementedError(
            f"`resize_position_embeddings` is not implemented for {self.__class__}`. You should try to overwrite it "
            f"in {self.__class__}`"
        )

    @classmethod
    def can_generate(cls):
        return "GenerationMixin" in {base.__name__ for base in cls.__mro__}

    # --- embeddings and tying ---
    def get_input_embeddings(self):
        base = getattr(self, self.base_model_prefix, None)
        if base is not None and base is not self:
            return base.get_input_embeddings()
        raise NotImplementedError(f"{self.__class__.__name__} does not define get_input_embeddings")

    def set_input_embeddings(self, value):
        base = getattr(self, self.base_model_prefix, None)
        if base is not None and base is not self:
            return base.set_input_embeddings(value)
        raise NotImplementedError(f"{self.__class__.__name__} does not define set_input_embeddings")

    def get_output_embeddings(self):
        return None

    def _tied_mapping(self):
        """{target: source} parameter names to share, from `_tied_weights_keys` of this model and
        of model submodules whose config has tie_word_embeddings (HF v5 semantics)."""
        mapping = {}
        for prefix, module in self.named_modules():
            if not isinstance(module, PreTrainedModel) or not module._tied_weights_keys:
                continue
            if not getattr(module.config, "tie_word_embeddings", False):
                continue
            dot = f"{prefix}." if prefix else ""
            mapping.update({dot + t: dot + s for t, s in module._tied_weights_keys.items()})
        return mapping

    def tie_weights(self, missing_keys=None):
        """Make each tied target the same Parameter as its source.

        While loading (missing_keys given), tying is symmetric: when the checkpoint holds the
        target but not the source, the loaded target becomes the shared weight. When it holds
        both with different values, the config does not describe the checkpoint: the pair is
        left untied, as HF does. Tied targets are then no longer missing.
        """
        for target, source in self._tied_mapping().items():
            if missing_keys is not None:
                source_loaded, target_loaded = source not in missing_keys, target not in missing_keys
                if source_loaded and target_loaded:
                    source_param, target_param = self.get_parameter(source), self.get_parameter(target)
                    if source_param is not target_param and not _same_values(source_param, target_param):
                        logger.warning(
                            f"The checkpoint holds both {source} and {target}, which this model ties, with different "
                            "values: they are left untied. Set `tie_word_embeddings=False` in the config to silence "
                            "this warning."
                        )
                        continue
                elif target_loaded:
                    target, source = source, target
            shared = self.get_parameter(source)
            parent_name, _, name = target.rpartition(".")
            parent = self.get_submodule(parent_name) if parent_name else self
            setattr(parent, name, shared)
            if missing_keys is not None:
                missing_keys.discard(target)

    def resize_token_embeddings(self, new_num_tokens=None, pad_to_multiple_of=None, mean_resizing=True):
        """Grow or shrink the vocabulary of the input embeddings and of the LM head, then re-tie them.

        With mean_resizing (HF's default), added rows start at the mean of the old rows (HF
        samples them from a normal distribution around that mean with a 1e-9-scaled
        covariance, which is the mean up to float rounding); otherwise they get the model's
        initialisation.
        """
        old = self.get_input_embeddings()
        if new_num_tokens is None and pad_to_multiple_of is None:
            return old
        if new_num_tokens is None:
            new_num_tokens = old.weight.shape[0]
        if pad_to_multiple_of is not None:
            if not isinstance(pad_to_multiple_of, int):
                raise ValueError(
                    f"Asking to pad the embedding matrix to a multiple of `{pad_to_multiple_of}`, which is not and "
                    "integer. Please make sure to pass an integer"
                )
            new_num_tokens = -(-new_num_tokens // pad_to_multiple_of) * pad_to_multiple_of
        # set_*_embeddings again: a model may hold a resized parameter in a second place (BERT's
        # prediction bias is its decoder's bias)
        self._resize_embedding_rows(old, new_num_tokens, mean_resizing)
        self.set_input_embeddings(old)
        output = self.get_output_embeddings()
        if output is not None:
            self._resize_lm_head_rows(output, new_num_tokens, mean_resizing)
            self.set_output_embeddings(output)
        self.config.get_text_config().vocab_size = new_num_tokens
        self.vocab_size = new_num_tokens
        self.tie_weights()
        return self.get_input_embeddings()

    def _resize_embedding_rows(self, embedding, new_num, mean_resizing):
        """Give `embedding` a weight of new_num rows, in place: the module (and its class, such as
        a scaled embedding) stays, as HF keeps it. Old rows are copied; added rows are initialised
        as the model initialises embeddings, or set to the old rows' mean with mean_resizing."""
        old_num, dim = embedding.weight.shape
        if old_num == new_num:
            return
        padding_idx = embedding.padding_idx if embedding.padding_idx is not None and embedding.padding_idx < new_num \
            else None
        fresh = nn.Embedding(new_num, dim, padding_idx=padding_idx, dtype=embedding.weight.dtype,
                             device=embedding.weight.device)
        self._init_weights(fresh)
        self._copy_rows(embedding.weight, fresh.weight, mean_resizing)
        fresh.weight.requires_grad_(embedding.weight.requires_grad)
        embedding.weight = fresh.weight
        embedding.num_embeddings = new_num
        embedding.padding_idx = padding_idx

    def _resize_lm_head_rows(self, head, new_num, mean_resizing):
        """As _resize_embedding_rows for an output projection (a bias's added rows: the old bias mean)."""
        old_num, dim = head.weight.shape
        if old_num == new_num:
            return
        has_bias = getattr(head, "bias", None) is not None
        fresh = nn.Linear(dim, new_num, bias=has_bias, dtype=head.weight.dtype, device=head.weight.device)
        self._init_weights(fresh)
        self._copy_rows(head.weight, fresh.weight, mean_resizing)
        fresh.weight.requires_grad_(head.weight.requires_grad)
        head.weight = fresh.weight
        if has_bias:
            n = min(old_num, new_num)
            with core.no_grad():
                fresh.bias[:n] = head.bias[:n]
                if new_num > old_num and mean_resizing:
                    fresh.bias[old_num:] = head.bias.float().mean().to(head.bias.dtype)
            fresh.bias.requires_grad_(head.bias.requires_grad)
            head.bias = fresh.bias
        head.out_features = new_num

    @staticmethod
    def _copy_rows(old_weight, new_weight, mean_resizing):
        """Copy the rows both weights have; with mean_resizing, added rows take the old rows' mean."""
        old_num, dim = old_weight.shape
        new_num = new_weight.shape[0]
        n = min(old_num, new_num)
        with core.no_grad():
            new_weight[:n] = old_weight[:n]
            if new_num > old_num and mean_resizing:
                mean = old_weight.float().mean(0, keepdim=True).to(old_weight.dtype)
                new_weight[old_num:] = mean.expand(new_num - old_num, dim)

    def set_output_embeddings(self, new_embeddings):
        raise NotImplementedError(f"{self.__class__.__name__} does not define set_output_embeddings")

    def get_compiled_call(self, compile_config=None):
        """`self.__call__` under core.compile (HF's hook, which generate() uses for decoding
        steps with a static cache while the prompt's pass stays eager); made again only when
        `compile_config` changes."""
        from .generation.configuration_utils import CompileConfig

        compile_config = compile_config or CompileConfig()
        if "_compiled_call" not in self.__dict__ or self.__dict__.get("_last_compile_config") != compile_config:
            self.__dict__["_last_compile_config"] = compile_config
            self.__dict__["_compiled_call"] = core.compile(self.__call__, **compile_config.to_dict())
        return self.__dict__["_compiled_call"]

    def dequantize(self):
        """Turn a model quantized at load time (or a GGUF file's kept blocks) back into float32
        linear layers (HF's dequantize)."""
        if getattr(self, "quantization_config", None) is None and not getattr(self, "gguf_quantized_modules", None):
            raise ValueError("The model is not quantized: there is nothing to dequantize")
        return dequantize_model(self)

    # --- training helpers ---
    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        """Recompute each layer's activations during backward instead of storing them."""
        if not self.supports_gradient_checkpointing:
            raise ValueError(f"{self.__class__.__name__} does not support gradient checkpointing.")
        for module in self.modules():
            if hasattr(module, "gradient_checkpointing"):
                module.gradient_checkpointing = True
        self.gradient_checkpointing = True

    def gradient_checkpointing_disable(self):
        for module in self.modules():
            if hasattr(module, "gradient_checkpointing"):
                module.gradient_checkpointing = False
        self.gradient_checkpointing = False

    @property
    def is_gradient_checkpointing(self):
        return any(getattr(m, "gradient_checkpointing", False) for m in self.modules())

    def enable_input_require_grads(self):
        """Make the embeddings' output require grad (for checkpointing with frozen embeddings)."""

        def make_inputs_require_grads(module, inputs, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def disable_input_require_grads(self):
        self._require_grads_hook.remove()

    # --- saving ---
    def save_pretrained(self, save_directory, *, state_dict=None, max_shard_size="5GB", safe_serialization=True,
                        is_main_process=True, save_original_format=True, **kwargs):
        """Write config.json (+ generation_config.json) and the weights, sharded above max_shard_size.

        With save_original_format (the default), weights are written in the layout the family's
        published checkpoints use (its registered conversions reversed: per-expert tensors for
        the fused experts of MoE models); otherwise as the model names them. Both load back.
        """
        if os.path.isfile(save_directory):
            raise OSError(f"Provided path ({save_directory}) should be a directory, not a file")
        if not is_main_process:
            return
        self.config.architectures = [self.__class__.__name__]
        if state_dict is None:
            state_dict = self.state_dict()
        state_dict = self._drop_shared_tensors(state_dict)
        if self._keys_to_ignore_on_save:
            state_dict = {k: v for k, v in state_dict.items() if k not in set(self._keys_to_ignore_on_save)}
        if save_original_format:
            state_dict = revert_conversions(state_dict, get_model_conversion_mapping(self, add_legacy=False))
        weights_name = SAFE_WEIGHTS_NAME if safe_serialization else WEIGHTS_NAME
        shards = self._split_shards(state_dict, _size_in_bytes(max_shard_size))
        # Everything is written beside the old checkpoint first and renamed into place at the
        # end, so a process killed mid-save leaves the previous checkpoint whole.
        with staged_folder(save_directory) as staging:
            self.config.save_pretrained(staging)
            if self.generation_config is not None and self.can_generate():
                self.generation_config.save_pretrained(staging)
            if len(shards) == 1:
                self._write_weights(shards[0], os.path.join(staging, weights_name), safe_serialization)
            else:
                stem, ext = weights_name.rsplit(".", 1)
                weight_map = {}
                for i, shard in enumerate(shards, 1):
                    name = f"{stem}-{i:05d}-of-{len(shards):05d}.{ext}"
                    self._write_weights(shard, os.path.join(staging, name), safe_serialization)
                    weight_map.update({k: name for k in shard})
                total = sum(v.numel() * v.element_size() for v in state_dict.values())
                index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
                index_name = SAFE_WEIGHTS_INDEX_NAME if safe_serialization else WEIGHTS_INDEX_NAME
                write_text_atomic(os.path.join(staging, index_name), json.dumps(index, indent=2, sort_keys=True) + "\n")
            written = set(os.listdir(staging))
        # Weights of the old checkpoint that the new one does not overwrite (other shard
        # counts, the other format) go only now that the new files are all in place.
        prefix = weights_name.split(".")[0]
        for name in os.listdir(save_directory):
            if name.startswith(prefix) and name.endswith((".safetensors", ".bin", ".json")) and name not in written:
                os.remove(os.path.join(save_directory, name))

    @staticmethod
    def _write_weights(shard, path, safe_serialization):
        from ..core import serialization

        shard = {k: v.detach().contiguous() for k, v in shard.items()}
        if safe_serialization:
            serialization.save_safetensors(shard, path, metadata={"format": "pt"})
        else:
            core.save(shard, path)

    def _drop_shared_tensors(self, state_dict):
        """safetensors cannot hold two names for one array: keep the first name of tied weights."""
        seen, kept = set(), {}
        for key, value in state_dict.items():
            ident = (value.device, value.data_ptr(), tuple(value.shape), value.stride())
            if ident not in seen:
                seen.add(ident)
                kept[key] = value
        return kept

    @staticmethod
    def _split_shards(state_dict, max_bytes):
        shards, current, size = [], {}, 0
        for key, value in state_dict.items():
            nbytes = value.numel() * value.element_size()
            if current and size + nbytes > max_bytes:
                shards.append(current)
                current, size = {}, 0
            current[key] = value
            size += nbytes
        shards.append(current)
        return shards

    # --- loading ---
    @classmethod
    def _from_config(cls, config, **kwargs):
        dtype = _as_dtype(kwargs.pop("dtype", None) or kwargs.pop("torch_dtype", None))
        if kwargs.get("attn_implementation"):
            config._attn_implementation = kwargs.pop("attn_implementation")
        model = cls(config, **kwargs)
        if dtype is not None:
            model.to(dtype)
        return model

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, cache_dir=None,
                        force_download=False, local_files_only=False, token=None, revision=None, subfolder="",
                        mirror=None, endpoint=None, dtype=None, torch_dtype=None, ignore_mismatched_sizes=False,
                        output_loading_info=False, state_dict=None, use_safetensors=None,
                        attn_implementation=None, device_map=None, key_mapping=None, gguf_file=None, dequantize=True,
                        **kwargs):
        """Build the model from its config and load a checkpoint's weights into it.

        key_mapping ({regex: replacement}) renames checkpoint keys before they are matched to
        the model's parameters, for checkpoints saved under other names. gguf_file names a GGUF
        file (in the folder or repo) to take the config and the dequantized weights from; with
        dequantize=False the linear weights in blocks a kernel format holds (Q8_0, Q4_K, ...) stay
        quantized (modeling_gguf_utils.KERNEL_FORMATS), and a quantization_config then quantizes the linear
        layers left in float32; a model saved that way reloads with the same layers kept
        (config.json's `gguf_kept_blocks`).
        """
        if core.get_default_device().type == "meta":
            # The weights would be read into tensors that hold no data: refuse before any work.
            raise RuntimeError(
                "You are using `from_pretrained` with a meta device context manager or "
                "`core.set_default_device('meta')`: the loaded weights would have no data. Build the model "
                "from its config under the meta device instead (`model_class(config)`), or leave the context.")
        placement = _device_from_map(device_map)  # checked before any file is read
        for legacy in ("low_cpu_mem_usage", "_fast_init", "trust_remote_code", "from_tf", "from_flax",
                       "offload_state_dict", "use_auth_token"):
            kwargs.pop(legacy, None)
        location = dict(cache_dir=cache_dir, local_files_only=local_files_only, token=token, revision=revision,
                        subfolder=subfolder, mirror=mirror, endpoint=endpoint)
        quantization_config = kwargs.pop("quantization_config", None)
        if not dequantize and gguf_file is None:
            raise ValueError("dequantize=False keeps a GGUF file's blocks quantized: it needs gguf_file=")
        gguf = None
        if gguf_file is not None:
            from .configuration_utils import resolve_gguf_file
            from .modeling_gguf_utils import GGUFFile

            gguf = GGUFFile(resolve_gguf_file(str(pretrained_model_name_or_path), gguf_file, location))
            if config is None:
                config = cls.config_class.from_dict(gguf.config_dict())
            if dtype in (None, "auto") and torch_dtype in (None, "auto"):
                dtype = core.float32  # what dequantizing gives
        if not isinstance(config, PretrainedConfig):
            config_source = config if config is not None else pretrained_model_name_or_path
            config, model_kwargs = cls.config_class.from_pretrained(
                config_source, return_unused_kwargs=True, **location, **kwargs)
        else:
            config = config.__class__.from_dict(config.to_dict())
            model_kwargs = {}
            for key, value in kwargs.items():
                if hasattr(config, key):
                    setattr(config, key, value)
                else:
                    model_kwargs[key] = value
        config.name_or_path = str(pretrained_model_name_or_path)
        if attn_implementation is not None:
            config._attn_implementation = attn_implementation

        if state_dict is not None:
            checkpoint = _Checkpoint.from_state_dict(state_dict)
        elif gguf is None:
            checkpoint = _Checkpoint.resolve(pretrained_model_name_or_path, use_safetensors, location)
        else:
            checkpoint = None  # read once the model exists: the file's tensors are mapped onto its names
        target_dtype = _resolve_dtype(dtype if dtype is not None else torch_dtype, config, checkpoint)

        quantization_config, pre_quantized = _quantization_to_apply(config, quantization_config)

        with no_init_weights():
            model = cls(config, *model_args, **model_kwargs)
        if target_dtype is not None and target_dtype != core.float32:
            model.to(target_dtype)
        kept = {}
        if gguf is not None:
            if not dequantize:
                kept = gguf.keep_quantized(model)
            checkpoint = _Checkpoint.from_gguf(gguf, model)
        elif getattr(config, "gguf_kept_blocks", None):  # saved from a GGUF file loaded with dequantize=False
            from .modeling_gguf_utils import put_kept_blocks

            kept = dict(config.gguf_kept_blocks)
            put_kept_blocks(model, kept)
        if pre_quantized:
            replace_with_quantized_linear(model, quantization_config, quantize=False, required=not kept)
        info = model._load_checkpoint(checkpoint, ignore_mismatched_sizes, key_mapping)
        if gguf is not None and not dequantize:
            kept.update(gguf.keep_tied_head_quantized(model))
            logger.info(f"{len(kept)} linear layers of {gguf.path} kept quantized: "
                        f"{dict(sorted(Counter(kept.values()).items()))}")
        if kept or (gguf is not None and not dequantize):
            model.gguf_quantized_modules = kept
        if kept:  # config.json records each kept layer's block type, so that a saved model reloads as it is
            model.config.gguf_kept_blocks = dict(sorted(kept.items()))
        if quantization_config is not None:
            if not pre_quantized:
                replace_with_quantized_linear(model, quantization_config, quantize=True, required=not kept)
            mark_quantized(model, quantization_config)
        model._report_loading(info, pretrained_model_name_or_path)
        model.eval()
        if placement is not None:
            model.to(placement)
            model.hf_device_map = {"": str(placement)}
        if model.can_generate():
            _pack_weights(model)
            try:
                model.generation_config = GenerationConfig.from_pretrained(pretrained_model_name_or_path, **location)
            except OSError:
                pass
        if target_dtype is not None:
            model.config.dtype = target_dtype.name
        if output_loading_info:
            return model, info
        return model

    def _load_checkpoint(self, checkpoint, ignore_mismatched_sizes, key_mapping=None):
        """Copy checkpoint tensors into the parameters; initialise whatever the checkpoint lacks.

        Checkpoint keys first go through the model's registered renamings (and a caller's
        key_mapping), then gain or lose `base_model_prefix` as the model needs; tensors that
        a registered converter builds from several checkpoint tensors are assembled first.
        """
        own = self.state_dict(keep_vars=True)
        prefix = self.base_model_prefix
        conversions = get_model_conversion_mapping(self, key_mapping=key_mapping)
        converted = ConvertedWeights(conversions)
        loaded_keys = [rename_key(k, conversions) for k in checkpoint.keys]
        has_prefix = bool(prefix) and any(k.startswith(prefix + ".") for k in loaded_keys)
        expects_prefix = bool(prefix) and any(k.startswith(prefix + ".") for k in own)
        add_prefix = bool(prefix) and not has_prefix and expects_prefix
        strip_prefix = bool(prefix) and has_prefix and not expects_prefix

        def to_model_key(key):
            key = rename_key(key, conversions)
            match = converted.match(key)
            if match is not None:
                key = match[1]
            if add_prefix:
                return f"{prefix}.{key}"
            if strip_prefix:
                return key[len(prefix) + 1:] if key.startswith(prefix + ".") else None
            return key

        if self._untie_pairs_the_checkpoint_holds({to_model_key(k) for k in checkpoint.keys}):
            own = self.state_dict(keep_vars=True)
        found, unexpected, mismatched = set(), [], []
        own_layouts = _modules_with_own_layout(self)
        pending = {}

        def hand_over(model_key, value):
            """Gather a self-serialising module's tensors; it reads them once all are in."""
            name, module, keys = own_layouts[model_key]
            gathered = pending.setdefault(name, {})
            gathered[model_key] = value
            if len(gathered) < len(keys):
                return
            del pending[name]
            missing_here, errors = [], []
            module._load_from_state_dict(gathered, f"{name}." if name else "", {}, True, missing_here, [], errors)
            if errors or missing_here:
                raise RuntimeError(f"Error(s) in loading state_dict for {self.__class__.__name__}:\n\t"
                                   + "\n\t".join(errors + [f"missing {k}" for k in missing_here]))
            found.update(keys)

        def consume(shard):
            for key, value in shard.items():
                model_key = to_model_key(key)
                if model_key in own_layouts:
                    hand_over(model_key, value)
                    continue
                if model_key is None or model_key not in own:
                    unexpected.append(key)
                    continue
                target = own[model_key]
                match = converted.match(rename_key(key, conversions))
                if match is not None:
                    converter, _, source_index, member_index = match
                    value = converted.add(converter, model_key, source_index, member_index, value,
                                          converter.members(tuple(target.shape)))
                    if value is None:
                        continue
                if tuple(value.shape) != tuple(target.shape):
                    if ignore_mismatched_sizes:
                        mismatched.append((model_key, tuple(value.shape), tuple(target.shape)))
                        continue
                    raise RuntimeError(
                        f"Error(s) in loading state_dict for {self.__class__.__name__}:\n\tsize mismatch for "
                        f"{model_key}: copying a param with shape {tuple(value.shape)} from checkpoint, the shape "
                        f"in current model is {tuple(target.shape)}.\n\tYou may consider adding "
                        "`ignore_mismatched_sizes=True` in the model `from_pretrained` method."
                    )
                _assign(target, value, adopt=checkpoint.owned)
                found.add(model_key)

        for shard in checkpoint.shards():
            consume(shard)
        incomplete = sorted(k for k in own_layouts if k not in found)
        if incomplete:  # a quantized layer has nothing to initialise itself from
            raise RuntimeError(f"Error(s) in loading state_dict for {self.__class__.__name__}: the checkpoint lacks "
                               f"{incomplete[:8]}{' ...' if len(incomplete) > 8 else ''}, which its layers' format needs")

        missing = {k for k in own if k not in found}
        self.tie_weights(missing)
        missing = set(_filter(sorted(missing), self._keys_to_ignore_on_load_missing))
        buffers = {name for name, _ in self.named_buffers()}
        unexpected = [k for k in unexpected if (to_model_key(k) or k) not in buffers]
        unexpected = set(_filter(unexpected, self._keys_to_ignore_on_load_unexpected))

        self._initialize_missing(missing | {m[0] for m in mismatched})
        # sets, as HF v5 reports them
        return {"missing_keys": missing, "unexpected_keys": unexpected, "mismatched_keys": set(mismatched),
                "error_msgs": []}

    def _untie_pairs_the_checkpoint_holds(self, model_keys):
        """Give each tied target its own Parameter when the checkpoint holds both it and its
        source, so both load; `tie_weights` then re-ties the pair only if the values agree (a
        model built tied, such as T5 whose config always ties, still loads Flan-T5's own
        head). Returns whether anything was untied."""
        untied = False
        for target, source in self._tied_mapping().items():
            if target not in model_keys or source not in model_keys:
                continue
            target_param = self.get_parameter(target)
            if target_param is not self.get_parameter(source):
                continue
            parent_name, _, name = target.rpartition(".")
            parent = self.get_submodule(parent_name) if parent_name else self
            setattr(parent, name, nn.Parameter(target_param.detach().clone(),
                                               requires_grad=target_param.requires_grad))
            untied = True
        return untied

    def _initialize_missing(self, missing):
        """Initialise what the checkpoint did not provide as __init__ would have: each module
        owning a missing tensor, and its ancestors (a parent may initialise its children, as
        ModernBERT's attention does its projections), runs `_initialize_weights`, children
        first, by the model owning it. Loaded tensors keep their values: while this runs their
        storage is set aside, and what an initialiser writes to them lands in scratch arrays."""
        if not missing:
            return
        pending = set()
        for name, module in self.named_modules():
            own = [f"{name}.{key}" if name else key for key, _ in
                   list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False))]
            if any(key in missing for key in own):
                parts = name.split(".") if name else []
                pending.update(id(self.get_submodule(".".join(parts[:i]))) for i in range(len(parts) + 1))
        tensors = self.state_dict(keep_vars=True)
        initialised = {id(t) for key, t in tensors.items() if key in missing}  # a tied tensor under any name
        loaded = {id(t): t for t in tensors.values() if id(t) not in initialised}
        kept = {key: tensor._data for key, tensor in loaded.items()}
        for tensor in loaded.values():
            tensor._data = core.empty_like(tensor)._data
        # __init__ ties after initialising: a tied target's own initialiser must not reach its source
        untied = {}
        for target, source in self._tied_mapping().items():
            shared = self.get_parameter(source)
            if self.get_parameter(target) is shared and id(shared) in initialised:
                parent_name, _, name = target.rpartition(".")
                parent = self.get_submodule(parent_name) if parent_name else self
                setattr(parent, name, nn.Parameter(core.empty_like(shared), requires_grad=shared.requires_grad))
                untied[(parent, name)] = shared
        try:
            for module in self.modules():
                if id(module) in pending:
                    module._is_hf_initialized = False
            self._apply_own_init(self, only=pending)
        finally:
            for key, tensor in loaded.items():
                tensor._data = kept[key]
            for (parent, name), shared in untied.items():
                setattr(parent, name, shared)

    def _report_loading(self, info, source):
        name = self.__class__.__name__
        if info["unexpected_keys"]:
            logger.warning(
                f"Some weights of the model checkpoint at {source} were not used when initializing {name}: "
                f"{sorted(info['unexpected_keys'])}"
            )
        if info["missing_keys"]:
            logger.warning(
                f"Some weights of {name} were not initialized from the model checkpoint at {source} and are newly "
                f"initialized: {sorted(info['missing_keys'])}\nYou should probably TRAIN this model on a down-stream "
                "task to be able to use it for predictions and inference."
            )
        if info["mismatched_keys"]:
            lines = "\n".join(f"- {k}: Reinit due to size mismatch - ckpt: {a} vs model:{b}"
                              for k, a, b in sorted(info["mismatched_keys"]))
            logger.warning(
                f"Some weights of {name} were not initialized from the model checkpoint at {source} and are newly "
                f"initialized because the shapes did not match:\n{lines}"
            )


def _modules_with_own_layout(model):
    """{state-dict key: (module name, module, all its keys)} for the modules that write a
    layout of their own (a _save_to_state_dict of their own, as bitsandbytes' layers write its
    format) and so must read it themselves, from all their tensors at once."""
    layouts = {}
    for name, module in model.named_modules():
        if type(module)._save_to_state_dict is nn.Module._save_to_state_dict:
            continue
        keys = {}
        module._save_to_state_dict(keys, f"{name}." if name else "", True)
        layouts.update({key: (name, module, set(keys)) for key in keys})
    return layouts


def _same_values(a, b):
    return tuple(a.shape) == tuple(b.shape) and bool((a.detach() == b.detach()).all())


def _filter(keys, patterns):
    if not patterns:
        return keys
    return [k for k in keys if not any(re.search(p, k) for p in patterns)]


def _assign(target, value, adopt):
    """Put a checkpoint tensor's values into a parameter/buffer, keeping the target's dtype.

    With adopt (arrays read from a file by this load, which nothing else references), a CPU
    array of the right dtype and layout becomes the parameter's storage as it is: for
    safetensors that is a copy-on-write memory mapping, so loading copies nothing and pages
    are read as they are used (a generative model's are then packed, see _pack_weights).
    Otherwise the values are copied into the target's own array,
    so no second copy of a weight lives at once.
    """
    array = value._data
    if target.device.type == "cpu":
        if adopt and _adoptable(array, target._data):
            target._data = array
        elif target._data.flags.writeable:
            np.copyto(target._data, array, casting="unsafe")
        else:
            target._data = np.array(array, dtype=target._data.dtype, order="C")
    else:
        from ..core.backends import get_backend

        if array.dtype != target._data.dtype:
            array = array.astype(target._data.dtype)
        target._data = get_backend(target.device).from_host(array, target.device.index)
    target._version[0] += 1


# A model's weights are packed from this size on (two 2 MiB pages): a smaller model's few
# TLB misses are not worth the copy.
_HUGE_PAGE_ALLOCATION = 4 << 20
_HUGE_PAGE = 2 << 20


_AUTO_DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")


def _device_from_map(device_map):
    """The one device a `device_map` places the model on (None: leave it where it was built).

    HF's maps name a device ("cuda", "cuda:0", 0, a device) or assign modules to devices
    ({"": "cuda"}); the automatic strategies fill the GPUs first, which on a machine with one GPU
    or none is the GPU or the CPU. A map that splits a model across devices (or offloads to
    disk) is refused by name rather than silently ignored: mindnlp keeps a model on one device.
    """
    if device_map is None:
        return None
    if isinstance(device_map, str) and device_map in _AUTO_DEVICE_MAPS:
        return core.device("cuda", 0) if core.cuda.is_available() else core.device("cpu")
    if isinstance(device_map, dict):
        placements = list(dict.fromkeys(_one_device(value) for value in device_map.values()))
        if len(placements) != 1:
            raise ValueError(f"device_map places the model's modules on several devices "
                             f"({sorted(map(str, placements))}): mindnlp keeps a model on one device; pass one, "
                             "e.g. device_map='cuda' or {'': 'cuda'}")
        placement = placements[0]
    else:
        placement = _one_device(device_map)
    if placement.type == "cuda" and not core.cuda.is_available():
        raise RuntimeError(f"device_map={device_map!r} places the model on {placement}, but no CUDA GPU is visible "
                           "to CuPy (install mindnlp[gpu] on a machine with one, or use device_map='cpu' or 'auto')")
    return placement


def _one_device(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return core.device("cuda", value)
    if isinstance(value, str) and value == "disk":
        raise ValueError("device_map offloads to 'disk', which mindnlp does not do: the model must fit in memory")
    try:
        return core.device(value)
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"device_map entry {value!r} is not a device (expected e.g. 'cpu', 'cuda', 'cuda:0', 0, "
                         "'auto')") from err


def _pack_weights(model):
    """Copy a generative model's CPU weights that sit on 4 KiB pages (views of a memory-mapped
    checkpoint, separate allocations) into one fresh block of memory, which the kernel is
    asked to back with 2 MiB pages (_huge_page_block).

    Decoding reads every weight once per token at the memory's speed, and on 4 KiB pages
    that stream misses the TLB every 4 KiB: a SmolLM2-135M-shaped Llama decodes a token in
    20.2 ms packed against 22.7 ms mapped, and compiled with its weights quantized at load
    time (each in its own small allocation) 11.2-12.2 ms packed against 13.1-13.8 ms scattered
    in int8, 9.8-10.3 against 10.4-11.6 ms in int4. Loading pays one copy (a few tenths of a
    second for 500 MB, as a copying loader pays anyway); encoders, which reuse each weight
    across a batch, keep the copy-free mapping.

    What is copied is a memory unit (`_small_page_unit`): a file tensor's array, or a whole
    allocation, so that weights viewing one allocation (a quantized weight is a reshape
    of the array its quantization made; tied or transposed weights) still share memory
    afterwards, each at its place in the unit's copy; a mapped file's tensors never overlap.
    A model larger than half the memory available stays mapped: its pages can then still be
    dropped and read again. A weight replaced later (resized embeddings) leaves its slot in
    the block, which lives as long as any weight still views it."""
    units = {}
    for tensor in itertools.chain(model.parameters(), model.buffers()):
        array = tensor._data
        unit = _small_page_unit(array) if tensor.device.type == "cpu" and isinstance(array, np.ndarray) else None
        if unit is not None and array.nbytes:
            units.setdefault(id(unit), (unit, []))[1].append(tensor)
    spans = [-(-unit.nbytes // 64) * 64 for unit, _ in units.values()]
    total = sum(spans)
    if not _HUGE_PAGE_ALLOCATION <= total <= _available_memory() // 2:
        return
    block = _huge_page_block(total)
    offset = 0
    for (unit, tensors), span in zip(units.values(), spans):
        copy = block[offset:offset + unit.nbytes].view(unit.dtype).reshape(unit.shape)
        np.copyto(copy, unit)
        for tensor in tensors:
            tensor._data = copy if tensor._data is unit else _view_in(copy, unit, tensor._data)
        offset += span


class _PageBlock(mmap.mmap):
    """The anonymous memory packed weights live in (_huge_page_block), told apart from a
    checkpoint's file mapping, whose views _pack_weights copies."""


def _huge_page_block(nbytes):
    """`nbytes` of fresh memory starting on a 2 MiB boundary, the kernel asked to back it with
    2 MiB pages before anything touches it.

    NumPy makes that request for its own large allocations too, but malloc may serve them from
    memory the process used and freed before (a model loaded earlier, the float32 weights a
    quantization replaced), already on 4 KiB pages that the request does not change: of a
    second SmolLM2-sized model loaded in one process, 49 of 165 MB landed on 2 MiB pages, and
    its decoding steps took ~1 ms longer than the first model's. A mapping of its own holds no
    old pages."""
    # private: a shared anonymous mapping is shared memory, which gets no 2 MiB pages
    private = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}
    block = _PageBlock(-1, nbytes + _HUGE_PAGE, **private)
    try:
        block.madvise(mmap.MADV_HUGEPAGE)
    except (AttributeError, OSError):     # no such advice on this system: 4 KiB pages, still one block
        pass
    whole = np.frombuffer(block, np.uint8)
    start = -whole.ctypes.data % _HUGE_PAGE
    return whole[start:start + nbytes]


def _view_in(copy, unit, array):
    """The view of `copy` that `array` is of `unit` (same place, shape and strides)."""
    at = array.__array_interface__["data"][0] - unit.__array_interface__["data"][0]
    view = np.ndarray(array.shape, array.dtype, buffer=copy, offset=at, strides=array.strides)
    view.flags.writeable = array.flags.writeable
    return view


def _available_memory():
    """Bytes of memory the kernel could give without swapping (Linux's MemAvailable); unbounded
    where it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return float("inf")


def _small_page_unit(array):
    """The memory to copy for an array that may sit on 4 KiB pages, or None (already packed):
    the array itself where it views a memory-mapped file (its copy is row-ordered), or the
    row-ordered allocation it owns or views, whatever its size (see _huge_page_block)."""
    root = array
    while getattr(root, "base", None) is not None:    # views, and as_strided's interface objects
        root = root.base
    if isinstance(root, memoryview):
        root = root.obj
    if isinstance(root, _PageBlock):
        return None
    if isinstance(root, mmap.mmap):
        return array
    if isinstance(root, np.ndarray) and root.flags.c_contiguous:
        return root
    return None


def _adoptable(array, current):
    flags = array.flags
    return (isinstance(array, np.ndarray) and array.dtype == current.dtype and array.shape == current.shape
            and flags.writeable and flags.aligned and flags.c_contiguous)


class _Checkpoint:
    """The weights to load: their names up front (for prefix detection), tensors shard by shard."""

    def __init__(self, keys, loaders, owned=True):
        self.keys = keys
        self._loaders = loaders
        self._first = None
        # True when the tensors were read from files by this load: the model may keep their arrays.
        self.owned = owned

    @classmethod
    def from_state_dict(cls, state_dict):
        return cls(list(state_dict), [lambda: state_dict], owned=False)

    @classmethod
    def from_gguf(cls, gguf, model):
        """A GGUF file's tensors, dequantized and named as `model` names its parameters."""
        state_dict = gguf.state_dict(model)
        return cls(list(state_dict), [lambda: state_dict])

    @classmethod
    def resolve(cls, name_or_path, use_safetensors, location):
        """Find the weight files in HF's order of preference: safetensors first, then .bin."""
        candidates = []
        if use_safetensors is not False:
            candidates += [(SAFE_WEIGHTS_NAME, False), (SAFE_WEIGHTS_INDEX_NAME, True)]
        if not use_safetensors:
            candidates += [(WEIGHTS_NAME, False), (WEIGHTS_INDEX_NAME, True)]
        for filename, is_index in candidates:
            path = cached_file(name_or_path, filename, raise_if_missing=False, **location)
            if path is None:
                continue
            if not is_index:
                checkpoint = cls(None, [lambda path=path: _load_file(path)])
                checkpoint.keys = list(checkpoint.first_shard())
                return checkpoint
            with open(path, encoding="utf-8") as fh:
                weight_map = json.load(fh)["weight_map"]
            shard_paths = [cached_file(name_or_path, shard, **location) for shard in sorted(set(weight_map.values()))]
            return cls(list(weight_map), [(lambda p=p: _load_file(p)) for p in shard_paths])
        wanted = " or ".join(name for name, _ in candidates)
        raise FileNotFoundOnHubError(f"{name_or_path} does not appear to have a file named {wanted}.")

    def first_shard(self):
        if self._first is None:
            self._first = self._loaders[0]()
        return self._first

    def shards(self):
        yield self.first_shard()
        self._first = None
        for load in self._loaders[1:]:
            yield load()


def _load_file(path):
    """A weights file's state dict; a file that cannot be parsed is a CheckpointError naming it."""
    from ..core import serialization

    try:
        if path.endswith(".safetensors"):
            return serialization.load_safetensors(path)
        return serialization.load_torch_file(path)
    except (ValueError, serialization.SafetensorError, serialization.UnpicklingError) as err:
        message = str(err) if path in str(err) else f"{path}: {err}"
        raise CheckpointError(f"cannot read the weights: {message}") from err


def _quantization_to_apply(config, requested):
    """(quantization config, whether the checkpoint already holds quantized weights).

    A config.json that records a quantization_config describes a saved quantized model: its
    config wins over one passed to from_pretrained (as in HF, with a warning when they differ).
    """
    saved = getattr(config, "quantization_config", None)
    if saved is None:
        return (None if requested is None else quantization_config_from_dict(requested)), False
    saved = quantization_config_from_dict(saved)
    if requested is not None and quantization_config_from_dict(requested) != saved:
        logger.warning("The checkpoint is already quantized: the quantization_config passed to from_pretrained is "
                       "ignored in favour of the one in its config.json.")
    return saved, True


def _resolve_dtype(dtype, config, checkpoint):
    """'auto' (the default, as in HF v5) → the config's dtype, else the checkpoint's floats."""
    if dtype is None:
        dtype = "auto"
    if dtype != "auto":
        return _as_dtype(dtype)
    declared = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    if declared:
        return _as_dtype(declared)
    for value in checkpoint.first_shard().values():
        if value.is_floating_point():
            return value.dtype
    return None
