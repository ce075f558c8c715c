# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Reading GGUF files (llama.cpp's format): the config from the metadata, the weights dequantized.

`from_pretrained(folder_or_repo, gguf_file=NAME)` on a config or model class goes through here,
as in HF transformers: the file's metadata becomes the HF config (`llama.block_count` →
`num_hidden_layers`, ...), each tensor is dequantized to float32 with the `gguf` package (every
type it knows: F32, F16, BF16, Q8_0, Q4_0/Q4_1, Q5_0/Q5_1, Q2_K–Q6_K, ...), renamed from GGUF's
`blk.N.attn_q.weight` to the model's parameter name with gguf's own name table, and, for
llama-architecture files, has the query/key row permutation llama.cpp applies for its rotary
layout undone, and, for Gemma files, the 1 llama.cpp adds to every RMSNorm weight (Gemma's norms
scale by 1 + weight) taken off again. Loading a GGUF file yields a float32 model (or the dtype
asked for): the quantization is a storage format here.

With `dequantize=False` the linear weights whose blocks are a scale times a small integer, plus
an offset per group or not, stay quantized as core.nn.QuantizedLinear in the compiled kernels'
formats, which hold them exactly (KERNEL_FORMATS): Q8_0 and Q5_0 as symmetric 8-bit in groups
of 32, Q6_K in groups of 16 (scale = d x its int8 sub-block scale, exact in float32), Q4_0 as
symmetric 4-bit in groups of 32; Q4_1 and Q4_K as affine 4-bit in groups of 32 (Q4_K: scale =
d x its 6-bit sub-block scale, offset = -dmin x its 6-bit sub-block min), Q5_1 and Q5_K as
affine 8-bit holding their 5-bit integers, Q2_K as affine 8-bit in groups of 16. Q3_K and other
layouts are dequantized to float32. A tied output head is kept quantized from the token
embedding's blocks, as llama.cpp computes it, while the input embedding is looked up in float32.
Such a model saves its kernel tensors with config.json's `gguf_kept_blocks` ({layer: block
type}), from which from_pretrained puts the same layers back before loading them.
"""
import logging
from collections import Counter

import numpy as np

logger = logging.getLogger(__name__)

# GGUF metadata key (after "<architecture>.") -> HF config field, for the architectures read here.
_DECODER_FIELDS = {
    "context_length": "max_position_embeddings",
    "block_count": "num_hidden_layers",
    "feed_forward_length": "intermediate_size",
    "embedding_length": "hidden_size",
    "rope.freq_base": "rope_theta",
    "attention.head_count": "num_attention_heads",
    "attention.head_count_kv": "num_key_value_heads",
    "attention.layer_norm_rms_epsilon": "rms_norm_eps",
    "vocab_size": "vocab_size",
}
# Gemma's head size is its own (attention.key_length), not hidden_size / heads
_GEMMA_FIELDS = {**_DECODER_FIELDS, "attention.key_length": "head_dim", "attention.sliding_window": "sliding_window"}
CONFIG_FIELDS = {
    # rope.dimension_count is the head size only where the whole head is rotated
    "llama": {**_DECODER_FIELDS, "rope.dimension_count": "head_dim"},
    "mistral": {**_DECODER_FIELDS, "rope.dimension_count": "head_dim"},
    "qwen2": dict(_DECODER_FIELDS),
    "qwen3": {**_DECODER_FIELDS, "attention.key_length": "head_dim"},
    "phi3": dict(_DECODER_FIELDS),
    "gemma": {key: field for key, field in _GEMMA_FIELDS.items() if key != "attention.sliding_window"},
    "gemma2": _GEMMA_FIELDS,
    "gemma3_text": _GEMMA_FIELDS,
}
# GGUF architecture -> HF model_type where they differ: a Gemma 3 file holds the text model only
_MODEL_TYPES = {"gemma3": "gemma3_text"}
_TOKENIZER_FIELDS = {"bos_token_id": "bos_token_id", "eos_token_id": "eos_token_id",
                     "unknown_token_id": "unk_token_id", "padding_token_id": "pad_token_id"}
# GGUF block type -> (bits, group size, scheme) of the kernel format that holds it exactly
KERNEL_FORMATS = {"Q8_0": (8, 32, "symmetric"), "Q5_0": (8, 32, "symmetric"), "Q6_K": (8, 16, "symmetric"),
                  "Q4_0": (4, 32, "symmetric"), "Q4_1": (4, 32, "affine"), "Q4_K": (4, 32, "affine"),
                  "Q5_1": (8, 32, "affine"), "Q5_K": (8, 32, "affine"), "Q2_K": (8, 16, "affine")}
_ONE_FLOAT16 = np.frombuffer(np.float16(1.0).tobytes(), np.uint8)
# The 12 bytes of Q4_K/Q5_K sub-block scales and mins (6 bits each) that all read 1 and 0
_UNIT_K_SCALES = np.array([1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1], np.uint8)
# llama.cpp stores these architectures' query/key rows interleaved for its rotary layout
_PERMUTED_QK = {"llama", "mistral"}
# and writes these architectures' RMSNorm weights as 1 + weight (the scale Gemma's norms apply)
_NORMS_PLUS_ONE = {"gemma", "gemma2", "gemma3"}


def _gguf():
    try:
        import gguf
    except ImportError as err:
        raise ImportError("reading GGUF files needs the `gguf` package: pip install 'mindnlp[gguf]'") from err
    return gguf


def _field_value(field):
    """A metadata field's value: a number, bool, string, or a list of them."""
    gguf = _gguf()
    values = []
    for index in field.data:
        part = field.parts[index]
        kind = field.types[-1]
        if kind == gguf.GGUFValueType.STRING:
            values.append(bytes(part).decode("utf-8"))
        elif kind == gguf.GGUFValueType.BOOL:
            values.append(bool(part[0]))
        elif kind in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
            values.append(float(part[0]))
        else:
            values.append(int(part[0]))
    if field.types[0] == gguf.GGUFValueType.ARRAY:
        return values
    return values[0]


