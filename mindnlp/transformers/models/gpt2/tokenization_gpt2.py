# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""GPT-2's byte-level BPE tokenizer: every byte sequence is representable, no unknown tokens,
and no special tokens added around sequences."""
from tokenizers import pre_tokenizers

from ...convert_slow_tokenizer import byte_level_bpe_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast


def set_add_prefix_space(tokenizer, add_prefix_space):
    """Make a byte-level pre-tokeniser (alone, not in a sequence) prepend a space to the text or
    not. Pre-split words (`is_split_into_words=True`) need it to be encoded as mid-sentence words."""
    pre_tokenizer = tokenizer.pre_tokenizer
    if isinstance(pre_tokenizer, pre_tokenizers.ByteLevel) and pre_tokenizer.add_prefix_space != add_prefix_space:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
            add_prefix_space=add_prefix_space, trim_offsets=pre_tokenizer.trim_offsets, use_regex=pre_tokenizer.use_regex
        )


class GPT2TokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json, or builds GPT-2's pipeline from vocab.json + merges.txt.

    `add_prefix_space=True` encodes the first word like any other ("Hello" as " Hello");
    left unset, a tokenizer.json keeps its own setting. The other byte-level BPE tokenizers
    subclass this one with their own special tokens and `build_backend`.
    """

    vocab_files_names = {"vocab_file": "vocab.json", "merges_file": "merges.txt"}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(
        self,
        vocab_file=None,
        merges_file=None,
        tokenizer_file=None,
        unk_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        pad_token=None,
        add_prefix_space=None,
        **kwargs,
    ):
        tokenizer_object = self.given_or_built_backend(
            kwargs, tokenizer_file, lambda: self.build_backend(vocab_file, merges_file, bool(add_prefix_space), unk_token),
            vocab_file=vocab_file, merges_file=merges_file)
        if add_prefix_space is not None:
            kwargs["add_prefix_space"] = add_prefix_space
        super().__init__(
            tokenizer_object=tokenizer_object,
            tokenizer_file=tokenizer_file,
            unk_token=unk_token,
            bos_token=bos_token,
            eos_token=eos_token,
            pad_token=pad_token,
            **kwargs,
        )
        if add_prefix_space is not None:
            set_add_prefix_space(self._tokenizer, add_prefix_space)

    @staticmethod
    def build_backend(vocab_file, merges_file, add_prefix_space, unk_token):
        """The tokenizers pipeline built from vocab.json + merges.txt: the part of a byte-level BPE
        tokenizer (Qwen2's, RoBERTa's) that differs from GPT-2's."""
        return byte_level_bpe_tokenizer(vocab_file, merges_file, add_prefix_space=add_prefix_space)


GPT2Tokenizer = GPT2TokenizerFast
