# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""CamemBERT's tokenizer: a sentencepiece Unigram model as the checkpoint's tokenizer.json describes
it, with RoBERTa's special tokens and layout (`<s> A </s></s> B </s>`) and the three
`...NOTUSED` tokens fairseq reserved."""
from tokenizers import AddedToken

from ...tokenization_utils_fast import PreTrainedTokenizerFast


class CamembertTokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json; `<mask>` takes the space before it, as in HF."""

    vocab_files_names = {"tokenizer_file": "tokenizer.json"}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, tokenizer_file=None, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
                 unk_token="<unk>", pad_token="<pad>", mask_token="<mask>", additional_special_tokens=None, **kwargs):
        if isinstance(mask_token, str):
            mask_token = AddedToken(mask_token, lstrip=True, special=True)
        if additional_special_tokens is None:
            additional_special_tokens = ["<s>NOTUSED", "</s>NOTUSED", "<unk>NOTUSED"]
        super().__init__(tokenizer_file=tokenizer_file, bos_token=bos_token, eos_token=eos_token, sep_token=sep_token,
                         cls_token=cls_token, unk_token=unk_token, pad_token=pad_token, mask_token=mask_token,
                         additional_special_tokens=additional_special_tokens, **kwargs)


CamembertTokenizer = CamembertTokenizerFast
