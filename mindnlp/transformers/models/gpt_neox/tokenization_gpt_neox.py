# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""GPT-NeoX's tokenizer (Pythia, GPT-NeoX-20B): GPT-2's byte-level BPE after NFC normalisation,
with `<|padding|>` to pad and no special tokens added around sequences."""
from tokenizers import normalizers

from ...convert_slow_tokenizer import byte_level_bpe_tokenizer
from ..gpt2.tokenization_gpt2 import GPT2TokenizerFast


class GPTNeoXTokenizerFast(GPT2TokenizerFast):
    """Loads tokenizer.json, or builds GPT-NeoX's pipeline from vocab.json + merges.txt."""

    def __init__(self, vocab_file=None, merges_file=None, tokenizer_file=None, unk_token="<|endoftext|>",
                 bos_token="<|endoftext|>", eos_token="<|endoftext|>", pad_token="<|padding|>", add_prefix_space=None,
                 **kwargs):
        super().__init__(vocab_file, merges_file, tokenizer_file, unk_token=unk_token, bos_token=bos_token,
                         eos_token=eos_token, pad_token=pad_token, add_prefix_space=add_prefix_space, **kwargs)

    @staticmethod
    def build_backend(vocab_file, merges_file, add_prefix_space, unk_token):
        tokenizer = byte_level_bpe_tokenizer(vocab_file, merges_file, add_prefix_space=add_prefix_space)
        tokenizer.normalizer = normalizers.NFC()
        return tokenizer


GPTNeoXTokenizer = GPTNeoXTokenizerFast
