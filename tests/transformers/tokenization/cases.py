"""The tokenizer calls whose outputs are compared with HF transformers.

Shared by tests/fixtures/make_tokenizer_fixtures.py, which runs them on HF's tokenizers and
stores the outputs, and by the tests, which run them on mindnlp's. Outputs are reduced to plain
JSON (lists, ints, strings) so both sides compare exactly.
"""
TEXT = "Hello world! This is a test of the tokenizer."
PAIR = "The quick brown fox jumps over the lazy dog."
BATCH = ["Hello world!", "Padding makes every row of a batch the same length.", "Café naïve 12345"]
UNICODE = "Café, naïve — 日本語 🤗 résumé"

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if tools %}<|system|>\nTools: {{ tools | tojson }}{{ eos_token }}\n{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('Unknown role: ' + message['role']) }}{% endif %}"
    "{{ '<|' + message['role'] + '|>\n' }}"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] + eos_token }}{% endgeneration %}"
    "{% else %}{{ message['content'] + eos_token }}{% endif %}{{ '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
    "{% if note is defined %}{{ note }}{% endif %}"
)

MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Hello there!"},
    {"role": "assistant", "content": "Hi. How can I help?"},
    {"role": "user", "content": "Tell me a joke."},
]
TOOLS = [{"type": "function", "function": {"name": "get_time", "description": "Current time <UTC>",
                                           "parameters": {"type": "object", "properties": {}}}}]


def encode_cases(has_pad_token):
    """(name, keyword arguments of the tokenizer call); padding cases only when there is a pad token."""
    cases = [
        ("single", {"text": TEXT}),
        ("pair", {"text": TEXT, "text_pair": PAIR}),
        ("batch", {"text": BATCH}),
        ("unicode_offsets", {"text": UNICODE, "return_offsets_mapping": True}),
        ("no_special_tokens", {"text": TEXT, "add_special_tokens": False}),
        ("all_returns", {"text": BATCH, "return_special_tokens_mask": True, "return_length": True,
                         "return_offsets_mapping": True, "return_token_type_ids": True, "return_attention_mask": True}),
        ("no_mask_no_types", {"text": TEXT, "return_attention_mask": False, "return_token_type_ids": False}),
        ("truncation", {"text": TEXT, "truncation": True, "max_length": 6}),
        ("max_length_alone_truncates", {"text": TEXT, "max_length": 5}),
        ("truncation_left", {"text": TEXT, "truncation": True, "max_length": 6, "truncation_side": "left"}),
        ("pair_only_first", {"text": TEXT, "text_pair": "short", "truncation": "only_first", "max_length": 8}),
        ("pair_only_second", {"text": "short", "text_pair": PAIR, "truncation": "only_second", "max_length": 8}),
        ("pair_longest_first", {"text": TEXT, "text_pair": PAIR, "truncation": "longest_first", "max_length": 10}),
        ("overflow_stride", {"text": TEXT, "truncation": True, "max_length": 6, "stride": 2,
                             "return_overflowing_tokens": True}),
        ("pair_overflow_only_second", {"text": "short", "text_pair": PAIR, "truncation": "only_second",
                                       "max_length": 12, "stride": 1, "return_overflowing_tokens": True}),
        ("split_into_words", {"text": ["Hello", "world", "again"], "is_split_into_words": True,
                              "return_offsets_mapping": True}),
        ("split_into_words_batch", {"text": [["Hello", "world"], ["The", "lazy", "dog"]], "is_split_into_words": True}),
        ("single_np", {"text": TEXT, "return_tensors": "np"}),
        ("targets", {"text": "short", "text_target": PAIR}),
    ]
    if has_pad_token:
        cases += [
            ("pad_longest", {"text": BATCH, "padding": True}),
            ("pad_max_length_left", {"text": BATCH, "padding": "max_length", "max_length": 20, "truncation": True,
                                     "padding_side": "left"}),
            ("pad_right_special_mask", {"text": BATCH, "padding": "max_length", "max_length": 24,
                                        "padding_side": "right", "return_special_tokens_mask": True}),
            ("pad_multiple_of", {"text": BATCH, "padding": "longest", "pad_to_multiple_of": 8}),
            ("pad_np", {"text": BATCH, "padding": True, "return_tensors": "np"}),
            ("pad_pairs", {"text": ["a b", "Hello world"], "text_pair": ["c", "The lazy dog sleeps"],
                           "padding": True, "truncation": "longest_first", "max_length": 12}),
            ("overflow_batch_padded", {"text": BATCH, "truncation": True, "max_length": 5, "stride": 1,
                                       "return_overflowing_tokens": True, "padding": True}),
        ]
    return [{"name": name, "kwargs": kwargs} for name, kwargs in cases]