class GGUFFile:
    """One GGUF file: its architecture (HF's model_type), config dict and tensors."""

    def __init__(self, path):
        gguf = _gguf()
        try:
            self.reader = gguf.GGUFReader(path)
        except (ValueError, OSError) as err:
            raise OSError(f"{path} is not a readable GGUF file: {err}") from err
        self.path = path
        self.metadata = {name: _field_value(field) for name, field in self.reader.fields.items()
                         if not name.startswith("GGUF.")}
        self.gguf_architecture = self.metadata.get("general.architecture")
        self.model_type = self._model_type()

    def _model_type(self):
        """HF's model_type. llama.cpp writes Mistral models with the "llama" architecture; HF
        transformers reads such a file as Mistral only when general.name is exactly "mistral"
        (otherwise as Llama, which computes the same for sequences within the sliding window),
        and so does this."""
        architecture = self.gguf_architecture
        name = self.metadata.get("general.name")
        model_type = "mistral" if architecture == "llama" and name == "mistral" else architecture
        model_type = _MODEL_TYPES.get(model_type, model_type)
        if model_type not in CONFIG_FIELDS:
            readable = sorted({next((a for a, t in _MODEL_TYPES.items() if t == m), m) for m in CONFIG_FIELDS})
            raise ValueError(f"{self.path}: GGUF architecture {architecture!r} is not supported yet; mindnlp reads "
                             f"GGUF files of {', '.join(readable)}")
        return model_type

    def config_dict(self):
        """The HF config of the file (what config.json would hold)."""
        config = {"model_type": self.model_type}
        prefix = self.gguf_architecture + "."
        for key, field in CONFIG_FIELDS[self.model_type].items():
            if prefix + key in self.metadata:
                config[field] = self.metadata[prefix + key]
        for key, field in _TOKENIZER_FIELDS.items():
            if f"tokenizer.ggml.{key}" in self.metadata:
                config[field] = self.metadata[f"tokenizer.ggml.{key}"]
        if "vocab_size" not in config and "tokenizer.ggml.tokens" in self.metadata:
            config["vocab_size"] = len(self.metadata["tokenizer.ggml.tokens"])
        # no separate output matrix in the file: the head is the token embedding
        config["tie_word_embeddings"] = all(tensor.name != "output.weight" for tensor in self.reader.tensors)
        return config

    def state_dict(self, model):
        """{parameter name of `model`: float32 core tensor} for every tensor of the file the model
        has; for the model's QuantizedLinear layers (`keep_quantized`), the blocks in the kernels'
        format as `<layer>.weight` and `<layer>.weight_scale`."""
        from .. import core

        names = self._names_for(model)
        heads, kv_heads = model.config.num_attention_heads, model.config.num_key_value_heads
        kept = {name for name, module in model.named_modules() if isinstance(module, core.nn.QuantizedLinear)}
        state = {}
        for tensor in self.reader.tensors:
            if tensor.name not in names:
                continue
            target = names[tensor.name]
            rows = None
            if self.gguf_architecture in _PERMUTED_QK and (".attn_q." in tensor.name or ".attn_k." in tensor.name):
                rows = heads if ".attn_q." in tensor.name else kv_heads
            if target.removesuffix(".weight") in kept:
                parts = dict(zip(("", "_scale", "_offset"), self.kernel_weight(tensor)))
                for suffix, array in parts.items():
                    if array is not None:
                        state[target + suffix] = core_from_numpy(
                            array if rows is None else _unpermute_rotary_rows(array, rows))
                continue
            weights = self.dequantized(tensor)
            if rows is not None:
                weights = _unpermute_rotary_rows(weights, rows)
            if self.gguf_architecture in _NORMS_PLUS_ONE and tensor.name.endswith("norm.weight"):
                weights = weights - 1
            state[target] = core_from_numpy(weights)
        return state

    def dequantized(self, tensor):
        """A tensor of the file (a gguf ReaderTensor, or its name) as float32 values in HF's
        (rows, columns) order, whatever its block type."""
        gguf = _gguf()
        if isinstance(tensor, str):
            name, tensor = tensor, next((t for t in self.reader.tensors if t.name == tensor), None)
            if tensor is None:
                raise KeyError(f"{self.path} has no tensor named {name!r}")
        return gguf.dequantize(tensor.data, tensor.tensor_type).astype(np.float32, copy=False)

    def kernel_weight(self, tensor):
        """(q, scales, offsets) of a tensor whose block type is in KERNEL_FORMATS, in the kernels'
        format (core.nn.functional.quantized; offsets None for a symmetric one): the same values
        as `dequantized`, not rounded again.

        The integers are the gguf package's own dequantization of the blocks with every scale
        field set to 1 and every offset field to 0; the scales and offsets are read from the
        blocks' fields (`_block_scales`)."""
        from ..core.nn.functional.quantized import _pack_nibbles

        gguf = _gguf()
        kind = tensor.tensor_type.name
        if kind not in KERNEL_FORMATS:
            raise ValueError(f"{tensor.name} is {kind}, which no kernel format holds exactly; supported: "
                             f"{sorted(KERNEL_FORMATS)}")
        bits, group_size, scheme = KERNEL_FORMATS[kind]
        type_size = gguf.GGML_QUANT_SIZES[tensor.tensor_type][1]
        rows = tensor.data.shape[0]
        blocks = np.asarray(tensor.data).reshape(rows, -1, type_size)
        unit = blocks.copy()
        scales, offsets = _block_scales(kind, blocks, unit)
        q = gguf.dequantize(unit.reshape(rows, -1), tensor.tensor_type)
        scales = scales.reshape(rows, -1)
        offsets = None if offsets is None else offsets.reshape(rows, -1)
        if bits == 8:
            return q.astype(np.int8 if scheme == "symmetric" else np.uint8), scales, offsets
        levels = (q + (8 if scheme == "symmetric" else 0)).astype(np.uint8).reshape(rows, -1, group_size)
        return _pack_nibbles(levels).reshape(rows, -1), scales, offsets

    def keep_quantized(self, model):
        """Put a QuantizedLinear of the right format in place of each nn.Linear whose weight the
        file holds in a KERNEL_FORMATS type (`state_dict` then fills it with the blocks).
        Returns {module name: block type} and logs which linear weights stay float32, and why."""
        from ..core import nn

        names = self._names_for(model)
        kinds = {names[t.name]: t.tensor_type.name for t in self.reader.tensors if t.name in names}
        kept, left = {}, Counter()
        for name, module in list(model.named_modules()):
            kind = kinds.get(f"{name}.weight")
            if not isinstance(module, nn.Linear) or kind is None:
                continue
            if kind not in KERNEL_FORMATS:
                if kind not in ("F32", "F16", "BF16"):
                    left[kind] += 1
                continue
            kept[name] = kind
        put_kept_blocks(model, kept)
        if left:
            types = ", ".join(f"{kind} ({count})" for kind, count in sorted(left.items()))
            logger.warning(f"{sum(left.values())} linear weights of {self.path} are dequantized to float32: their "
                           f"block types {types} have a layout that the 8-bit and 4-bit kernel formats do not "
                           "hold; pass quantization_config=QuantoConfig(weights=\"int8\") to requantize them")
        return kept

    def keep_tied_head_quantized(self, model):
        """The output head of a model that ties it to the token embedding, as a QuantizedLinear
        of the embedding's blocks when their type is in KERNEL_FORMATS (the input embedding
        stays float32 for its lookups). The pair is untied on this model: the head no longer
        shares the embedding's Parameter. Returns {head's name: block type}, empty when it stays."""
        from ..core import nn

        head = model.get_output_embeddings()
        embedding = next((t for t in self.reader.tensors if t.name == "token_embd.weight"), None)
        if (not model.config.get_text_config().tie_word_embeddings or not isinstance(head, nn.Linear)
                or embedding is None or embedding.tensor_type.name not in KERNEL_FORMATS):
            return {}
        name = next(name for name, module in model.named_modules() if module is head)
        kept = {name: embedding.tensor_type.name}
        put_kept_blocks(model, kept)
        layer = model.get_submodule(name)
        q, scales, offsets = self.kernel_weight(embedding)
        layer.weight, layer.weight_scale = core_from_numpy(q), core_from_numpy(scales)
        layer.weight_offset = None if offsets is None else core_from_numpy(offsets)
        if head.bias is not None:
            layer.bias = head.bias
        return kept

    def _names_for(self, model):
        """{GGUF tensor name: the model's parameter name}, through gguf's table of HF names."""
        gguf = _gguf()
        arch = next(key for key, value in gguf.MODEL_ARCH_NAMES.items() if value == self.gguf_architecture)
        table = gguf.get_tensor_name_map(arch, model.config.num_hidden_layers)
        names = {}
        for name in model.state_dict():
            stem, _, suffix = name.rpartition(".")
            parts = stem.split(".")
            for start in range(len(parts)):  # "model.layers.0.mlp.up_proj", then "layers.0.mlp.up_proj", ...
                gguf_name = table.get_name(".".join(parts[start:]))
                if gguf_name is not None:
                    names.setdefault(f"{gguf_name}.{suffix}", name)
                    break
        return names


