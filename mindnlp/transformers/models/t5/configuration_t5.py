# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""T5 configuration (defaults: google-t5/t5-small).

`feed_forward_proj` names the feed-forward block: "relu" (T5 v1.0) or "gated-gelu" (v1.1,
Flan-T5, mT5), in general "{act}" or "gated-{act}"; `dense_act_fn` and `is_gated_act` are
derived from it as HF derives them ("gated-gelu" runs the tanh GELU, "gelu_new").

Word embeddings are always tied, as in HF v5: the input embeddings, the encoder's and the
decoder's are one matrix, and so is the LM head unless a checkpoint stores a different
one (v1.1 checkpoints do; loading then leaves the head untied). What `tie_word_embeddings`
used to say survives as `scale_decoder_outputs`: v1.0 checkpoints (tied) rescale the
decoder output by d_model**-0.5 before the head, v1.1 ones (written with
`tie_word_embeddings: false`) do not.
"""
from ...configuration_utils import PretrainedConfig


class T5Config(PretrainedConfig):
    """`d_kv` is the per-head size (the attention's inner size is num_heads * d_kv, which
    need not equal d_model); `num_decoder_layers` defaults to `num_layers`; positions enter
    as a learned bias per head over `relative_attention_num_buckets` log-spaced distance
    buckets up to `relative_attention_max_distance`."""

    model_type = "t5"
    keys_to_ignore_at_inference = ["past_key_values"]
    attribute_map = {
        "hidden_size": "d_model",
        "num_attention_heads": "num_heads",
        "num_hidden_layers": "num_layers",
        "head_dim": "d_kv",
    }

    vocab_size: int = 32128
    d_model: int = 512
    d_kv: int = 64
    d_ff: int = 2048
    num_layers: int = 6
    num_decoder_layers: int | None = None
    num_heads: int = 8
    relative_attention_num_buckets: int = 32
    relative_attention_max_distance: int = 128
    dropout_rate: float | int = 0.1
    layer_norm_epsilon: float = 1e-6
    initializer_factor: float | int = 1.0
    feed_forward_proj: str = "relu"
    is_encoder_decoder: bool = True
    use_cache: bool = True
    pad_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 1
    classifier_dropout: float | int = 0.0
    is_decoder: bool = False

    def __post_init__(self, **kwargs):
        if self.num_decoder_layers is None:
            self.num_decoder_layers = self.num_layers
        act_info = self.feed_forward_proj.split("-")
        self.dense_act_fn = "gelu_new" if self.feed_forward_proj == "gated-gelu" else act_info[-1]
        self.is_gated_act = act_info[0] == "gated"
        kwargs.pop("dense_act_fn", None)
        kwargs.pop("is_gated_act", None)
        tie_word_embeddings = kwargs.pop("tie_word_embeddings", None)
        # A value written by a v5 save wins over the one implied by tie_word_embeddings.
        self.scale_decoder_outputs = kwargs.pop("scale_decoder_outputs", tie_word_embeddings is not False)
        self.tie_word_embeddings = True
        super().__post_init__(**kwargs)

    def validate_architecture(self):
        super().validate_architecture()
        act_info = self.feed_forward_proj.split("-")
        if len(act_info) > 1 and act_info[0] != "gated" or len(act_info) > 2:
            raise ValueError(
                f"`feed_forward_proj`: {self.feed_forward_proj} is not a valid activation function of the dense layer. "
                "Please make sure `feed_forward_proj` is of the format `gated-{ACT_FN}` or `{ACT_FN}`, e.g. "
                "'gated-gelu' or 'relu'"
            )


__all__ = ["T5Config"]
