# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Build a `tokenizers.Tokenizer` from the vocabulary files of checkpoints that ship no
tokenizer.json: a WordPiece vocab.txt (BERT), a byte-level BPE vocab.json + merges.txt (GPT-2,
RoBERTa, Qwen2), or a sentencepiece model (tokenizer.model: Llama, Gemma, T5-style unigram;
DeBERTa-v2's spm.model).

Each builder reproduces the pipeline (normaliser, pre-tokeniser, model, post-processor, decoder)
that HF's own tokenizer class uses for those files, so ids match HF on the same files.

Sentencepiece models are protobuf files; the few fields needed are read here directly from the
protobuf wire format, so neither `sentencepiece` nor `protobuf` has to be installed.
"""
import json
import struct

from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import BPE, Unigram, WordPiece

# Qwen2's pre-tokenisation regex (contractions, letters, single digits, punctuation, spaces).
QWEN2_PRETOKENIZE_REGEX = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
SPIECE_UNDERLINE = "▁"


# ---- plain vocabulary files ---------------------------------------------------------------


def load_vocab_txt(path):
    """vocab.txt: one token per line, the line number is the id."""
    vocab = {}
    with open(path, encoding="utf-8") as f:
        for index, line in enumerate(f):
            vocab[line.rstrip("\n")] = index
    if not vocab:
        raise ValueError(f"{path} is empty: a WordPiece vocab.txt lists one token per line")
    return vocab


def load_vocab_json(path):
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)
    if not isinstance(vocab, dict):
        raise ValueError(f"{path} must hold a JSON object mapping tokens to ids")
    return vocab


def load_merges_txt(path):
    """merges.txt: one "left right" pair per line, highest priority first; a "#version" header
    line and blank lines are skipped."""
    merges = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or (number == 1 and line.startswith("#version")):
                continue
            parts = line.split(" ")
            if len(parts) != 2:
                raise ValueError(f"{path} line {number}: expected two space-separated tokens, got {line!r}")
            merges.append((parts[0], parts[1]))
    return merges


def wordpiece_tokenizer(vocab, *, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", do_lower_case=True,
                        tokenize_chinese_chars=True, strip_accents=None):
    """BERT's pipeline: clean/lowercase/accent-strip, split on whitespace and punctuation, greedy
    WordPiece with "##" continuations, and `[CLS] A [SEP] (B [SEP])` with type ids 0/1."""
    if isinstance(vocab, str):
        vocab = load_vocab_txt(vocab)
    for token in (unk_token, cls_token, sep_token):
        if str(token) not in vocab:
            raise ValueError(f"the WordPiece vocabulary has no {str(token)!r} token")
    tokenizer = Tokenizer(WordPiece(vocab, unk_token=str(unk_token)))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=tokenize_chinese_chars, strip_accents=strip_accents, lowercase=do_lower_case
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.post_processor = bert_post_processor(str(cls_token), vocab[str(cls_token)], str(sep_token), vocab[str(sep_token)])
    return tokenizer


def bert_post_processor(cls_token, cls_id, sep_token, sep_id):
    return processors.TemplateProcessing(
        single=f"{cls_token}:0 $A:0 {sep_token}:0",
        pair=f"{cls_token}:0 $A:0 {sep_token}:0 $B:1 {sep_token}:1",
        special_tokens=[(cls_token, cls_id), (sep_token, sep_id)],
    )


def byte_level_bpe_tokenizer(vocab, merges, *, add_prefix_space=False, unk_token=None):
    """GPT-2's pipeline: bytes mapped to printable characters, split by GPT-2's regex, BPE merges.
    No post-processor: GPT-2 adds no special tokens."""
    if isinstance(vocab, str):
        vocab = load_vocab_json(vocab)
    if isinstance(merges, str):
        merges = load_merges_txt(merges)
    tokenizer = Tokenizer(BPE(vocab=vocab, merges=merges, dropout=None, continuing_subword_prefix="",
                              end_of_word_suffix="", fuse_unk=False,
                              unk_token=str(unk_token) if unk_token is not None and str(unk_token) in vocab else None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def roberta_post_processor(cls_token, cls_id, sep_token, sep_id, *, trim_offsets=True, add_prefix_space=False):
    """`<s> A </s>` and `<s> A </s></s> B </s>`; offsets trimmed of the byte-level space."""
    return processors.RobertaProcessing((sep_token, sep_id), (cls_token, cls_id), trim_offsets=trim_offsets,
                                        add_prefix_space=add_prefix_space)


def qwen2_tokenizer(vocab, merges, *, add_prefix_space=False):
    """Qwen2's pipeline: NFC, Qwen's split regex (digits one by one), then byte-level BPE."""
    if isinstance(vocab, str):
        vocab = load_vocab_json(vocab)
    if isinstance(merges, str):
        merges = load_merges_txt(merges)
    tokenizer = Tokenizer(BPE(vocab=vocab, merges=merges, dropout=None, unk_token=None, continuing_subword_prefix="",
                              end_of_word_suffix="", fuse_unk=False, byte_fallback=False))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


# ---- sentencepiece models -----------------------------------------------------------------

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
UNIGRAM_MODEL, BPE_MODEL = 1, 2


def _read_varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated protobuf varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _parse_fields(buf):
    """One protobuf message as {field number: [raw values]}: ints for varints, bytes for
    length-delimited fields and for fixed 32/64-bit ones."""
    fields = {}
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, pos = _read_varint(buf, pos)
        elif wire_type == 1:
            value, pos = buf[pos: pos + 8], pos + 8
        elif wire_type == 2:
            length, pos = _read_varint(buf, pos)
            value, pos = buf[pos: pos + length], pos + length
        elif wire_type == 5:
            value, pos = buf[pos: pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type}: not a sentencepiece model")
        if pos > len(buf):
            raise ValueError("truncated protobuf message: not a complete sentencepiece model")
        fields.setdefault(number, []).append(value)
    return fields


def _int32(value):
    """Negative int32 fields are sent as 64-bit two's complement varints."""
    return value - (1 << 64) if value >= 1 << 63 else value


class SentencePieceModel:
    """The parts of a sentencepiece ModelProto that define tokenisation.

    Field numbers and defaults are those of sentencepiece_model.proto: pieces (1) with piece (1),
    score (2), type (3); trainer_spec (2) with model_type (3), byte_fallback (35), unk/bos/eos/pad
    ids (40-43) and pieces (45-48); normalizer_spec (3) with precompiled_charsmap (2),
    add_dummy_prefix (3), remove_extra_whitespaces (4), escape_whitespaces (5).
    """

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        try:
            model = _parse_fields(data)
            self.pieces = []
            for raw in model.get(1, []):
                piece = _parse_fields(raw)
                text = piece[1][0].decode("utf-8") if 1 in piece else ""
                score = struct.unpack("<f", piece[2][-1])[0] if 2 in piece else 0.0
                kind = piece[3][-1] if 3 in piece else NORMAL
                self.pieces.append((text, score, kind))
            trainer = _parse_fields(model[2][-1]) if 2 in model else {}
            normalizer = _parse_fields(model[3][-1]) if 3 in model else {}
        except (ValueError, IndexError, UnicodeDecodeError, struct.error) as err:
            raise ValueError(f"{path} is not a sentencepiece model: {err}") from err
        if not self.pieces:
            raise ValueError(f"{path} is not a sentencepiece model: it has no vocabulary pieces")

        def number(fields, field, default):
            return _int32(fields[field][-1]) if field in fields else default

        def text(fields, field, default):
            return fields[field][-1].decode("utf-8") if field in fields else default

        self.model_type = number(trainer, 3, UNIGRAM_MODEL)
        self.byte_fallback = bool(number(trainer, 35, 0))
        self.unk_id = number(trainer, 40, 0)
        self.bos_id = number(trainer, 41, 1)
        self.eos_id = number(trainer, 42, 2)
        self.pad_id = number(trainer, 43, -1)
        self.unk_piece = text(trainer, 45, "<unk>")
        self.bos_piece = text(trainer, 46, "<s>")
        self.eos_piece = text(trainer, 47, "</s>")
        self.pad_piece = text(trainer, 48, "<pad>")
        self.precompiled_charsmap = normalizer[2][-1] if 2 in normalizer else b""
        self.add_dummy_prefix = bool(number(normalizer, 3, 1))
        self.remove_extra_whitespaces = bool(number(normalizer, 4, 1))
        if self.model_type not in (UNIGRAM_MODEL, BPE_MODEL):
            raise ValueError(f"{path}: only unigram and BPE sentencepiece models can be converted (model_type={self.model_type})")

    def vocab_dict(self):
        return {piece: index for index, (piece, _, _) in enumerate(self.pieces)}

    def bpe_merges(self):
        """The merge list of a BPE model. Sentencepiece stores no merges, only pieces ordered by
        merge priority, so each piece that splits into two vocabulary pieces yields a merge
        ranked by the piece's id (as HF does)."""
        vocab = self.vocab_dict()
        merges = []
        for piece, rank in vocab.items():
            local = [(piece[:i], piece[i:]) for i in range(1, len(piece)) if piece[:i] in vocab and piece[i:] in vocab]
            local.sort(key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
            merges.extend((rank, left, right) for left, right in local)
        merges.sort(key=lambda merge: (merge[0], len(merge[1]), len(merge[2])))
        return [(left, right) for _, left, right in merges]

    def added_tokens(self):
        """Control pieces (special) and user-defined pieces (not special) are never split."""
        return [AddedToken(piece, normalized=False, special=kind == CONTROL)
                for piece, _, kind in self.pieces if kind in (CONTROL, USER_DEFINED)]

    def special_tokens(self):
        """The unk/bos/eos/pad pieces the trainer spec declares, as tokenizer arguments."""
        tokens = {}
        for name, index, piece in (("unk_token", self.unk_id, self.unk_piece), ("bos_token", self.bos_id, self.bos_piece),
                                   ("eos_token", self.eos_id, self.eos_piece), ("pad_token", self.pad_id, self.pad_piece)):
            if 0 <= index < len(self.pieces):
                tokens[name] = self.pieces[index][0] or piece
        return tokens


def merges_by_score(pieces):
    """The BPE merges a vocabulary of (piece, score) pairs in id order implies where its order is
    not the merge order (HF's generate_merges with scores): every piece that splits into two
    vocabulary pieces gives a merge per split, the splits ordered by their halves' ids; the
    merges go by their piece's score, highest first, then by the longer left and right halves,
    a stable sort keeping vocabulary order among ties."""
    vocab = {piece: index for index, (piece, _) in enumerate(pieces)}
    merges = []
    for piece, score in dict(pieces).items():
        local = [(piece[:i], piece[i:]) for i in range(1, len(piece)) if piece[:i] in vocab and piece[i:] in vocab]
        local.sort(key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
        merges.extend((score, left, right) for left, right in local)
    merges.sort(key=lambda merge: (merge[0], len(merge[1]), len(merge[2])), reverse=True)
    return [(left, right) for _, left, right in merges]


def _spm_model(spm, *, unk_token=None):
    if spm.model_type == UNIGRAM_MODEL:
        return Unigram([(piece, score) for piece, score, _ in spm.pieces], unk_id=spm.unk_id,
                       byte_fallback=spm.byte_fallback)
    unk = unk_token if unk_token is not None else spm.unk_piece
    return BPE(vocab=spm.vocab_dict(), merges=spm.bpe_merges(), unk_token=unk if unk in spm.vocab_dict() else None,
               fuse_unk=True, byte_fallback=spm.byte_fallback, dropout=None)


def _byte_fallback_decoder(strip_leading_space):
    steps = [decoders.Replace(SPIECE_UNDERLINE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if strip_leading_space:
        steps.append(decoders.Strip(content=" ", left=1))
    return decoders.Sequence(steps)


def sentencepiece_tokenizer(spm):
    """Sentencepiece's own behaviour: its normalisation (precompiled charsmap, collapsed and
    stripped whitespace), spaces written as "▁" with a "▁" prepended to the text
    (add_dummy_prefix), then the unigram or BPE model."""
    if isinstance(spm, str):
        spm = SentencePieceModel(spm)
    tokenizer = Tokenizer(_spm_model(spm))
    steps = []
    if spm.precompiled_charsmap:
        steps.append(normalizers.Precompiled(spm.precompiled_charsmap))
    if spm.remove_extra_whitespaces:
        steps += [normalizers.Strip(left=True, right=True), normalizers.Replace(Regex(" {2,}"), " ")]
    if steps:
        tokenizer.normalizer = normalizers.Sequence(steps)
    scheme = "always" if spm.add_dummy_prefix else "never"
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPIECE_UNDERLINE, prepend_scheme=scheme)
    if spm.byte_fallback:
        tokenizer.decoder = _byte_fallback_decoder(spm.add_dummy_prefix)
    else:
        tokenizer.decoder = decoders.Metaspace(replacement=SPIECE_UNDERLINE, prepend_scheme=scheme)
    tokenizer.add_tokens(spm.added_tokens())
    return tokenizer


def llama_sentencepiece_tokenizer(spm, *, add_prefix_space=True, legacy=False, unk_token="<unk>"):
    """Llama's pipeline over a BPE sentencepiece model: no normaliser, "▁" for spaces with one
    prepended to the text (only at the very start, unless `legacy`), byte fallback, and a decoder
    that removes the prepended space."""
    if isinstance(spm, str):
        spm = SentencePieceModel(spm)
    tokenizer = Tokenizer(_spm_model(spm, unk_token=str(unk_token)))
    scheme = ("always" if legacy else "first") if add_prefix_space else "never"
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPIECE_UNDERLINE, prepend_scheme=scheme, split=False)
    tokenizer.decoder = _byte_fallback_decoder(add_prefix_space)
    tokenizer.add_tokens(spm.added_tokens())
    return tokenizer


def gemma_sentencepiece_tokenizer(spm, *, unk_token="<unk>"):
    """Gemma's pipeline over a BPE sentencepiece model: spaces become "▁" with nothing prepended,
    words split after each space, byte fallback."""
    if isinstance(spm, str):
        spm = SentencePieceModel(spm)
    tokenizer = Tokenizer(_spm_model(spm, unk_token=str(unk_token)))
    tokenizer.normalizer = normalizers.Replace(" ", SPIECE_UNDERLINE)
    tokenizer.pre_tokenizer = pre_tokenizers.Split(pattern=" ", behavior="merged_with_previous", invert=False)
    tokenizer.decoder = _byte_fallback_decoder(False)
    tokenizer.add_tokens(spm.added_tokens())
    return tokenizer


def marian_tokenizer(spm, vocab, *, eos_token="</s>", unk_token="<unk>"):
    """Marian's pipeline: sentencepiece splits the text into pieces, and the ids are the pieces'
    entries in the model's own vocab.json (not their sentencepiece ids).

    Built as one unigram model over vocab.json's entries in id order, each scored as
    sentencepiece scores it, so segmentation is sentencepiece's. Entries sentencepiece does
    not know (the other side's pieces in a joint vocabulary, `<pad>`) score far below every
    real piece: they are picked only for text the source model cannot cover, which is when
    Marian's lookup of the raw piece finds them too. Language codes (`>>fr<<`) are never split;
    each sequence ends with `</s>`.
    """
    if isinstance(spm, str):
        spm = SentencePieceModel(spm)
    scores = {piece: score for piece, score, kind in spm.pieces if kind in (NORMAL, USER_DEFINED)}
    floor = min(scores.values(), default=0.0) - 1000.0
    pieces = [(token, scores.get(token, floor)) for token, _ in sorted(vocab.items(), key=lambda item: item[1])]
    if [index for _, index in sorted(vocab.items(), key=lambda item: item[1])] != list(range(len(vocab))):
        raise ValueError("a Marian vocab.json must number its tokens 0, 1, 2, ... without gaps")
    if unk_token not in vocab:
        raise KeyError("<unk> token must be in the vocab")
    tokenizer = Tokenizer(Unigram(pieces, unk_id=vocab[unk_token]))
    base = sentencepiece_tokenizer(spm)
    tokenizer.normalizer = base.normalizer
    tokenizer.pre_tokenizer = base.pre_tokenizer
    tokenizer.decoder = base.decoder
    codes = [token for token in vocab if token.startswith(">>") and token.endswith("<<")]
    tokenizer.add_tokens([AddedToken(code, normalized=False, special=False) for code in codes])
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"$A:0 {eos_token}:0", pair=f"$A:0 $B:1 {eos_token}:1", special_tokens=[(eos_token, vocab[eos_token])])
    return tokenizer


def fairseq_unigram_tokenizer(spm, language_codes, *, bos_token="<s>", pad_token="<pad>", eos_token="</s>",
                              unk_token="<unk>", mask_token="<mask>"):
    """The vocabulary fairseq's multilingual models (mBART, mBART-50) number their pieces by:
    `<s> <pad> </s> <unk>`, the sentencepiece pieces after its own three specials, the language
    codes, `<mask>`; scored as sentencepiece scores them, in a unigram model (as HF builds it,
    for BPE-trained files too). The caller sets the normaliser and pre-tokeniser."""
    if isinstance(spm, str):
        spm = SentencePieceModel(spm)
    pieces = [(str(token), 0.0) for token in (bos_token, pad_token, eos_token, unk_token)]
    pieces += [(piece, score) for piece, score, _ in spm.pieces[3:]]
    pieces += [(code, 0.0) for code in language_codes]
    pieces.append((str(mask_token), 0.0))
    return Tokenizer(Unigram(pieces, unk_id=3, byte_fallback=False))


def deberta_v2_tokenizer(pieces, *, unk_id, cls_token="[CLS]", sep_token="[SEP]", do_lower_case=False,
                         split_by_punct=False, add_prefix_space=True):
    """DeBERTa-v2's pipeline over unigram `pieces` ((piece, score), in id order; the pieces of its
    spm.model): optional lower-casing, runs of whitespace and any tab or newline made one space,
    NFC, trailing spaces stripped; optionally punctuation split off; "▁" for spaces (prepended
    to every word, or to the first only without `add_prefix_space`), and
    `[CLS] A [SEP] (B [SEP])` with type ids 0/1."""
    tokenizer = Tokenizer(Unigram(list(pieces), unk_id=unk_id, byte_fallback=False))
    steps = [normalizers.Lowercase()] if do_lower_case else []
    steps += [normalizers.Replace(Regex(r"\s{2,}|[\n\r\t]"), " "), normalizers.NFC(),
              normalizers.Strip(left=False, right=True)]
    tokenizer.normalizer = normalizers.Sequence(steps)
    scheme = "always" if add_prefix_space else "first"
    splitters = [pre_tokenizers.Punctuation(behavior="isolated")] if split_by_punct else []
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        splitters + [pre_tokenizers.Metaspace(replacement=SPIECE_UNDERLINE, prepend_scheme=scheme)])
    tokenizer.decoder = decoders.Metaspace(replacement=SPIECE_UNDERLINE, prepend_scheme=scheme)
    ids = {piece: index for index, (piece, _) in enumerate(pieces)}
    for token in (cls_token, sep_token):
        if str(token) not in ids:
            raise ValueError(f"the DeBERTa-v2 vocabulary has no {str(token)!r} token")
    tokenizer.post_processor = bert_post_processor(str(cls_token), ids[str(cls_token)], str(sep_token),
                                                   ids[str(sep_token)])
    return tokenizer