def put_kept_blocks(model, kept):
    """Put an empty QuantizedLinear of each block type's kernel format in place of the linear
    layers `kept` names ({module name: GGUF block type}), as loading a GGUF file with
    dequantize=False does and as reloading a model saved that way (its config.json's
    `gguf_kept_blocks`) does before the checkpoint fills them. A kept output head no longer
    shares the input embedding's Parameter: the model's ties are dropped."""
    from ..core import nn

    unknown = sorted({kind for kind in kept.values() if kind not in KERNEL_FORMATS})
    if unknown:
        raise ValueError(f"gguf_kept_blocks names block types {unknown} that no kernel format holds; "
                         f"supported: {sorted(KERNEL_FORMATS)}")
    head = model.get_output_embeddings()
    for name, kind in kept.items():
        module = model.get_submodule(name)
        if not isinstance(module, nn.Linear):
            raise ValueError(f"gguf_kept_blocks names {name!r}, which is a {type(module).__name__}, not a linear layer")
        bits, group_size, scheme = KERNEL_FORMATS[kind]
        _replace(model, name, nn.QuantizedLinear(module.in_features, module.out_features, module.bias is not None,
                                                 bits, group_size, scheme=scheme))
        if module is head:
            model._tied_weights_keys = {}


def core_from_numpy(array):
    """A core tensor of a numpy array (made C-contiguous)."""
    from .. import core

    return core.from_numpy(np.ascontiguousarray(array))


