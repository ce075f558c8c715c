# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PeftModel`: a base model plus named adapters, saved and loaded in HF peft's format.

Layer-injecting methods (LoRA, IA3, ...) live in `self.base_model`, a `BaseTuner` wrapping the
original model (hence saved keys start with "base_model.model."). Prompt-learning methods
(prompt tuning, prefix tuning, P-tuning) leave the model untouched: they keep one prompt
encoder per adapter in `self.prompt_encoder` and inject its output at the inputs, the one
place being `_forward_with_prompt`: virtual-token embeddings are prepended to `inputs_embeds`
(and the attention mask widened), or, for prefix tuning, passed as `past_key_values`.
"""
import contextlib
import inspect
import os
import warnings

from .. import core
from ..core import nn
from .config import PeftConfig
from .mapping import PEFT_TYPE_TO_CONFIG_MAPPING, PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING, PEFT_TYPE_TO_TUNER_MAPPING
from .utils.constants import SAFETENSORS_WEIGHTS_NAME, WEIGHTS_NAME
from .utils.other import set_trainable
from .utils.peft_types import PeftType, TaskType
from .utils.save_and_load import get_peft_model_state_dict, load_peft_weights, set_peft_model_state_dict


class PeftModel(nn.Module):
    """Wraps `model` with the adapter `adapter_name` described by `peft_config`."""

    def __init__(self, model, peft_config, adapter_name="default", autocast_adapter_dtype=True):
        super().__init__()
        self.active_adapter = adapter_name
        self.peft_type = peft_config.peft_type
        self.special_peft_forward_args = {"adapter_names"}
        self._is_prompt_learning = peft_config.is_prompt_learning
        self._adapters_disabled = False
        if self._is_prompt_learning:
            self._peft_config = {adapter_name: peft_config}
            self.base_model = model
            self.prompt_encoder = nn.ModuleDict({})
            self.prompt_tokens = {}
            self._setup_prompt_encoder(adapter_name)
        else:
            self._peft_config = None
            if peft_config.peft_type not in PEFT_TYPE_TO_TUNER_MAPPING:
                raise ValueError(f"PEFT method {peft_config.peft_type} is not available in mindnlp.peft")
            tuner_cls = PEFT_TYPE_TO_TUNER_MAPPING[peft_config.peft_type]
            self.base_model = tuner_cls(model, {adapter_name: peft_config}, adapter_name)

    # --- configuration and attributes ---------------------------------------------------

    @property
    def peft_config(self):
        if self._is_prompt_learning:
            return self._peft_config
        return self.base_model.peft_config

    @peft_config.setter
    def peft_config(self, value):
        if self._is_prompt_learning:
            self._peft_config = value
        else:
            self.base_model.peft_config = value

    @property
    def active_peft_config(self):
        return self.peft_config[self.active_adapter]

    @property
    def active_adapters(self):
        adapters = getattr(self.base_model, "active_adapters", None) if not self._is_prompt_learning else None
        if isinstance(adapters, list):
            return adapters
        return [self.active_adapter] if isinstance(self.active_adapter, str) else self.active_adapter

    def __getattr__(self, name):
        """Attributes the PeftModel lacks come from the tuner, and through it from the base model."""
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "base_model":
                raise
            return getattr(self.base_model, name)

    def get_base_model(self):
        """The original model (with the adapter layers in it, for layer-injecting methods)."""
        return self.base_model if self._is_prompt_learning else self.base_model.model

    # --- parameters -----------------------------------------------------------------------

    def get_nb_trainable_parameters(self):
        """(trainable parameters, all parameters), shared parameters counted once."""
        trainable, total = 0, 0
        for _, parameter in self.named_parameters():
            total += parameter.numel()
            if parameter.requires_grad:
                trainable += parameter.numel()
        return trainable, total

    def print_trainable_parameters(self):
        trainable, total = self.get_nb_trainable_parameters()
        print(f"trainable params: {trainable:,d} || all params: {total:,d} || trainable%: "
              f"{100 * trainable / total:.4f}")

    # --- running ------------------------------------------------------------------------

    def forward(self, *args, **kwargs):
        if self._is_prompt_learning:
            return self._forward_with_prompt(*args, **kwargs)
        if type(self) is PeftModel:
            return self.get_base_model()(*args, **kwargs)
        # the task wrappers run through the tuner, whose forward may add to the loss (AdaLoRA), as in HF peft
        return self.base_model(*args, **kwargs)

    def generate(self, *args, **kwargs):
        if self._is_prompt_learning:
            return self._generate_with_prompt(*args, **kwargs)
        return self.get_base_model().generate(*args, **kwargs)

    @contextlib.contextmanager
    def disable_adapter(self):
        """Within the block the model runs as the base model (adapters skipped, not trained)."""
        if self._is_prompt_learning:
            previous = self._adapters_disabled
            self._adapters_disabled = True
            try:
                yield
            finally:
                self._adapters_disabled = previous
            return
        self.base_model.disable_adapter_layers()
        self._adapters_disabled = True
        try:
            yield
        finally:
            self.base_model.enable_adapter_layers()
            self._adapters_disabled = False

    # --- prompt learning (the methods register a prompt encoder, see mapping.py) -----------
    # Prompt tuning and P-tuning prepend virtual-token embeddings to `inputs_embeds` (widening the
    # attention mask, and for causal LM the labels with -100); prefix tuning hands the model a
    # DynamicCache pre-filled with the virtual tokens' keys and values as `past_key_values`.

    def _setup_prompt_encoder(self, adapter_name):
        """Freeze the base model, complete the config from the model's, and build the adapter's encoder."""
        config = self.peft_config[adapter_name]
        encoder_cls = PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING.get(config.peft_type)
        if encoder_cls is None:
            raise ValueError(f"PEFT method {config.peft_type} is not available in mindnlp.peft "
                             f"(no prompt encoder registered).")
        for parameter in self.base_model.parameters():
            parameter.requires_grad_(False)
        _prepare_prompt_learning_config(config, getattr(self.base_model, "config", None))
        self.word_embeddings = self._find_word_embeddings()
        self.prompt_encoder[adapter_name] = encoder_cls(config, self.word_embeddings)
        self.prompt_tokens[adapter_name] = core.arange(config.num_virtual_tokens * config.num_transformer_submodules,
                                                       dtype=core.int64)
        set_trainable(self, adapter_name, config.modules_to_save, inference_mode=config.inference_mode)

    def _find_word_embeddings(self):
        """The base model's token embedding table (HF peft looks for `embeddings.word_embeddings`, then
        for the parameter with vocab_size rows)."""
        try:
            return self.base_model.get_submodule("embeddings.word_embeddings")
        except AttributeError:
            pass
        if hasattr(self.base_model, "get_input_embeddings"):
            embeddings = self.base_model.get_input_embeddings()
            if embeddings is not None:
                return embeddings
        vocab_size = self.base_model.config.vocab_size
        for name, parameter in self.base_model.named_parameters():
            if parameter.shape[0] == vocab_size:
                return self.base_model.get_submodule(name.rpartition(".")[0])
        raise ValueError("Could not find the word embeddings of the base model for prompt learning.")

    def _delete_prompt_adapter(self, adapter_name):
        del self.peft_config[adapter_name]
        del self.prompt_encoder[adapter_name]
        del self.prompt_tokens[adapter_name]
        if self.active_adapter == adapter_name:
            remaining = list(self.peft_config)
            self.active_adapter = remaining[0] if remaining else []

    def get_prompt_embedding_to_save(self, adapter_name):
        """What a prompt adapter saves: its encoder's output for the virtual tokens (batch dim dropped)."""
        config = self.peft_config[adapter_name]
        tokens = self.prompt_tokens[adapter_name].unsqueeze(0)
        if config.peft_type == PeftType.PREFIX_TUNING:
            tokens = tokens[:, : config.num_virtual_tokens]
        with core.no_grad():
            return self.prompt_encoder[adapter_name](tokens)[0].detach()

    def get_prompt(self, batch_size):
        """The active adapter's virtual tokens for a batch: embeddings (batch, n_virtual, dim), or for
        prefix tuning a DynamicCache holding each layer's (batch, heads, n_virtual, head_dim) keys/values."""
        config = self.active_peft_config
        encoder = self.prompt_encoder[self.active_adapter]
        tokens = self.prompt_tokens[self.active_adapter].unsqueeze(0)
        if config.peft_type != PeftType.PREFIX_TUNING:
            prompts = encoder.embedding.weight if config.inference_mode else encoder(tokens)[0]
            return prompts.unsqueeze(0).expand(batch_size, -1, -1)
        tokens = tokens[:, : config.num_virtual_tokens]
        prefix = encoder.embedding.weight.unsqueeze(0) if config.inference_mode else encoder(tokens)
        prefix = prefix.expand(batch_size, -1, -1)
        dtype = _floating_parameter_dtype(self.base_model)
        if dtype is not None:
            prefix = prefix.to(dtype)
        head_dim = config.token_dim // config.num_attention_heads
        # (batch, n, layers * 2 * heads * head_dim) → (layers * 2, batch, heads, n, head_dim)
        prefix = prefix.reshape(batch_size, config.num_virtual_tokens, config.num_layers * 2,
                                config.num_attention_heads, head_dim).permute(2, 0, 3, 1, 4)
        from ..transformers.cache_utils import DynamicCache

        return DynamicCache([(prefix[2 * layer], prefix[2 * layer + 1]) for layer in range(config.num_layers)])

    def _adjust_prompt_position_ids(self, config, kwargs, keep_token_type_ids):
        """Position ids shift by the prefix length for prefix tuning and are dropped otherwise (HF peft)."""
        if kwargs.get("position_ids") is not None:
            if config.peft_type == PeftType.PREFIX_TUNING:
                kwargs["position_ids"] = kwargs["position_ids"] + config.num_virtual_tokens
            else:
                warnings.warn("Position ids are not supported for parameter efficient tuning. Ignoring position ids.")
                kwargs["position_ids"] = None
        if not keep_token_type_ids and kwargs.get("token_type_ids") is not None:
            warnings.warn("Token type ids are not supported for parameter efficient tuning. Ignoring token type ids")
            kwargs["token_type_ids"] = None

    def _forward_with_prompt(self, input_ids=None, attention_mask=None, inputs_embeds=None, labels=None, **kwargs):
        """Where virtual tokens enter the model (all prompt-learning methods go through here).

        Outputs cover the virtual positions too (logits are (batch, n_virtual + seq, ...) for
        prompt tuning / P-tuning on a causal LM), as HF peft returns them.
        """
        base = self.base_model
        if self._adapters_disabled:
            return base(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                        labels=labels, **kwargs)
        config = self.active_peft_config
        causal_lm = config.task_type == TaskType.CAUSAL_LM
        batch_size = (input_ids if input_ids is not None else inputs_embeds).shape[0]
        if attention_mask is not None:
            prefix_mask = core.ones(batch_size, config.num_virtual_tokens, dtype=attention_mask.dtype)
            attention_mask = core.cat([prefix_mask, attention_mask], dim=1)
        self._adjust_prompt_position_ids(config, kwargs, keep_token_type_ids=not causal_lm)
        if labels is not None:
            kwargs["labels"] = labels
        if config.peft_type == PeftType.PREFIX_TUNING:
            return self._prefix_tuning_forward(input_ids, attention_mask, inputs_embeds, batch_size, **kwargs)
        if kwargs.get("token_type_ids") is not None:
            zeros = core.zeros(batch_size, config.num_virtual_tokens, dtype=kwargs["token_type_ids"].dtype)
            kwargs["token_type_ids"] = core.cat([zeros, kwargs["token_type_ids"]], dim=1)
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        if causal_lm and labels is not None:
            ignored = core.full((batch_size, config.num_virtual_tokens), -100, dtype=labels.dtype)
            kwargs["labels"] = core.cat([ignored, labels], dim=1)
        prompts = self.get_prompt(batch_size).to(inputs_embeds.dtype)
        return base(inputs_embeds=core.cat([prompts, inputs_embeds], dim=1), attention_mask=attention_mask, **kwargs)

    def _prefix_tuning_forward(self, input_ids, attention_mask, inputs_embeds, batch_size, **kwargs):
        """Models whose forward takes `past_key_values` get the prefix directly; a classifier without
        it (e.g. BertForSequenceClassification) runs its backbone with the prefix, then its pooler
        output through its dropout and head, as HF peft does."""
        past_key_values = self.get_prompt(batch_size)
        inputs = dict(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                      past_key_values=past_key_values)
        if "past_key_values" in inspect.signature(self.base_model.forward).parameters:
            return self.base_model(**inputs, **kwargs)
        return self._prefix_tuning_classifier_forward(inputs, **kwargs)

    def _prefix_tuning_classifier_forward(self, inputs, labels=None, return_dict=None, **kwargs):
        from ..transformers.modeling_outputs import SequenceClassifierOutput

        base = self.base_model
        backbone = getattr(base, base.base_model_prefix, None)
        if backbone is None or "past_key_values" not in inspect.signature(backbone.forward).parameters:
            raise ValueError("Model does not support past key values which are required for prefix tuning.")
        outputs = backbone(**inputs, **kwargs)
        pooled = outputs[1] if len(outputs) > 1 else outputs[0]
        if "dropout" in dict(base.named_children()):
            pooled = base.dropout(pooled)
        head = next(getattr(base, name) for name in ("classifier", "score") if hasattr(base, name))
        logits = head(pooled)
        loss = None
        if labels is not None:
            loss = _sequence_classification_loss(base, logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states,
                                        attentions=outputs.attentions)

    def _generate_with_prompt(self, *args, **kwargs):
        """Generation with virtual tokens: the base model's `generate`, with its
        `prepare_inputs_for_generation` wrapped so that the first step sees the prompt (or the
        prefix cache) and every step's attention mask covers the virtual tokens."""
        base = self.base_model
        original = base.prepare_inputs_for_generation

        def prepare_inputs_for_generation(*call_args, **call_kwargs):
            return self._prepare_prompt_inputs_for_generation(original(*call_args, **call_kwargs))

        base.prepare_inputs_for_generation = prepare_inputs_for_generation
        try:
            return base.generate(*args, **kwargs)
        finally:
            del base.prepare_inputs_for_generation

    def _prepare_prompt_inputs_for_generation(self, model_inputs):
        config = self.active_peft_config
        input_ids = model_inputs.get("input_ids")
        reference = input_ids if input_ids is not None else model_inputs["inputs_embeds"]
        batch_size = reference.shape[0]
        attention_mask = model_inputs.get("attention_mask")
        if attention_mask is not None:
            prefix_mask = core.ones(batch_size, config.num_virtual_tokens, dtype=attention_mask.dtype)
            model_inputs["attention_mask"] = core.cat([prefix_mask, attention_mask], dim=1)
        self._adjust_prompt_position_ids(config, model_inputs, keep_token_type_ids=False)
        cache = model_inputs.get("past_key_values")
        first_step = cache is None or cache.get_seq_length() == 0
        if not first_step:
            return model_inputs
        if config.peft_type == PeftType.PREFIX_TUNING:
            model_inputs["past_key_values"] = self.get_prompt(batch_size)
            return model_inputs
        inputs_embeds = model_inputs.get("inputs_embeds")
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        prompts = self.get_prompt(batch_size).to(inputs_embeds.dtype)
        model_inputs["inputs_embeds"] = core.cat([prompts, inputs_embeds], dim=1)
        model_inputs["input_ids"] = None
        return model_inputs

    # --- several adapters ---------------------------------------------------------------

    def add_adapter(self, adapter_name, peft_config):
        """Add an (inactive, frozen) adapter; activate it with `set_adapter`."""
        if peft_config.peft_type != self.peft_type:
            raise ValueError(f"Cannot combine adapters with different peft types. Found {self.peft_type} and "
                             f"{peft_config.peft_type}.")
        if adapter_name in self.peft_config:
            raise ValueError(f"Adapter with name {adapter_name} already exists.")
        if self._is_prompt_learning:
            self.peft_config[adapter_name] = peft_config
            self._setup_prompt_encoder(adapter_name)
            return
        self.peft_config[adapter_name] = peft_config
        try:
            self.base_model.inject_adapter(self.base_model.model, adapter_name)
        except Exception:
            del self.peft_config[adapter_name]
            raise

    def set_adapter(self, adapter_name):
        """Make `adapter_name` the active (and trainable) adapter."""
        if adapter_name not in self.peft_config:
            raise ValueError(f"Adapter {adapter_name} not found.")
        self.active_adapter = adapter_name
        if not self._is_prompt_learning:
            self.base_model.set_adapter(adapter_name)

    def delete_adapter(self, adapter_name):
        if adapter_name not in self.peft_config:
            raise ValueError(f"Adapter {adapter_name} does not exist")
        if self._is_prompt_learning:
            self._delete_prompt_adapter(adapter_name)
            return
        self.base_model.delete_adapter(adapter_name)
        active = self.base_model.active_adapters
        self.active_adapter = active[0] if active else []

    # --- saving and loading -------------------------------------------------------------

    def save_pretrained(self, save_directory, safe_serialization=True, selected_adapters=None,
                        save_embedding_layers="auto", is_main_process=True, **kwargs):
        """Write adapter_config.json + adapter_model.safetensors per adapter ("default" at the top,
        others in sub-folders named after them), exactly as HF peft lays them out."""
        if os.path.isfile(save_directory):
            raise ValueError(f"Provided path ({save_directory}) should be a directory, not a file")
        if selected_adapters is None:
            selected_adapters = list(self.peft_config)
        elif any(name not in self.peft_config for name in selected_adapters):
            raise ValueError(f"You passed an invalid `selected_adapters` arguments, current supported adapter names "
                             f"are {list(self.peft_config.keys())} - got {selected_adapters}.")
        if is_main_process:
            os.makedirs(save_directory, exist_ok=True)
        for adapter_name in selected_adapters:
            config = self.peft_config[adapter_name]
            state_dict = get_peft_model_state_dict(self, state_dict=kwargs.get("state_dict"),
                                                   adapter_name=adapter_name,
                                                   save_embedding_layers=save_embedding_layers)
            output_dir = save_directory if adapter_name == "default" else os.path.join(save_directory, adapter_name)
            if not is_main_process:
                continue
            state_dict = _unshare(state_dict)
            if config.base_model_name_or_path is None:
                base = self.base_model if self._is_prompt_learning else self.base_model.model
                config.base_model_name_or_path = base.__dict__.get("name_or_path", None) or None
            inference_mode = config.inference_mode
            config.inference_mode = True
            auto_mapping = None
            if config.task_type is None:
                base_class = type(self.get_base_model())
                auto_mapping = {"base_model_class": base_class.__name__, "parent_library": base_class.__module__}
            # Weights and config are written beside the old adapter and renamed into place
            # together, so a kill mid-save leaves the previous adapter whole.
            with core.serialization.staged_folder(output_dir) as staging:
                if safe_serialization:
                    core.serialization.save_safetensors(state_dict, os.path.join(staging, SAFETENSORS_WEIGHTS_NAME),
                                                        metadata={"format": "pt"})
                else:
                    core.save(state_dict, os.path.join(staging, WEIGHTS_NAME))
                config.save_pretrained(staging, auto_mapping_dict=auto_mapping)
            config.inference_mode = inference_mode

    @classmethod
    def from_pretrained(cls, model, model_id, adapter_name="default", is_trainable=False, config=None,
                        autocast_adapter_dtype=True, **kwargs):
        """Load the adapter saved at `model_id` (a folder or hub repo id) onto `model`.

        kwargs: subfolder, revision, cache_dir, token, local_files_only, and mirror/endpoint
        (a hub mirror, as in `mindnlp.transformers` from_pretrained).
        """
        location = _location(kwargs)
        if config is None:
            peft_type = PeftConfig._get_peft_type(model_id, **location)
            if peft_type not in PEFT_TYPE_TO_CONFIG_MAPPING:
                raise ValueError(f"PEFT method {peft_type!r} is not available in mindnlp.peft")
            config = PEFT_TYPE_TO_CONFIG_MAPPING[peft_type].from_pretrained(model_id, **location)
        elif not isinstance(config, PeftConfig):
            raise ValueError(f"The input config must be a PeftConfig, got {config.__class__}")
        config.inference_mode = not is_trainable
        if config.is_prompt_learning and is_trainable:
            raise ValueError("Cannot set a prompt learning adapter to trainable when loading pretrained adapter.")
        model_cls = MODEL_TYPE_TO_PEFT_MODEL_MAPPING.get(config.task_type, cls) if cls is PeftModel else cls
        peft_model = model_cls(model, config, adapter_name, autocast_adapter_dtype=autocast_adapter_dtype)
        peft_model.load_adapter(model_id, adapter_name, is_trainable=is_trainable, **location)
        return peft_model

    def load_adapter(self, model_id, adapter_name, is_trainable=False, **kwargs):
        """Load a saved adapter under `adapter_name` (added first if the model does not have it)."""
        location = _location(kwargs)
        if adapter_name not in self.peft_config:
            config = PEFT_TYPE_TO_CONFIG_MAPPING[PeftConfig._get_peft_type(model_id, **location)].from_pretrained(
                model_id, **location)
            if config.is_prompt_learning and is_trainable:
                raise ValueError("Cannot set a prompt learning adapter to trainable when loading pretrained adapter.")
            config.inference_mode = not is_trainable
            self.add_adapter(adapter_name, config)
        weights = load_peft_weights(model_id, **location)
        result = set_peft_model_state_dict(self, weights, adapter_name=adapter_name)
        if result.missing_keys:
            warnings.warn(f"Found missing adapter keys while loading the checkpoint: {result.missing_keys}.")
        if not is_trainable:
            self.eval()
        return result


