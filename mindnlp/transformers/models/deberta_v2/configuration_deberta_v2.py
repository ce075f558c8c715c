# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DeBERTa-v2 / v3 configuration (defaults: microsoft/deberta-v2-xlarge).

Released checkpoints also set options this class does not declare, read by the model with
their defaults when absent: `position_buckets` (-1: no log buckets), `share_att_key`,
`norm_rel_ebd` ("layer_norm" normalises the relative embeddings), `conv_kernel_size` (a
convolution beside the first layer), `embedding_size`, `attention_head_size`, `cls_dropout`.
"""
from ...configuration_utils import PretrainedConfig


class DebertaV2Config(PretrainedConfig):
    """`pos_att_type` lists the disentangled terms ("c2p", "p2c"); old files spell it "c2p|p2c"."""

    model_type = "deberta-v2"

    vocab_size: int = 128100
    hidden_size: int = 1536
    num_hidden_layers: int = 24
    num_attention_heads: int = 24
    intermediate_size: int = 6144
    hidden_act: str = "gelu"
    hidden_dropout_prob: float | int = 0.1
    attention_probs_dropout_prob: float | int = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 0
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-7
    relative_attention: bool = False
    max_relative_positions: int = -1
    pad_token_id: int | None = 0
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    position_biased_input: bool = True
    pos_att_type: list | str | None = None
    pooler_dropout: float | int = 0
    pooler_hidden_act: str = "gelu"
    legacy: bool = True
    tie_word_embeddings: bool = True

    def __post_init__(self, **kwargs):
        if isinstance(self.pos_att_type, str):
            self.pos_att_type = [kind.strip() for kind in self.pos_att_type.lower().split("|")]
        self.pooler_hidden_size = kwargs.pop("pooler_hidden_size", self.hidden_size)
        super().__post_init__(**kwargs)