def _float16_field(blocks, start):
    return np.ascontiguousarray(blocks[..., start:start + 2]).view(np.float16).astype(np.float32)[..., 0]


def _k_scales_and_mins(packed):
    """The eight 6-bit sub-block scales and mins of Q4_K/Q5_K blocks from their 12 bytes
    (llama.cpp's get_scale_min_k4): bytes 0-3 hold scales 0-3 and 4-7 mins 0-3 in their low six
    bits; scales and mins 4-7 take their low four bits from bytes 8-11 and their top two from the
    high bits of bytes 0-3 and 4-7."""
    packed = packed.astype(np.uint8)
    low, mid, high = packed[..., 0:4], packed[..., 4:8], packed[..., 8:12]
    scales = np.concatenate([low & 63, (high & 15) | ((low >> 6) << 4)], axis=-1)
    mins = np.concatenate([mid & 63, (high >> 4) | ((mid >> 6) << 4)], axis=-1)
    return scales.astype(np.float32), mins.astype(np.float32)


def _block_scales(kind, blocks, unit):
    """(scales, offsets or None) per group of GGUF blocks (rows, blocks, bytes) of a
    KERNEL_FORMATS type, each (rows, blocks, groups per block); writes unit scale fields (and
    zero offsets) into `unit`, a copy of the blocks, so that its dequantization is the integers.
    The products are exact in float32: a float16 times an integer of at most 8 bits."""
    zero16 = np.zeros(2, np.uint8)
    if kind == "Q6_K":  # ql[128] qh[64] scales int8[16] d float16
        scales = _float16_field(blocks, 208)[..., None] * blocks[..., 192:208].view(np.int8).astype(np.float32)
        unit[..., 192:208], unit[..., 208:210] = 1, _ONE_FLOAT16
        return scales, None
    if kind in ("Q4_K", "Q5_K"):  # d, dmin float16, scales[12], (Q5_K: qh[32]), qs
        d, dmin = _float16_field(blocks, 0)[..., None], _float16_field(blocks, 2)[..., None]
        sub_scales, sub_mins = _k_scales_and_mins(blocks[..., 4:16])
        unit[..., 0:2], unit[..., 2:4], unit[..., 4:16] = _ONE_FLOAT16, zero16, _UNIT_K_SCALES
        return d * sub_scales, -(dmin * sub_mins)
    if kind == "Q2_K":  # scales[16] (low nibble scale, high nibble min), qs[64], d, dmin float16
        d, dmin = _float16_field(blocks, 80)[..., None], _float16_field(blocks, 82)[..., None]
        packed = blocks[..., 0:16]
        unit[..., 0:16], unit[..., 80:82], unit[..., 82:84] = 1, _ONE_FLOAT16, zero16
        return d * (packed & 15).astype(np.float32), -(dmin * (packed >> 4).astype(np.float32))
    # Q8_0, Q5_0, Q4_0: d float16, then the quants; Q4_1, Q5_1: d, m float16, then the quants
    scales = _float16_field(blocks, 0)[..., None]
    unit[..., 0:2] = _ONE_FLOAT16
    if kind in ("Q4_1", "Q5_1"):
        unit[..., 2:4] = zero16
        return scales, _float16_field(blocks, 2)[..., None]
    return scales, None


