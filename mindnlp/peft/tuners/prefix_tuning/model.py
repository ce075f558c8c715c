# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PrefixEncoder`: virtual tokens → flattened per-layer keys and values (num_layers * 2 * token_dim)."""
from ....core import nn
from ..prompt_tuning.model import BasePromptEncoder


class PrefixEncoder(BasePromptEncoder):
    """indices (batch, n) → (batch, n, num_layers * 2 * token_dim).

    Without projection (or when loaded for inference) the embedding table is the prefix itself;
    with `prefix_projection` it is embedding → Linear → tanh → Linear.
    """

    def __init__(self, config, word_embeddings=None):
        super().__init__()
        self.prefix_projection = config.prefix_projection
        output_size = config.num_layers * 2 * config.token_dim
        if self.prefix_projection and not config.inference_mode:
            self.embedding = nn.Embedding(config.num_virtual_tokens, config.token_dim)
            self.transform = nn.Sequential(nn.Linear(config.token_dim, config.encoder_hidden_size), nn.Tanh(),
                                           nn.Linear(config.encoder_hidden_size, output_size))
            if config.init_weights == "zero":
                nn.init.zeros_(self.transform[-1].weight)
                nn.init.zeros_(self.transform[-1].bias)
        else:
            self.embedding = nn.Embedding(config.num_virtual_tokens, output_size)
            if config.init_weights == "zero":
                nn.init.zeros_(self.embedding.weight)

    def forward(self, prefix):
        if self.prefix_projection:
            return self.transform(self.embedding(prefix))
        return self.embedding(prefix)

    def _load_adapter_state_dict(self, state_dict):
        if self.prefix_projection and hasattr(self, "transform"):
            raise ValueError("Cannot load flattened prompt embeddings when `prefix_projection=True`.")
        super()._load_adapter_state_dict(state_dict)
