# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""text-generation: continue a prompt, or a chat, with the model's `generate()`.

`pipe("Once upon a time", max_new_tokens=20)` → `[{"generated_text": "Once upon a time..."}]`
(one record per returned sequence). A chat, a list of {"role", "content"} messages, is rendered
through the tokenizer's chat template with the generation prompt, and its answer is the
messages with the assistant's reply appended. Keywords other than the pipeline's own go to
`generate()`; as in HF, parameters neither the call nor the model's generation config set get
the pipeline's defaults (256 new tokens, sampling at temperature 0.7).
"""
import enum
from typing import ClassVar

from .base import Pipeline

_SAMPLING_PARAMS = frozenset({"temperature", "top_k", "top_p", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff"})


class ReturnType(enum.Enum):
    TENSORS = 0
    NEW_TEXT = 1
    FULL_TEXT = 2


def _is_message(value):
    return isinstance(value, dict) and "role" in value and "content" in value


class Chat:
    """A conversation, kept apart from lists of prompts (which are batches)."""

    def __init__(self, messages):
        for message in messages:
            if not _is_message(message):
                raise ValueError("When passing chat dicts as input, each dict must have a 'role' and 'content' key.")
        self.messages = list(messages)


def _as_chats(inputs):
    """A list of messages → one Chat; a list of such lists → a list of Chats; anything else as is."""
    if isinstance(inputs, (list, tuple)) and inputs:
        if _is_message(inputs[0]):
            return Chat(inputs)
        if isinstance(inputs[0], (list, tuple)) and all(chat and _is_message(chat[0]) for chat in inputs):
            return [Chat(chat) for chat in inputs]
    return inputs


class TextGenerationPipeline(Pipeline):
    """Prompts are left-padded when batched (decoder-only models continue from the right)."""

    default_generation_settings: ClassVar[dict] = {"max_new_tokens": 256, "do_sample": True, "temperature": 0.7}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.model.can_generate():
            raise ValueError(f"The model {self.model.__class__.__name__} cannot generate text: text-generation needs "
                             "a model with a language-modelling head (AutoModelForCausalLM)")
        if self.tokenizer is not None and self.tokenizer.padding_side == "right":
            self.tokenizer.padding_side = "left"

    def __call__(self, text_inputs, **kwargs):
        """Complete a prompt (str), a chat (list of messages), or a list of either.

        Keywords: `return_full_text` (default True: prompt + continuation; for chats, the
        messages plus the reply), `return_tensors` (token ids instead of text),
        `clean_up_tokenization_spaces`, `skip_special_tokens`, `continue_final_message`,
        `stop_sequence`, `max_length` (truncates the prompt and bounds generation),
        `add_special_tokens`, and any `generate()` argument (`max_new_tokens`, `do_sample`,
        `num_return_sequences`, ...).
        """
        return super().__call__(_as_chats(text_inputs), **kwargs)

    def _sanitize_parameters(self, return_full_text=None, return_tensors=None, return_text=None, return_type=None,
                             clean_up_tokenization_spaces=None, stop_sequence=None, truncation=None, max_length=None,
                             continue_final_message=None, skip_special_tokens=None, tokenizer_encode_kwargs=None,
                             add_special_tokens=None, **generate_kwargs):
        preprocess_params = {}
        if add_special_tokens is not None:
            preprocess_params["add_special_tokens"] = add_special_tokens
        if truncation is not None:
            preprocess_params["truncation"] = truncation
        if max_length is not None:
            preprocess_params["max_length"] = max_length
            generate_kwargs["max_length"] = max_length
        if continue_final_message is not None:
            preprocess_params["continue_final_message"] = continue_final_message
        if tokenizer_encode_kwargs is not None:
            preprocess_params["tokenizer_encode_kwargs"] = tokenizer_encode_kwargs
        if stop_sequence is not None:
            generate_kwargs["stop_strings"] = [stop_sequence] if isinstance(stop_sequence, str) else stop_sequence
            generate_kwargs["tokenizer"] = self.tokenizer

        postprocess_params = {}
        if return_full_text is not None and return_type is None:
            if return_text is not None:
                raise ValueError("`return_text` is mutually exclusive with `return_full_text`")
            if return_tensors is not None:
                raise ValueError("`return_full_text` is mutually exclusive with `return_tensors`")
            return_type = ReturnType.FULL_TEXT if return_full_text else ReturnType.NEW_TEXT
        if return_tensors is not None and return_type is None:
            if return_text is not None:
                raise ValueError("`return_text` is mutually exclusive with `return_tensors`")
            return_type = ReturnType.TENSORS
        if return_type is not None:
            postprocess_params["return_type"] = return_type
        if clean_up_tokenization_spaces is not None:
            postprocess_params["clean_up_tokenization_spaces"] = clean_up_tokenization_spaces
        if continue_final_message is not None:
            postprocess_params["continue_final_message"] = continue_final_message
        if skip_special_tokens is not None:
            postprocess_params["skip_special_tokens"] = skip_special_tokens
        return preprocess_params, generate_kwargs, postprocess_params

    def preprocess(self, prompt_text, add_special_tokens=None, truncation=None, max_length=None,
                   continue_final_message=None, tokenizer_encode_kwargs=None):
        tokenizer_kwargs = {"add_special_tokens": add_special_tokens, "truncation": truncation,
                            "max_length": max_length}
        tokenizer_kwargs = {k: v for k, v in tokenizer_kwargs.items() if v is not None}
        tokenizer_kwargs.update(tokenizer_encode_kwargs or {})
        if isinstance(prompt_text, Chat):
            tokenizer_kwargs.pop("add_special_tokens", None)  # the template writes the special tokens
            if continue_final_message is None:
                continue_final_message = prompt_text.messages[-1]["role"] == "assistant"
            inputs = self.tokenizer.apply_chat_template(
                prompt_text.messages, add_generation_prompt=not continue_final_message,
                continue_final_message=continue_final_message, return_dict=True, return_tensors="pt",
                **tokenizer_kwargs)
            inputs = dict(inputs)
        elif isinstance(prompt_text, str):
            inputs = dict(self.tokenizer(prompt_text, return_tensors="pt", **tokenizer_kwargs))
        else:
            raise TypeError(f"text-generation takes a string, a chat (a list of {{'role', 'content'}} dicts) or a "
                             f"list of those, got {type(prompt_text).__name__}")
        inputs["prompt_text"] = prompt_text
        return inputs

    def _generate_kwargs(self, generate_kwargs):
        """The call's generate() arguments plus the pipeline's defaults for what neither they nor
        the model's generation config set (the sampling ones only when sampling), and the
        tokenizer's pad token."""
        model_settings = self.model.generation_config.to_diff_dict() if self.model.generation_config else {}
        already_set = {**model_settings, **generate_kwargs}
        added = {k: v for k, v in self.default_generation_settings.items()
                 if k not in already_set and not (k == "max_new_tokens" and "max_length" in already_set)}
        if not {**already_set, **added}.get("do_sample"):
            added = {k: v for k, v in added.items() if k not in _SAMPLING_PARAMS}
        if self.tokenizer is not None and self.tokenizer.pad_token_id is not None and "pad_token_id" not in already_set:
            added["pad_token_id"] = self.tokenizer.pad_token_id
        return {**generate_kwargs, **added}

    def _forward(self, model_inputs, **generate_kwargs):
        input_ids = model_inputs["input_ids"]
        attention_mask = model_inputs.get("attention_mask")
        prompt_text = model_inputs.pop("prompt_text")
        if input_ids.shape[1] == 0:
            input_ids = attention_mask = None
            in_batch = 1
        else:
            in_batch = input_ids.shape[0]
        output = self.model.generate(input_ids=input_ids, attention_mask=attention_mask,
                                     **self._generate_kwargs(dict(generate_kwargs)))
        sequences = output.sequences if hasattr(output, "sequences") else output
        out_batch = sequences.shape[0]
        sequences = sequences.reshape(in_batch, out_batch // in_batch, sequences.shape[-1])
        return {"generated_sequence": sequences, "input_ids": input_ids, "prompt_text": prompt_text}

    def postprocess(self, model_outputs, return_type=ReturnType.FULL_TEXT, clean_up_tokenization_spaces=None,
                    continue_final_message=None, skip_special_tokens=None):
        """The new text is the decoded whole sequence minus the decoded prompt (HF's rule), not
        the new tokens decoded alone: how a token decodes can depend on the one before it (a
        WordPiece "##" piece joins the previous word, a sentencepiece "▁word" keeps its space
        only after other text), so only decoding in context gives the text the model wrote."""
        sequences = model_outputs["generated_sequence"][0].tolist()
        input_ids = model_outputs["input_ids"]
        prompt_text = model_outputs["prompt_text"]
        skip_special_tokens = True if skip_special_tokens is None else skip_special_tokens
        decode_options = {"skip_special_tokens": skip_special_tokens,
                          "clean_up_tokenization_spaces": clean_up_tokenization_spaces}
        prompt_chars = 0 if input_ids is None else len(self.tokenizer.decode(input_ids[0].tolist(), **decode_options))
        records = []
        for sequence in sequences:
            if return_type == ReturnType.TENSORS:
                records.append({"generated_token_ids": sequence})
                continue
            text = self.tokenizer.decode(sequence, **decode_options)[prompt_chars:]
            if return_type == ReturnType.FULL_TEXT:
                text = self._full_text(prompt_text, text, continue_final_message)
            records.append({"generated_text": text})
        return records

    @staticmethod
    def _full_text(prompt_text, new_text, continue_final_message):
        """The prompt followed by the continuation: for a chat, the messages with the reply
        appended as an assistant message (or added to the final message it continues)."""
        if isinstance(prompt_text, str):
            return prompt_text + new_text
        messages = list(prompt_text.messages)
        if continue_final_message is None:
            continue_final_message = messages[-1]["role"] == "assistant"
        if continue_final_message:
            last = messages[-1]
            return messages[:-1] + [{"role": last["role"], "content": last["content"] + new_text}]
        return messages + [{"role": "assistant", "content": new_text}]