def to_json(value):
    """numpy arrays, tuples and dict-likes to plain JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "items"):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value


def run_encode_case(tokenizer, case):
    """Call the tokenizer; the fields, plus each row's tokens and word ids."""
    kwargs = dict(case["kwargs"])
    truncation_side = kwargs.pop("truncation_side", None)
    saved_side = tokenizer.truncation_side
    if truncation_side is not None:
        tokenizer.truncation_side = truncation_side
    try:
        out = tokenizer(**kwargs)
    except Exception as err:  # the error is part of the recorded behaviour
        return {"error": type(err).__name__}
    finally:
        tokenizer.truncation_side = saved_side
    result = {"fields": to_json(dict(out)), "tensor_type": type(out["input_ids"]).__name__}
    if out.encodings is not None:
        result["tokens"] = [encoding.tokens for encoding in out.encodings]
        result["word_ids"] = [encoding.word_ids for encoding in out.encodings]
    return result


def decode_ids(tokenizer):
    """tokenize/encode/decode round trips on fixed texts."""
    ids = tokenizer.encode(TEXT)
    unicode_ids = tokenizer.encode(UNICODE)
    batch_ids = [tokenizer.encode(text) for text in BATCH]
    return {
        "tokenize": tokenizer.tokenize(TEXT),
        "tokenize_pair": tokenizer.tokenize(TEXT, pair=PAIR, add_special_tokens=True),
        "encode": ids,
        "encode_pair": tokenizer.encode(TEXT, PAIR),
        "convert_ids_to_tokens": tokenizer.convert_ids_to_tokens(ids),
        "convert_ids_to_tokens_skip": tokenizer.convert_ids_to_tokens(ids, skip_special_tokens=True),
        "convert_tokens_to_ids": tokenizer.convert_tokens_to_ids(tokenizer.tokenize(TEXT) + ["notatoken###"]),
        "decode": tokenizer.decode(ids),
        "decode_skip": tokenizer.decode(ids, skip_special_tokens=True),
        "decode_cleanup": tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=True),
        "decode_unicode": tokenizer.decode(unicode_ids, skip_special_tokens=True),
        "batch_decode": tokenizer.batch_decode(batch_ids, skip_special_tokens=True),
        "decode_batch": tokenizer.decode(batch_ids),
        "decode_single_id": tokenizer.decode(ids[1]),
    }


def chat_cases():
    continued = MESSAGES[:3] + [{"role": "assistant", "content": "Why did the"}]
    cases = [
        ("render", {"conversation": MESSAGES, "tokenize": False}),
        ("render_generation_prompt", {"conversation": MESSAGES, "tokenize": False, "add_generation_prompt": True}),
        ("ids", {"conversation": MESSAGES, "return_dict": False, "add_generation_prompt": True}),
        ("dict", {"conversation": MESSAGES}),
        ("batch_padded", {"conversation": [MESSAGES[:2], MESSAGES], "padding": True}),
        ("batch_np", {"conversation": [MESSAGES[:2], MESSAGES], "padding": True, "return_tensors": "np"}),
        ("truncated", {"conversation": MESSAGES, "truncation": True, "max_length": 10}),
        ("assistant_mask", {"conversation": MESSAGES[:3], "return_assistant_tokens_mask": True}),
        ("continue_final_message", {"conversation": continued, "tokenize": False, "continue_final_message": True}),
        ("tools", {"conversation": MESSAGES[:2], "tools": TOOLS, "tokenize": False}),
        ("template_kwarg", {"conversation": MESSAGES[:2], "tokenize": False, "note": "[note]"}),
        ("unknown_role", {"conversation": [{"role": "robot", "content": "beep"}], "tokenize": False}),
    ]
    return [{"name": name, "kwargs": kwargs} for name, kwargs in cases]


def run_chat_case(tokenizer, case):
    try:
        out = tokenizer.apply_chat_template(**case["kwargs"])
    except Exception as err:  # the error is part of the recorded behaviour
        return {"error": type(err).__name__, "message": str(err)}
    return {"output": to_json(dict(out)) if hasattr(out, "items") else to_json(out)}
