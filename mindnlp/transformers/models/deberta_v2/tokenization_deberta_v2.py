# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DeBERTa-v2/v3's tokenizer: a sentencepiece Unigram model with DeBERTa's own normalisation
(not sentencepiece's), sequences laid out as BERT's `[CLS] A [SEP] B [SEP]`.

Loaded from tokenizer.json, or built from the checkpoint's spm.model (what the DeBERTa-v3
checkpoints ship) or from a `vocab` list of (piece, score), as HF v5 builds it.
"""
from ...convert_slow_tokenizer import SentencePieceModel, deberta_v2_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast


class DebertaV2TokenizerFast(PreTrainedTokenizerFast):
    vocab_files_names = {"vocab_file": "spm.model", "tokenizer_file": "tokenizer.json"}
    model_input_names = ["input_ids", "attention_mask", "token_type_ids"]

    def __init__(self, vocab_file=None, tokenizer_file=None, vocab=None, do_lower_case=False, split_by_punct=False,
                 bos_token="[CLS]", eos_token="[SEP]", unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                 cls_token="[CLS]", mask_token="[MASK]", add_prefix_space=True, unk_id=None, **kwargs):
        if kwargs.get("tokenizer_object") is None and tokenizer_file is None:
            if vocab is None and vocab_file is None:
                raise ValueError(f"{type(self).__name__} needs tokenizer_file= (tokenizer.json), vocab_file= "
                                 "(spm.model) or vocab= (a list of (piece, score))")
            if vocab is None:
                spm = SentencePieceModel(vocab_file)
                vocab = [(piece, score) for piece, score, _ in spm.pieces]
                unk_id = spm.unk_id if unk_id is None else unk_id
            vocab = [tuple(entry) for entry in vocab]
            if unk_id is None:
                pieces = [piece for piece, _ in vocab]
                unk_id = pieces.index(str(unk_token)) if str(unk_token) in pieces else 1
            kwargs["tokenizer_object"] = deberta_v2_tokenizer(
                vocab, unk_id=unk_id, cls_token=cls_token, sep_token=sep_token, do_lower_case=do_lower_case,
                split_by_punct=split_by_punct, add_prefix_space=add_prefix_space)
        self.do_lower_case = do_lower_case
        self.split_by_punct = split_by_punct
        self.add_prefix_space = add_prefix_space
        super().__init__(tokenizer_file=tokenizer_file, bos_token=bos_token, eos_token=eos_token, unk_token=unk_token,
                         sep_token=sep_token, pad_token=pad_token, cls_token=cls_token, mask_token=mask_token,
                         do_lower_case=do_lower_case, split_by_punct=split_by_punct,
                         add_prefix_space=add_prefix_space, **kwargs)


DebertaV2Tokenizer = DebertaV2TokenizerFast
