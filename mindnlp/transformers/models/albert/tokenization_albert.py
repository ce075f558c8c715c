# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ALBERT's tokenizer: a sentencepiece Unigram model (lower-cased, accents stripped) as the
checkpoint's tokenizer.json describes it, sequences laid out as `[CLS] A [SEP] B [SEP]`."""
from ...tokenization_utils_fast import PreTrainedTokenizerFast


class AlbertTokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json; converting a bare spiece.model is not supported."""

    vocab_files_names = {"vocab_file": "spiece.model", "tokenizer_file": "tokenizer.json"}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, vocab_file=None, tokenizer_file=None, bos_token="[CLS]", eos_token="[SEP]", unk_token="<unk>",
                 sep_token="[SEP]", pad_token="<pad>", cls_token="[CLS]", mask_token="[MASK]", **kwargs):
        if kwargs.get("tokenizer_object") is None and tokenizer_file is None:
            raise ValueError(f"{type(self).__name__} needs tokenizer_file= (tokenizer.json): building the Unigram "
                             "model from a sentencepiece spiece.model is not supported")
        super().__init__(tokenizer_file=tokenizer_file, bos_token=bos_token, eos_token=eos_token, unk_token=unk_token,
                         sep_token=sep_token, pad_token=pad_token, cls_token=cls_token, mask_token=mask_token,
                         **kwargs)


AlbertTokenizer = AlbertTokenizerFast