def _prepare_prompt_learning_config(peft_config, model_config):
    """Fill a prompt-learning config's model dimensions from the base model's config (HF peft's rules).

    For prefix tuning on a grouped-query model the prefix holds `num_key_value_heads` heads, so
    token_dim becomes head_dim * num_key_value_heads. encoder_hidden_size defaults to token_dim.
    """
    values = model_config.to_dict() if hasattr(model_config, "to_dict") else dict(model_config or {})
    if peft_config.num_transformer_submodules is None:
        peft_config.num_transformer_submodules = 2 if peft_config.task_type == TaskType.SEQ_2_SEQ_LM else 1

    def first(names, field_name):
        for name in names:
            value = getattr(model_config, name, None) if model_config is not None else None
            value = values.get(name) if value is None else value
            if value is not None:
                return value
        raise ValueError(f"Please specify `{field_name}` in `peft_config`")

    if peft_config.num_layers is None:
        peft_config.num_layers = first(("num_hidden_layers", "num_layers", "n_layer"), "num_layers")
    if peft_config.token_dim is None:
        peft_config.token_dim = first(("hidden_size", "n_embd", "d_model"), "token_dim")
    if peft_config.num_attention_heads is None:
        peft_config.num_attention_heads = first(("num_attention_heads", "n_head", "num_heads",
                                                 "encoder_attention_heads"), "num_attention_heads")
    if peft_config.peft_type == PeftType.PREFIX_TUNING and values.get("num_key_value_heads") is not None:
        head_dim = values.get("head_dim") or peft_config.token_dim // peft_config.num_attention_heads
        peft_config.token_dim = head_dim * values["num_key_value_heads"]
        peft_config.num_attention_heads = values["num_key_value_heads"]
    if getattr(peft_config, "encoder_hidden_size", None) is None and hasattr(peft_config, "encoder_hidden_size"):
        peft_config.encoder_hidden_size = peft_config.token_dim
    return peft_config


