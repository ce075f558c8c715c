# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma's tokenizer: sentencepiece-style BPE with byte fallback where spaces become "▁" and
nothing is prepended to the text; left padding."""
from ...convert_slow_tokenizer import gemma_sentencepiece_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast


class GemmaTokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json, or converts a sentencepiece tokenizer.model."""

    vocab_files_names = {"vocab_file": "tokenizer.model"}
    model_input_names = ["input_ids", "attention_mask"]
    padding_side = "left"

    def __init__(self, vocab_file=None, tokenizer_file=None, unk_token="<unk>", bos_token="<bos>", eos_token="<eos>",
                 pad_token="<pad>", mask_token="<mask>", **kwargs):
        tokenizer_object = self.given_or_built_backend(
            kwargs, tokenizer_file, lambda: gemma_sentencepiece_tokenizer(vocab_file, unk_token=unk_token),
            vocab_file=vocab_file)
        super().__init__(tokenizer_object=tokenizer_object, tokenizer_file=tokenizer_file, unk_token=unk_token,
                         bos_token=bos_token, eos_token=eos_token, pad_token=pad_token, mask_token=mask_token,
                         **kwargs)


GemmaTokenizer = GemmaTokenizerFast
