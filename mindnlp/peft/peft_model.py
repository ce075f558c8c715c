"""`PeftModel`: a base model plus named adapters, saved and loaded in HF peft's format.

Layer-injecting methods (LoRA, IA3, ...) live in `self.base_model`, a `BaseTuner` wrapping the
original model (hence saved keys start with "base_model.model."). Prompt-learning methods
(prompt tuning, prefix tuning, P-tuning) leave the model untouched: they keep one prompt
encoder per adapter in `self.prompt_encoder` and inject its output at the inputs, the one
place being `_forward_with_prompt`: virtual-token embeddings are prepended to `inputs_embeds`
(and the attention mask widened), or, for prefix tuning, passed as `past_key_values`.
"""
import contextlib
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
        return self.get_base_model()(*args, **kwargs)

    def generate(self, *args, **kwargs):
        if self._is_prompt_learning:
            raise NotImplementedError("generate with prompt-learning adapters needs their prompt encoder; see "
                                      "PeftModel._forward_with_prompt")
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

    def _setup_prompt_encoder(self, adapter_name):
        """Build the prompt encoder of a prompt-learning adapter from its registered class."""
        config = self.peft_config[adapter_name]
        encoder_cls = PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING.get(config.peft_type)
        if encoder_cls is None:
            raise ValueError(f"PEFT method {config.peft_type} is not available in mindnlp.peft yet "
                             f"(no prompt encoder registered).")
        for parameter in self.base_model.parameters():
            parameter.requires_grad_(False)
        self.prompt_encoder[adapter_name] = encoder_cls(config, self.base_model.get_input_embeddings())
        set_trainable(self, adapter_name, config.modules_to_save, inference_mode=config.inference_mode)

    def get_prompt(self, batch_size):
        """The active adapter's virtual tokens for a batch: embeddings (batch, n_virtual, dim), or for
        prefix tuning the per-layer key/value cache the encoder builds."""
        encoder = self.prompt_encoder[self.active_adapter]
        return encoder(batch_size)

    def _forward_with_prompt(self, input_ids=None, attention_mask=None, inputs_embeds=None, **kwargs):
        """Where virtual tokens enter the model (all prompt-learning methods go through here)."""
        base = self.base_model
        if self._adapters_disabled:
            return base(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds, **kwargs)
        config = self.active_peft_config
        batch_size = (input_ids if input_ids is not None else inputs_embeds).shape[0]
        if attention_mask is not None:
            prefix_mask = core.ones(batch_size, config.num_virtual_tokens, dtype=attention_mask.dtype)
            attention_mask = core.cat([prefix_mask, attention_mask], dim=1)
        if config.peft_type == PeftType.PREFIX_TUNING:
            return base(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                        past_key_values=self.get_prompt(batch_size), **kwargs)
        if inputs_embeds is None:
            inputs_embeds = base.get_input_embeddings()(input_ids)
        prompts = self.get_prompt(batch_size).to(inputs_embeds.dtype)
        labels = kwargs.pop("labels", None)
        if labels is not None:
            ignored = core.full((batch_size, config.num_virtual_tokens), -100, dtype=labels.dtype)
            kwargs["labels"] = core.cat([ignored, labels], dim=1)
        return base(inputs_embeds=core.cat([prompts, inputs_embeds], dim=1), attention_mask=attention_mask, **kwargs)

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
            os.makedirs(output_dir, exist_ok=True)
            state_dict = _unshare(state_dict)
            if safe_serialization:
                core.serialization.save_safetensors(state_dict, os.path.join(output_dir, SAFETENSORS_WEIGHTS_NAME),
                                                    metadata={"format": "pt"})
            else:
                core.save(state_dict, os.path.join(output_dir, WEIGHTS_NAME))
            if config.base_model_name_or_path is None:
                base = self.base_model if self._is_prompt_learning else self.base_model.model
                config.base_model_name_or_path = base.__dict__.get("name_or_path", None) or None
            inference_mode = config.inference_mode
            config.inference_mode = True
            auto_mapping = None
            if config.task_type is None:
                base_class = type(self.get_base_model())
                auto_mapping = {"base_model_class": base_class.__name__, "parent_library": base_class.__module__}
            config.save_pretrained(output_dir, auto_mapping_dict=auto_mapping)
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