def _floating_parameter_dtype(model):
    for parameter in model.parameters():
        if parameter.dtype in (core.float16, core.bfloat16, core.float32, core.float64):
            return parameter.dtype
    return None


def _sequence_classification_loss(model, logits, labels):
    """transformers' rule: regression for one label, cross-entropy for integer labels, else multi-label BCE."""
    config = model.config
    if config.problem_type is None:
        if model.num_labels == 1:
            config.problem_type = "regression"
        elif labels.dtype in (core.int64, core.int32):
            config.problem_type = "single_label_classification"
        else:
            config.problem_type = "multi_label_classification"
    if config.problem_type == "regression":
        return nn.functional.mse_loss(logits.squeeze(), labels.squeeze().to(logits.dtype)) if model.num_labels == 1 \
            else nn.functional.mse_loss(logits, labels.to(logits.dtype))
    if config.problem_type == "single_label_classification":
        return nn.functional.cross_entropy(logits.view(-1, model.num_labels), labels.view(-1))
    return nn.functional.binary_cross_entropy_with_logits(logits, labels.to(logits.dtype))


def _location(kwargs):
    keys = ("subfolder", "revision", "cache_dir", "token", "local_files_only", "mirror", "endpoint")
    return {key: kwargs[key] for key in keys if kwargs.get(key) is not None}


