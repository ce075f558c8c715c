"""The tiny decoder-only LM of tests/fixtures/make_generation_fixtures.py, written with mindnlp.

Token + position embeddings, two attention layers that store their keys/values through the
cache (`past_key_values.update`), a tanh MLP and an LM head: enough to make generation depend
on the whole context, the positions, the padding mask and the cache.
"""
import json
import math
import os

import numpy as np

from mindnlp import core
from mindnlp.core import nn
from mindnlp.transformers.configuration_utils import PretrainedConfig
from mindnlp.transformers.generation.utils import GenerationMixin
from mindnlp.transformers.modeling_outputs import CausalLMOutputWithPast
from mindnlp.transformers.modeling_utils import PreTrainedModel

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "generation")


class TinyLMConfig(PretrainedConfig):
    model_type = "tiny_lm"

    def __init__(self, vocab_size=421, hidden_size=32, num_attention_heads=2, num_hidden_layers=2,
                 max_position_embeddings=64, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.num_hidden_layers = num_hidden_layers
        self.max_position_embeddings = max_position_embeddings
        super().__init__(**kwargs)


class TinyLayer(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        d = config.hidden_size
        self.layer_idx = layer_idx
        self.num_heads = config.num_attention_heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        self.fc_in = nn.Linear(d, 2 * d)
        self.fc_out = nn.Linear(2 * d, d)

    def forward(self, x, attention_mask, past_key_values, past):
        b, t, d = x.shape
        h = self.num_heads

        def heads(y):
            return y.view(b, t, h, d // h).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        if past_key_values is not None:
            k, v = past_key_values.update(k, v, self.layer_idx)
        # A static cache returns its whole buffer, the positions after the filled ones unwritten;
        # the causal mask (and a padding mask padded with zeros) hides them.
        kv_len = k.shape[2]
        allowed = core.arange(kv_len)[None, :] <= (core.arange(t) + past)[:, None]
        allowed = allowed[None, None]
        if attention_mask is not None:
            seen = attention_mask[:, None, None, -kv_len:]
            if seen.shape[-1] < kv_len:
                seen = core.cat([seen, seen.new_zeros(seen.shape[:-1] + (kv_len - seen.shape[-1],))], dim=-1)
            allowed = allowed & seen.bool()
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h)
        scores = scores.masked_fill(~allowed, core.finfo(scores.dtype).min)
        out = (nn.functional.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o_proj(out)
        return x + self.fc_out(core.tanh(self.fc_in(x)))


class TinyLM(PreTrainedModel, GenerationMixin):
    config_class = TinyLMConfig

    def __init__(self, config):
        super().__init__(config)
        self.wte = nn.Embedding(config.vocab_size, config.hidden_size)
        self.wpe = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.layers = nn.ModuleList([TinyLayer(config, i) for i in range(config.num_hidden_layers)])
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, use_cache=None,
                logits_to_keep=0, return_dict=True, **kwargs):
        t = input_ids.shape[1]
        past = past_key_values.get_seq_length() if past_key_values is not None else 0
        if position_ids is None:
            position_ids = core.arange(past, past + t)[None, :]
        x = self.wte(input_ids) + self.wpe(position_ids)
        for layer in self.layers:
            x = layer(x, attention_mask, past_key_values if use_cache else None, past)
        if logits_to_keep:
            x = x[:, -logits_to_keep:]
        return CausalLMOutputWithPast(logits=self.lm_head(x), past_key_values=past_key_values if use_cache else None)


def load_tiny_lm():
    """The fixture's tiny LM with the weights HF generated with."""
    with open(os.path.join(FIXTURES, "tiny_lm.json")) as fh:
        config = TinyLMConfig(**json.load(fh))
    model = TinyLM(config)
    weights = np.load(os.path.join(FIXTURES, "tiny_lm.npz"))
    state = model.state_dict()
    with core.no_grad():
        for name, value in weights.items():
            state[name].copy_(core.tensor(value))
    return model.eval()
