# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""T5's tokenizer: the sentencepiece Unigram model as the checkpoint's tokenizer.json
describes it, with T5's special tokens (no BOS; `</s>` closes every sequence) and its
sentinels `<extra_id_0>` ... used as span masks in pre-training."""
import re

from ...tokenization_utils_fast import PreTrainedTokenizerFast


class T5TokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json; converting a bare spiece.model is not supported."""

    vocab_files_names = {"vocab_file": "spiece.model", "tokenizer_file": "tokenizer.json"}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, vocab_file=None, tokenizer_file=None, eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
                 extra_ids=100, additional_special_tokens=None, **kwargs):
        if kwargs.get("tokenizer_object") is None and tokenizer_file is None:
            raise ValueError(
                f"{type(self).__name__} needs tokenizer_file= (tokenizer.json): building T5's Unigram model from "
                "a sentencepiece spiece.model is not supported"
            )
        if additional_special_tokens is None and extra_ids > 0:
            additional_special_tokens = [f"<extra_id_{i}>" for i in range(extra_ids)]
        super().__init__(tokenizer_file=tokenizer_file, eos_token=eos_token, unk_token=unk_token,
                         pad_token=pad_token, additional_special_tokens=additional_special_tokens, **kwargs)

    def get_sentinel_tokens(self):
        """The `<extra_id_N>` tokens among the special tokens."""
        return [str(token) for token in self.extra_special_tokens if re.fullmatch(r"<extra_id_\d+>", str(token))]

    def get_sentinel_token_ids(self):
        return [self.convert_tokens_to_ids(token) for token in self.get_sentinel_tokens()]


T5Tokenizer = T5TokenizerFast