def _replace(model, name, module):
    parent_name, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent_name) if parent_name else model, child, module)


def _unpermute_rotary_rows(weights, heads):
    """Undo llama.cpp's reordering of a query/key projection's rows: within each head it stores
    the rotary pairs interleaved, (0, d/2, 1, d/2+1, ...), where HF keeps the halves apart."""
    half = weights.shape[0] // heads // 2
    return weights.reshape(heads, half, 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


class _GGUFSentencePiece:
    """A GGUF file's sentencepiece vocabulary, shaped as convert_slow_tokenizer's
    SentencePieceModel so that the Llama or Gemma pipeline is built from it. GGUF keeps pieces,
    scores and types but no merges: they are derived as HF transformers derives them, each piece
    that splits into two pieces giving a merge ranked by `ranks[piece]` (higher first)."""

    def __init__(self, tokens, ranks, types, unk_id):
        from .convert_slow_tokenizer import BPE_MODEL, NORMAL

        types = types or [NORMAL] * len(tokens)
        self.pieces = list(zip(tokens, ranks, types))
        self.model_type = BPE_MODEL
        self.byte_fallback = True
        self.unk_piece = tokens[unk_id] if unk_id is not None else "<unk>"

    def vocab_dict(self):
        return {piece: index for index, (piece, _, _) in enumerate(self.pieces)}

    def bpe_merges(self):
        """The merges the tokens' ranks imply (convert_slow_tokenizer.merges_by_score)."""
        from .convert_slow_tokenizer import merges_by_score

        return merges_by_score([(piece, rank) for piece, rank, _ in self.pieces])

    def added_tokens(self):
        """Control pieces (special) and user-defined ones (not special) are never split."""
        from tokenizers import AddedToken

        from .convert_slow_tokenizer import CONTROL, USER_DEFINED

        return [AddedToken(piece, normalized=False, special=kind == CONTROL)
                for piece, _, kind in self.pieces if kind in (CONTROL, USER_DEFINED)]


def _sentencepiece_backend(gguf_file, tokens, types, unk_id):
    """The `tokenizers` pipeline of a "llama" (sentencepiece BPE) vocabulary, by architecture:
    - Gemma: Gemma's pipeline. A token of spaces is stored with real spaces and renamed to "▁"s,
      and merges follow the order of the vocabulary, not the scores (which do not follow it).
    - Phi-3: Llama's BPE, but "▁" is prepended by a normaliser rather than a pre-tokeniser, so
      text that starts with a space gets one "▁" more (Phi-3's own tokenizer.json does this).
    - others: Llama's pipeline, merges ranked by score, "▁" prepended to the first section only.
    """
    from tokenizers import normalizers

    from .convert_slow_tokenizer import SPIECE_UNDERLINE, gemma_sentencepiece_tokenizer, llama_sentencepiece_tokenizer

    meta = gguf_file.metadata
    if gguf_file.gguf_architecture in ("gemma", "gemma2", "gemma3"):
        tokens = [SPIECE_UNDERLINE * len(t) if " " in t and not t.strip() else t for t in tokens]
        spm = _GGUFSentencePiece(tokens, [-index for index in range(len(tokens))], types, unk_id)
        return gemma_sentencepiece_tokenizer(spm, unk_token="<unk>")
    scores = meta.get("tokenizer.ggml.scores") or [0.0] * len(tokens)
    spm = _GGUFSentencePiece(tokens, scores, types, unk_id)
    backend = llama_sentencepiece_tokenizer(spm, add_prefix_space=True, legacy=False, unk_token=spm.unk_piece)
    if gguf_file.gguf_architecture == "phi3":
        backend.normalizer = normalizers.Sequence([normalizers.Prepend(SPIECE_UNDERLINE),
                                                   normalizers.Replace(" ", SPIECE_UNDERLINE)])
        backend.pre_tokenizer = None
    return backend


def gguf_tokenizer(gguf_file, tokenizer_class, **kwargs):
    """The tokenizer a GGUF file describes (`tokenizer.ggml.*`), as `tokenizer_class`: a
    sentencepiece pipeline for "llama" vocabularies (see `_sentencepiece_backend`), byte-level BPE
    (Qwen's split rule for qwen files, GPT-2's otherwise) for "gpt2" ones; control tokens are
    special; the chat template and whether to add BOS/EOS too (BOS by default for sentencepiece
    vocabularies, as llama.cpp does)."""
    from tokenizers import AddedToken, pre_tokenizers

    from .convert_slow_tokenizer import CONTROL, byte_level_bpe_tokenizer, qwen2_tokenizer

    meta = gguf_file.metadata
    kind = meta.get("tokenizer.ggml.model")
    tokens = meta.get("tokenizer.ggml.tokens")
    if tokens is None:
        raise ValueError(f"{gguf_file.path} holds no tokenizer (no tokenizer.ggml.tokens)")
    types = meta.get("tokenizer.ggml.token_type")
    ids = {name: meta.get(f"tokenizer.ggml.{key}") for name, key in (
        ("bos_token", "bos_token_id"), ("eos_token", "eos_token_id"), ("unk_token", "unknown_token_id"),
        ("pad_token", "padding_token_id"))}
    special = {}
    if kind == "llama":
        backend = _sentencepiece_backend(gguf_file, tokens, types, ids["unk_token"])
        special["add_bos_token"] = True
    elif kind == "gpt2":
        vocab = {token: index for index, token in enumerate(tokens)}
        merges = [tuple(merge.split(" ")) for merge in meta.get("tokenizer.ggml.merges", [])]
        if gguf_file.model_type in ("qwen2", "qwen3"):
            backend = qwen2_tokenizer(vocab, merges)
        else:  # Llama 3 and other byte-level vocabularies
            backend = byte_level_bpe_tokenizer(vocab, merges)
            backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=True)
        backend.add_special_tokens([AddedToken(tokens[i], normalized=False, special=True)
                                    for i, kind_of in enumerate(types or []) if kind_of == CONTROL])
    else:
        raise ValueError(f"{gguf_file.path}: GGUF tokenizer model {kind!r} is not supported (llama and gpt2 are)")
    # a special token the file does not name is None, not the tokenizer class's default (as HF)
    special.update({name: tokens[index] if index is not None and 0 <= index < len(tokens) else None
                    for name, index in ids.items()})
    if "tokenizer.chat_template" in meta:
        special["chat_template"] = meta["tokenizer.chat_template"]
    for name, key in (("add_bos_token", "add_bos_token"), ("add_eos_token", "add_eos_token")):
        if f"tokenizer.ggml.{key}" in meta:
            special[name] = meta[f"tokenizer.ggml.{key}"]
    return tokenizer_class(tokenizer_object=backend, **{**special, **kwargs})
