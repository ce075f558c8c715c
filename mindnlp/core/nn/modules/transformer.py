# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""torch's Transformer family: encoder and decoder layers, their stacks, and the full model.

The layers are composed of MultiheadAttention, Linear, LayerNorm and Dropout under torch's
attribute names (self_attn, multihead_attn, linear1, dropout, linear2, norm1..3, dropout1..3,
layers.N, norm, encoder, decoder), so a torch state_dict loads unchanged. Inputs are
(S, N, E), or (N, S, E) with batch_first, or unbatched (S, E). In bool masks True marks a
position that may not be attended; float masks are added to the attention scores.
"""
import copy
import warnings

from ... import ops
from ...amp.autocast_mode import is_autocast_enabled
from ...autograd import grad_mode
from .. import functional as F
from .. import init
from ..functional.attention import _canonical_mask
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A float (sz, sz) causal mask: -inf above the diagonal, 0 on and below it."""
    return ops.triu(ops.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _float_mask(mask, name, target_dtype, other=None, other_name=""):
    """A mask as torch's transformer layers canonicalise it: bool becomes additive -inf / 0.

    Like torch, warns when a key padding mask and an attention mask of different dtypes are mixed.
    """
    if mask is not None and other is not None and mask.dtype != other.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    return _canonical_mask(mask, target_dtype, name)


def _get_seq_len(src, batch_first):
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """is_causal when given; with None, whether mask equals the causal mask of the sequence length."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool(ops.eq(mask, causal).all())


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need", as torch.nn.Transformer.

    custom_encoder / custom_decoder replace the default stacks (each ending in a LayerNorm).
    Every parameter with more than one dimension is re-initialised with xavier_uniform_.
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """Encode src, decode tgt against it; returns (T, N, E), (N, T, E) with batch_first, or (T, E).

        src_mask (S, S) or (N * nhead, S, S), tgt_mask (T, T) or (N * nhead, T, T), memory_mask (T, S);
        *_key_padding_mask (N, S) / (N, T), or 1-D for unbatched inputs. *_is_causal hint that the
        matching mask is the causal one (None: detect it by comparison).
        """
        is_batched = src.ndim == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float causal mask: -inf where a position would attend a later one, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


class TransformerEncoder(Module):
    """A stack of num_layers deep copies of encoder_layer, then the optional norm.

    enable_nested_tensor and mask_check are accepted as torch's: the nested-tensor path is not
    built, but its visible effect is reproduced. When torch would take it (use_nested_tensor,
    i.e. a batch_first post-norm TransformerEncoderLayer with biases, relu/gelu, equal norm
    eps and an even nhead; the first layer in eval mode; batched src; a src_key_padding_mask
    and no mask; nothing recording gradients; no autocast; and, with mask_check, padding that
    is left-aligned), every sequence keeps only its first len = #unpadded tokens, and the
    outputs at the remaining positions are 0 before the final norm (so norm's bias after it).
    With mask_check=False and padding that is not left-aligned, torch still keeps the first
    len tokens of each sequence, and so does this class. Everywhere else the padded positions
    hold the ordinary (training-mode) computation, as torch's do.
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Runs src through every layer; mask (S, S) or (N * nhead, S, S), key padding mask (N, S)."""
        src_key_padding_mask = _float_mask(src_key_padding_mask, "src_key_padding_mask", src.dtype, mask, "mask")
        mask = _float_mask(mask, "mask", src.dtype)
        first_layer = self.layers[0]
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, first_layer.self_attn.batch_first))
        kept = self._nested_kept_positions(src, mask, src_key_padding_mask)
        dropped = None if kept is None else ops.logical_not(kept)
        if dropped is not None:  # torch's nested layers see no masks, and ignore an is_causal hint
            src_key_padding_mask, is_causal = dropped, False
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if dropped is not None:
            output = ops.masked_fill(output, dropped.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_kept_positions(self, src, mask, src_key_padding_mask):
        """(N, S) bool of the tokens torch's nested-tensor path keeps, or None when it is not taken."""
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.ndim != 3
                or src_key_padding_mask is None or mask is not None or is_autocast_enabled()):
            return None
        valid = ops.eq(src_key_padding_mask, 0)
        lengths = valid.sum(dim=-1, keepdim=True)
        kept = ops.lt(ops.arange(src.shape[1], device=src.device), lengths)
        if getattr(self, "mask_check", True) and not bool(ops.eq(kept, valid).all()):
            return None
        if grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad for t in _fast_path_tensors(first, src)):
            return None
        return kept


class TransformerDecoder(Module):
    """A stack of num_layers deep copies of decoder_layer, then the optional norm."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """Runs tgt through every layer, each attending to memory; masks as Transformer.forward's."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm.

    Post-norm (x = norm(x + block(x))) by default, pre-norm (x = x + block(norm(x))) with
    norm_first. activation is "relu", "gelu" or a unary callable (a Module one is a submodule,
    as in torch). torch's inference fast path (eval mode, nothing recording gradients) gives
    the same values as this composition, except for a query whose keys are all masked: torch's
    fast path returns NaN there, its ordinary path and this layer return the finite value.
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """src (S, N, E), (N, S, E) with batch_first, or (S, E); src_mask (S, S) or (N * nhead, S, S)."""
        src_key_padding_mask = _float_mask(src_key_padding_mask, "src_key_padding_mask", src.dtype, src_mask,
                                           "src_mask")
        src_mask = _float_mask(src_mask, "src_mask", src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over memory, then a feed-forward block; residuals and LayerNorms.

    Post-norm by default, pre-norm with norm_first, as TransformerEncoderLayer.
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                                 **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """tgt (T, N, E) and memory (S, N, E) (batch first with batch_first, or unbatched 2-D)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _why_no_nested_tensor(layer):
    """torch's reason for a TransformerEncoder not to use nested tensors with this layer ('' when it may)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


def _fast_path_tensors(layer, src):
    """The tensors whose requires_grad keeps torch off its fast path (src and the first layer's weights)."""
    attn = layer.self_attn
    return (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
            layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias, layer.linear1.weight,
            layer.linear1.bias, layer.linear2.weight, layer.linear2.bias)
