# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen2's tokenizer: byte-level BPE after NFC and Qwen's split regex; `<|endoftext|>` pads and
ends, there is no bos token."""
from ...convert_slow_tokenizer import qwen2_tokenizer
from ..gpt2.tokenization_gpt2 import GPT2TokenizerFast


class Qwen2TokenizerFast(GPT2TokenizerFast):
    """Loads tokenizer.json, or builds Qwen2's pipeline from vocab.json + merges.txt."""

    def __init__(self, vocab_file=None, merges_file=None, tokenizer_file=None, unk_token="<|endoftext|>",
                 bos_token=None, eos_token="<|endoftext|>", pad_token="<|endoftext|>", add_prefix_space=None,
                 **kwargs):
        super().__init__(vocab_file, merges_file, tokenizer_file, unk_token=unk_token, bos_token=bos_token,
                         eos_token=eos_token, pad_token=pad_token, add_prefix_space=add_prefix_space, **kwargs)

    @staticmethod
    def build_backend(vocab_file, merges_file, add_prefix_space, unk_token):
        return qwen2_tokenizer(vocab_file, merges_file, add_prefix_space=add_prefix_space)


Qwen2Tokenizer = Qwen2TokenizerFast
