# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PromptEmbedding` (prompt tuning's encoder) and the state-dict hooks every prompt encoder shares.

A prompt-learning adapter saves one tensor, "prompt_embeddings": the encoder's output for the
virtual tokens (for P-tuning, after its MLP/LSTM; for prefix tuning, the flattened per-layer
keys and values). Loading puts it into the encoder's `embedding` table, and an adapter loaded
for inference reads that table directly (HF peft's format and behaviour).
"""
import math

from .... import core
from ....core import nn
from .config import PromptTuningInit


class BasePromptEncoder(nn.Module):
    """State-dict hooks of prompt encoders, mirroring those of `BaseTuner` (see save_and_load.py)."""

    @classmethod
    def _get_adapter_state_dict(cls, model, config, adapter_name, state_dict):
        if config.inference_mode:
            prompt_embeddings = model.prompt_encoder[adapter_name].embedding.weight
        else:
            prompt_embeddings = model.get_prompt_embedding_to_save(adapter_name)
        return {"prompt_embeddings": prompt_embeddings.detach()}

    @classmethod
    def _remove_adapter_name_from_key(cls, key, adapter_name):
        from ..tuners_utils import remove_adapter_name_from_key

        return remove_adapter_name_from_key(key, adapter_name)

    @classmethod
    def _remap_adapter_state_dict_for_load(cls, model, config, adapter_name, state_dict):
        """Everything but "prompt_embeddings" (loaded by `_load_adapter_state_dict`) goes to the model."""
        return {key: value for key, value in state_dict.items() if key != "prompt_embeddings"}

    def _load_adapter_state_dict(self, state_dict):
        if "prompt_embeddings" not in state_dict:
            raise KeyError("The checkpoint holds no 'prompt_embeddings' for this prompt-learning adapter.")
        self.embedding.load_state_dict({"weight": state_dict["prompt_embeddings"]}, strict=True)


class PromptEmbedding(BasePromptEncoder):
    """The virtual tokens' embedding table: indices (batch, n) → (batch, n, token_dim)."""

    def __init__(self, config, word_embeddings):
        super().__init__()
        total_virtual_tokens = config.num_virtual_tokens * config.num_transformer_submodules
        self.embedding = nn.Embedding(total_virtual_tokens, config.token_dim)
        if config.inference_mode:
            return
        if config.prompt_tuning_init == PromptTuningInit.SAMPLE_VOCAB:
            token_ids = core.randint(0, word_embeddings.num_embeddings, (total_virtual_tokens,), dtype=core.int64)
            self._copy_word_embeddings(word_embeddings, token_ids)
        elif config.prompt_tuning_init == PromptTuningInit.TEXT:
            self._copy_word_embeddings(word_embeddings, self._text_token_ids(config, total_virtual_tokens))

    @staticmethod
    def _text_token_ids(config, total_virtual_tokens):
        """The init text's token ids, repeated or cut to exactly `total_virtual_tokens`."""
        from ....transformers import AutoTokenizer

        tokenizer_kwargs = dict(config.tokenizer_kwargs or {})
        tokenizer_kwargs.pop("trust_remote_code", None)
        tokenizer = AutoTokenizer.from_pretrained(config.tokenizer_name_or_path, **tokenizer_kwargs)
        token_ids = list(tokenizer(config.prompt_tuning_init_text)["input_ids"])
        if len(token_ids) < total_virtual_tokens:
            token_ids = token_ids * math.ceil(total_virtual_tokens / len(token_ids))
        return core.tensor(token_ids[:total_virtual_tokens], dtype=core.int64)

    def _copy_word_embeddings(self, word_embeddings, token_ids):
        with core.no_grad():
            vectors = word_embeddings(token_ids.to(word_embeddings.weight.device)).detach().to(core.float32)
        self.embedding.weight = nn.Parameter(vectors.clone())

    def forward(self, indices):
        return self.embedding(indices)
