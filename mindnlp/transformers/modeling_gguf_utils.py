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
"""
import numpy as np

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
        """{parameter name of `model`: float32 core tensor} for every tensor of the file the model has."""
        from .. import core

        names = self._names_for(model)
        heads, kv_heads = model.config.num_attention_heads, model.config.num_key_value_heads
        state = {}
        for tensor in self.reader.tensors:
            if tensor.name not in names:
                continue
            weights = self.dequantized(tensor)
            if self.gguf_architecture in _PERMUTED_QK and (".attn_q." in tensor.name or ".attn_k." in tensor.name):
                weights = _unpermute_rotary_rows(weights, heads if ".attn_q." in tensor.name else kv_heads)
            if self.gguf_architecture in _NORMS_PLUS_ONE and tensor.name.endswith("norm.weight"):
                weights = weights - 1
            state[names[tensor.name]] = core.from_numpy(np.ascontiguousarray(weights))
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
        """Within a piece its splits go by the ids of their halves; across pieces by rank, then
        by the halves' lengths, longer first; a stable sort keeps ties in vocabulary order."""
        vocab = self.vocab_dict()
        ranks = {piece: rank for piece, rank, _ in self.pieces}
        merges = []
        for piece, rank in ranks.items():
            local = [(piece[:i], piece[i:]) for i in range(1, len(piece)) if piece[:i] in vocab and piece[i:] in vocab]
            local.sort(key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
            merges.extend((rank, left, right) for left, right in local)
        merges.sort(key=lambda merge: (merge[0], len(merge[1]), len(merge[2])), reverse=True)
        return [(left, right) for _, left, right in merges]

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
