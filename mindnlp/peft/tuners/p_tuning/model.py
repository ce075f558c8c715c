# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PromptEncoder` (P-tuning): virtual-token embeddings put through an MLP, or an LSTM and an MLP.

Only the encoder's output is saved ("prompt_embeddings"), so the MLP/LSTM exist only while
training; an adapter loaded for inference is a plain embedding table.
"""
import math
import warnings

from .... import core
from ....core import nn
from ..prompt_tuning.model import BasePromptEncoder
from .config import PromptEncoderConfig, PromptEncoderReparameterizationType


class BidirectionalLSTM(nn.Module):
    """A batch-first, bidirectional, multi-layer LSTM with torch.nn.LSTM's parameter names and init.

    Gates are ordered (input, forget, cell, output) as in torch; layer l > 0 reads both
    directions' outputs of layer l - 1, with `dropout` between layers while training.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, dropout=0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.dropout = dropout
        bound = 1 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else 2 * hidden_size
            for suffix in ("", "_reverse"):
                for name, shape in ((f"weight_ih_l{layer}{suffix}", (4 * hidden_size, layer_input)),
                                    (f"weight_hh_l{layer}{suffix}", (4 * hidden_size, hidden_size)),
                                    (f"bias_ih_l{layer}{suffix}", (4 * hidden_size,)),
                                    (f"bias_hh_l{layer}{suffix}", (4 * hidden_size,))):
                    parameter = nn.Parameter(core.empty(*shape))
                    nn.init.uniform_(parameter, -bound, bound)
                    setattr(self, name, parameter)

    def _direction(self, inputs, layer, suffix, reverse):
        weight_ih = getattr(self, f"weight_ih_l{layer}{suffix}")
        weight_hh = getattr(self, f"weight_hh_l{layer}{suffix}")
        bias = getattr(self, f"bias_ih_l{layer}{suffix}") + getattr(self, f"bias_hh_l{layer}{suffix}")
        projected = inputs @ weight_ih.T + bias  # all time steps at once
        batch, steps = inputs.shape[0], inputs.shape[1]
        hidden = core.zeros(batch, self.hidden_size, dtype=inputs.dtype)
        cell = core.zeros(batch, self.hidden_size, dtype=inputs.dtype)
        outputs = [None] * steps
        for step in (reversed(range(steps)) if reverse else range(steps)):
            gates = projected[:, step] + hidden @ weight_hh.T
            input_gate, forget_gate, cell_gate, output_gate = gates.chunk(4, dim=-1)
            cell = core.sigmoid(forget_gate) * cell + core.sigmoid(input_gate) * core.tanh(cell_gate)
            hidden = core.sigmoid(output_gate) * core.tanh(cell)
            outputs[step] = hidden
        return core.stack(outputs, dim=1)

    def forward(self, inputs):
        """(batch, steps, input_size) → ((batch, steps, 2 * hidden_size), None)."""
        hidden = inputs
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0:
                hidden = nn.functional.dropout(hidden, self.dropout, self.training)
            hidden = core.cat([self._direction(hidden, layer, "", reverse=False),
                               self._direction(hidden, layer, "_reverse", reverse=True)], dim=-1)
        return hidden, None


class PromptEncoder(BasePromptEncoder):
    """indices (batch, n) → (batch, n, token_dim)."""

    def __init__(self, config, word_embeddings=None):
        super().__init__()
        self.token_dim = config.token_dim
        self.input_size = self.token_dim
        self.output_size = self.token_dim
        self.hidden_size = config.encoder_hidden_size
        self.total_virtual_tokens = config.num_virtual_tokens * config.num_transformer_submodules
        self.encoder_type = PromptEncoderReparameterizationType(config.encoder_reparameterization_type)
        self.embedding = nn.Embedding(self.total_virtual_tokens, self.token_dim)
        if config.inference_mode:
            return
        if self.encoder_type == PromptEncoderReparameterizationType.LSTM:
            self.lstm_head = BidirectionalLSTM(self.input_size, self.hidden_size, num_layers=config.encoder_num_layers,
                                               dropout=config.encoder_dropout)
            self.mlp_head = nn.Sequential(nn.Linear(self.hidden_size * 2, self.hidden_size * 2), nn.ReLU(),
                                          nn.Linear(self.hidden_size * 2, self.output_size))
        else:
            if config.encoder_num_layers != PromptEncoderConfig.encoder_num_layers:
                warnings.warn(f"for {self.encoder_type.value}, the argument `encoder_num_layers` is ignored. Exactly "
                              f"{PromptEncoderConfig.encoder_num_layers} MLP layers are used.")
            self.mlp_head = nn.Sequential(nn.Linear(self.input_size, self.hidden_size), nn.ReLU(),
                                          nn.Linear(self.hidden_size, self.hidden_size), nn.ReLU(),
                                          nn.Linear(self.hidden_size, self.output_size))

    def forward(self, indices):
        embeddings = self.embedding(indices)
        if self.encoder_type == PromptEncoderReparameterizationType.LSTM:
            return self.mlp_head(self.lstm_head(embeddings)[0])
        return self.mlp_head(embeddings)
