# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""RoBERTa's tokenizer: GPT-2's byte-level BPE, sequences wrapped as `<s> A </s></s> B </s>`."""
from tokenizers import AddedToken

from ...convert_slow_tokenizer import byte_level_bpe_tokenizer, roberta_post_processor
from ..gpt2.tokenization_gpt2 import GPT2TokenizerFast


class RobertaTokenizerFast(GPT2TokenizerFast):
    """Loads tokenizer.json, or builds RoBERTa's pipeline from vocab.json + merges.txt.

    `<mask>` strips the space before it, so "a <mask>" predicts the word with its leading space.
    """

    def __init__(
        self,
        vocab_file=None,
        merges_file=None,
        tokenizer_file=None,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        add_prefix_space=None,
        trim_offsets=True,
        **kwargs,
    ):
        built = kwargs.get("tokenizer_object") is None and tokenizer_file is None
        if isinstance(mask_token, str):
            # A mask stands for a word, and RoBERTa's words carry the space before them ("Ġword"):
            # the mask takes that space, so "a <mask>" is "Ġa <mask>", not "Ġa Ġ <mask>" (HF's rule).
            mask_token = AddedToken(mask_token, lstrip=True, rstrip=False, normalized=False, special=True)
        super().__init__(vocab_file, merges_file, tokenizer_file, unk_token=unk_token, bos_token=bos_token,
                         eos_token=eos_token, pad_token=pad_token, add_prefix_space=add_prefix_space,
                         sep_token=sep_token, cls_token=cls_token, mask_token=mask_token, trim_offsets=trim_offsets,
                         **kwargs)
        if built:
            self._tokenizer.post_processor = roberta_post_processor(
                self.cls_token, self.cls_token_id, self.sep_token, self.sep_token_id,
                trim_offsets=trim_offsets, add_prefix_space=bool(add_prefix_space),
            )

    @staticmethod
    def build_backend(vocab_file, merges_file, add_prefix_space, unk_token):
        return byte_level_bpe_tokenizer(vocab_file, merges_file, add_prefix_space=add_prefix_space, unk_token=unk_token)


RobertaTokenizer = RobertaTokenizerFast
