# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""MPNet's tokenizer: BERT's WordPiece with RoBERTa's special tokens and layout, `<s> A </s></s> B </s>`."""
from tokenizers import AddedToken, processors

from ..bert.tokenization_bert import BertTokenizerFast


class MPNetTokenizerFast(BertTokenizerFast):
    """Loads tokenizer.json, or builds the pipeline from a WordPiece vocab.txt.

    `<mask>` takes the space before it, so "a <mask>" predicts a whole word (HF's rule).
    """

    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, vocab_file=None, tokenizer_file=None, do_lower_case=True, bos_token="<s>", eos_token="</s>",
                 sep_token="</s>", cls_token="<s>", unk_token="[UNK]", pad_token="<pad>", mask_token="<mask>",
                 **kwargs):
        built = kwargs.get("tokenizer_object") is None and tokenizer_file is None
        if isinstance(mask_token, str):
            mask_token = AddedToken(mask_token, lstrip=True, rstrip=False, normalized=False, special=True)
        super().__init__(vocab_file=vocab_file, tokenizer_file=tokenizer_file, do_lower_case=do_lower_case,
                         bos_token=bos_token, eos_token=eos_token, sep_token=sep_token, cls_token=cls_token,
                         unk_token=unk_token, pad_token=pad_token, mask_token=mask_token, **kwargs)
        if built:
            cls, sep = str(self.cls_token), str(self.sep_token)
            self._tokenizer.post_processor = processors.TemplateProcessing(
                single=f"{cls}:0 $A:0 {sep}:0", pair=f"{cls}:0 $A:0 {sep}:0 {sep}:0 $B:1 {sep}:1",
                special_tokens=[(cls, self.cls_token_id), (sep, self.sep_token_id)])


MPNetTokenizer = MPNetTokenizerFast
