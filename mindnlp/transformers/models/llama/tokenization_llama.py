# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Llama's tokenizer: sentencepiece-style BPE with byte fallback, "▁" for spaces, left padding,
and bos/eos added according to `add_bos_token`/`add_eos_token`."""
from ...convert_slow_tokenizer import llama_sentencepiece_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast


class LlamaTokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json, or converts a sentencepiece tokenizer.model.

    `legacy=False` (the default) prepends "▁" only at the start of the text, not after each
    special token; `add_prefix_space=False` prepends none.
    """

    vocab_files_names = {"vocab_file": "tokenizer.model"}
    model_input_names = ["input_ids", "attention_mask"]
    padding_side = "left"

    def __init__(
        self,
        vocab_file=None,
        tokenizer_file=None,
        clean_up_tokenization_spaces=False,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        use_default_system_prompt=False,
        legacy=False,
        add_prefix_space=None,
        **kwargs,
    ):
        tokenizer_object = self.given_or_built_backend(
            kwargs, tokenizer_file,
            lambda: llama_sentencepiece_tokenizer(vocab_file, add_prefix_space=add_prefix_space is not False,
                                                  legacy=legacy, unk_token=unk_token),
            vocab_file=vocab_file)
        if add_prefix_space is not None:
            kwargs["add_prefix_space"] = add_prefix_space
        self.legacy = legacy
        self.use_default_system_prompt = use_default_system_prompt
        super().__init__(
            tokenizer_object=tokenizer_object,
            tokenizer_file=tokenizer_file,
            clean_up_tokenization_spaces=clean_up_tokenization_spaces,
            unk_token=unk_token,
            bos_token=bos_token,
            eos_token=eos_token,
            use_default_system_prompt=use_default_system_prompt,
            legacy=legacy,
            **kwargs,
        )


LlamaTokenizer = LlamaTokenizerFast