def _unshare(state_dict):
    """safetensors refuses tensors sharing memory: give later duplicates their own copy (as peft does)."""
    seen, result = set(), {}
    for name, tensor in state_dict.items():
        ident = (tensor.data_ptr(), tuple(tensor.shape), tensor.stride())
        result[name] = tensor.clone() if ident in seen else tensor.detach().contiguous()
        seen.add(ident)
    return result


class PeftModelForSequenceClassification(PeftModel):
    """Sequence classification: the new head ("classifier" or "score") is trained in full and saved."""

    def __init__(self, model, peft_config, adapter_name="default", **kwargs):
        classifier_module_names = ["classifier", "score"]
        if hasattr(peft_config, "modules_to_save"):
            if peft_config.modules_to_save is None:
                peft_config.modules_to_save = classifier_module_names[:]
            else:
                peft_config.modules_to_save.extend(classifier_module_names)
        super().__init__(model, peft_config, adapter_name, **kwargs)
        set_trainable(self, adapter_name, getattr(peft_config, "modules_to_save", None),
                      inference_mode=peft_config.inference_mode)

    def add_adapter(self, adapter_name, peft_config):
        if hasattr(peft_config, "modules_to_save"):
            names = ["classifier", "score"]
            peft_config.modules_to_save = names if peft_config.modules_to_save is None else \
                list(peft_config.modules_to_save) + names
        super().add_adapter(adapter_name, peft_config)


class PeftModelForCausalLM(PeftModel):
    """Causal language modelling; `generate` runs the base model's generation with the adapter in place."""


class PeftModelForSeq2SeqLM(PeftModel):
    """Encoder-decoder language modelling."""


class PeftModelForTokenClassification(PeftModel):
    """Token classification."""


class PeftModelForQuestionAnswering(PeftModel):
    """Extractive question answering."""


class PeftModelForFeatureExtraction(PeftModel):
    """Embedding / feature extraction models."""


MODEL_TYPE_TO_PEFT_MODEL_MAPPING = {
    TaskType.SEQ_CLS: PeftModelForSequenceClassification,
    TaskType.SEQ_2_SEQ_LM: PeftModelForSeq2SeqLM,
    TaskType.CAUSAL_LM: PeftModelForCausalLM,
    TaskType.TOKEN_CLS: PeftModelForTokenClassification,
    TaskType.QUESTION_ANS: PeftModelForQuestionAnswering,
    TaskType.FEATURE_EXTRACTION: PeftModelForFeatureExtraction,
}
