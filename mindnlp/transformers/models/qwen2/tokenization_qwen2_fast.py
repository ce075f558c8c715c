"""Qwen2's tokenizer: byte-level BPE after NFC and Qwen's split regex; `<|endoftext|>` pads and
ends, there is no bos token."""
from ...convert_slow_tokenizer import qwen2_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast


class Qwen2TokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json, or builds Qwen2's pipeline from vocab.json + merges.txt."""

    vocab_files_names = {"vocab_file": "vocab.json", "merges_file": "merges.txt"}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(
        self,
        vocab_file=None,
        merges_file=None,
        tokenizer_file=None,
        unk_token="<|endoftext|>",
        bos_token=None,
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        add_prefix_space=None,
        **kwargs,
    ):
        tokenizer_object = self.given_or_built_backend(
            kwargs, tokenizer_file,
            lambda: qwen2_tokenizer(vocab_file, merges_file, add_prefix_space=bool(add_prefix_space)),
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


Qwen2Tokenizer = Qwen2TokenizerFast
