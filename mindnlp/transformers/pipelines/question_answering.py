# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""question-answering: the span of a context that answers a question (extractive QA).

Hugging Face transformers dropped this pipeline in 5.0; it follows the last release that had
it (4.57): same arguments, windows over long contexts, and outputs.
"""
from collections.abc import Iterable

import numpy as np

from ... import core
from .base import ChunkPipeline


class SquadExample:
    """A question and the context to answer it from (HF's container, reduced to what fast tokenizers need)."""

    def __init__(self, qas_id, question_text, context_text, answer_text=None, start_position_character=None,
                 title=None, answers=None, is_impossible=False):
        self.qas_id = qas_id
        self.question_text = question_text
        self.context_text = context_text
        self.answer_text = answer_text
        self.title = title
        self.is_impossible = is_impossible
        self.answers = answers or []


def decode_spans(start, end, topk, max_answer_len, undesired_tokens):
    """The topk spans by P(start) * P(end), with start <= end < start + max_answer_len and both
    ends on allowed tokens. Returns (starts, ends, scores)."""
    if start.ndim == 1:
        start = start[None]
    if end.ndim == 1:
        end = end[None]
    outer = np.matmul(np.expand_dims(start, -1), np.expand_dims(end, 1))
    candidates = np.tril(np.triu(outer), max_answer_len - 1)
    scores_flat = candidates.flatten()
    if topk == 1:
        idx_sort = [np.argmax(scores_flat)]
    elif len(scores_flat) < topk:
        idx_sort = np.argsort(-scores_flat)
    else:
        idx = np.argpartition(-scores_flat, topk)[0:topk]
        idx_sort = idx[np.argsort(-scores_flat[idx])]
    starts, ends = np.unravel_index(idx_sort, candidates.shape)[1:]
    allowed = undesired_tokens.nonzero()
    desired = np.isin(starts, allowed) & np.isin(ends, allowed)
    starts, ends = starts[desired], ends[desired]
    return starts, ends, candidates[0, starts, ends]


def select_starts_ends(start, end, p_mask, attention_mask, min_null_score=1000000, top_k=1,
                       handle_impossible_answer=False, max_answer_len=15):
    """Softmax the start/end logits over the allowed tokens (context, not padding) and decode
    spans; also track the best "no answer" score (both ends on the first token)."""
    undesired_tokens = np.abs(np.array(p_mask) - 1)
    if attention_mask is not None:
        undesired_tokens = undesired_tokens & attention_mask
    undesired_tokens_mask = undesired_tokens == 0.0
    start = np.where(undesired_tokens_mask, -10000.0, start)
    end = np.where(undesired_tokens_mask, -10000.0, end)
    start = np.exp(start - start.max(axis=-1, keepdims=True))
    start = start / start.sum()
    end = np.exp(end - end.max(axis=-1, keepdims=True))
    end = end / end.sum()
    if handle_impossible_answer:
        min_null_score = min(min_null_score, (start[0, 0] * end[0, 0]).item())
    start[0, 0] = end[0, 0] = 0.0
    starts, ends, scores = decode_spans(start, end, top_k, max_answer_len, undesired_tokens)
    return starts, ends, scores, min_null_score


def _normalize(item):
    if isinstance(item, SquadExample):
        return item
    if isinstance(item, dict):
        for key in ("question", "context"):
            if key not in item:
                raise KeyError("You need to provide a dictionary with keys {question:..., context:...}")
            if item[key] is None:
                raise ValueError(f"`{key}` cannot be None")
            if isinstance(item[key], str) and len(item[key]) == 0:
                raise ValueError(f"`{key}` cannot be empty")
        return QuestionAnsweringPipeline.create_sample(**item)
    raise ValueError(f"{item} argument needs to be of type (SquadExample, dict)")


def _examples(*args, **kwargs):
    """HF's accepted spellings → a list of SquadExample: a dict or list of dicts, (question,
    context) positionally, or question=/context= (a list of questions may share one context)."""
    if args:
        if len(args) == 1:
            inputs = args[0]
        elif len(args) == 2 and {type(el) for el in args} == {str}:
            inputs = [{"question": args[0], "context": args[1]}]
        else:
            inputs = list(args)
    elif "question" in kwargs and "context" in kwargs:
        question, context = kwargs["question"], kwargs["context"]
        if isinstance(question, list) and isinstance(context, str):
            inputs = [{"question": q, "context": context} for q in question]
        elif isinstance(question, list) and isinstance(context, list):
            if len(question) != len(context):
                raise ValueError("Questions and contexts don't have the same lengths")
            inputs = [{"question": q, "context": c} for q, c in zip(question, context)]
        elif isinstance(question, str) and isinstance(context, str):
            inputs = [{"question": question, "context": context}]
        else:
            raise ValueError("Arguments can't be understood")
    else:
        raise ValueError(f"Unknown arguments {kwargs}")
    if isinstance(inputs, dict):
        inputs = [inputs]
    elif isinstance(inputs, Iterable):
        inputs = list(inputs)
    else:
        raise ValueError(f"Invalid arguments {kwargs}")
    return [_normalize(item) for item in inputs]


class QuestionAnsweringPipeline(ChunkPipeline):
    """`pipe(question=..., context=...)` → {"score", "start", "end", "answer"} (a list when top_k > 1).

    Contexts longer than `max_seq_len` (default min(model_max_length, 384)) are read in windows
    overlapping by `doc_stride` tokens. `max_answer_len` bounds answers (in tokens);
    `handle_impossible_answer` lets "" win; `align_to_words` widens answers to whole words.
    """

    @staticmethod
    def create_sample(question, context):
        if isinstance(question, list):
            return [SquadExample(None, q, c, None, None, None) for q, c in zip(question, context)]
        return SquadExample(None, question, context, None, None, None)

    def _sanitize_parameters(self, padding=None, topk=None, top_k=None, doc_stride=None, max_answer_len=None,
                             max_seq_len=None, max_question_len=None, handle_impossible_answer=None,
                             align_to_words=None, **kwargs):
        preprocess_params = {}
        for name, value in (("padding", padding), ("doc_stride", doc_stride), ("max_question_len", max_question_len),
                            ("max_seq_len", max_seq_len)):
            if value is not None:
                preprocess_params[name] = value
        postprocess_params = {}
        if topk is not None and top_k is None:
            top_k = topk
        if top_k is not None:
            if top_k < 1:
                raise ValueError(f"top_k parameter should be >= 1 (got {top_k})")
            postprocess_params["top_k"] = top_k
        if max_answer_len is not None:
            if max_answer_len < 1:
                raise ValueError(f"max_answer_len parameter should be >= 1 (got {max_answer_len})")
            postprocess_params["max_answer_len"] = max_answer_len
        if handle_impossible_answer is not None:
            postprocess_params["handle_impossible_answer"] = handle_impossible_answer
        if align_to_words is not None:
            postprocess_params["align_to_words"] = align_to_words
        return preprocess_params, {}, postprocess_params

    def __call__(self, *args, **kwargs):
        examples = _examples(*args, **kwargs)
        kwargs.pop("question", None)
        kwargs.pop("context", None)
        if len(examples) == 1:
            return super().__call__(examples[0], **kwargs)
        return super().__call__(examples, **kwargs)

    def preprocess(self, example, padding="do_not_pad", doc_stride=None, max_question_len=64, max_seq_len=None):
        if isinstance(example, dict):
            example = SquadExample(None, example["question"], example["context"], None, None, None)
        if max_seq_len is None:
            max_seq_len = min(self.tokenizer.model_max_length, 384)
        if doc_stride is None:
            doc_stride = min(max_seq_len // 2, 128)
        if doc_stride > max_seq_len:
            raise ValueError(f"`doc_stride` ({doc_stride}) is larger than `max_seq_len` ({max_seq_len})")
        question_first = self.tokenizer.padding_side == "right"
        encoded = self.tokenizer(
            text=example.question_text if question_first else example.context_text,
            text_pair=example.context_text if question_first else example.question_text,
            padding=padding, truncation="only_second" if question_first else "only_first",
            max_length=max_seq_len, stride=doc_stride, return_token_type_ids=True, return_overflowing_tokens=True,
            return_offsets_mapping=True, return_special_tokens_mask=True)
        num_spans = len(encoded["input_ids"])
        model_input_names = list(self.tokenizer.model_input_names) + ["p_mask", "token_type_ids"]
        for span in range(num_spans):
            # p_mask: 1 for tokens that cannot be part of the answer (the question, special tokens), but not CLS.
            p_mask = [tok != 1 if question_first else 0 for tok in encoded.sequence_ids(span)]
            input_ids = encoded["input_ids"][span]
            if self.tokenizer.cls_token_id is not None:
                for cls_index in np.nonzero(np.array(input_ids) == self.tokenizer.cls_token_id)[0]:
                    p_mask[cls_index] = 0
            feature = {"input_ids": input_ids, "p_mask": p_mask}
            for name in ("attention_mask", "token_type_ids"):
                feature[name] = encoded[name][span] if name in encoded else None
            features = {"example": example, "is_last": span == num_spans - 1, "encoding": encoded[span]}
            for name, value in feature.items():
                if name in model_input_names and value is not None:
                    features[name] = core.tensor(np.asarray(value, dtype=np.int64)).unsqueeze(0)
            yield features

    def _forward(self, inputs):
        model_inputs = {k: inputs[k] for k in self.tokenizer.model_input_names}
        if self._model_accepts("use_cache"):
            model_inputs["use_cache"] = False
        output = self.model(**model_inputs)
        return {"start": output["start_logits"], "end": output["end_logits"], **inputs}

    def postprocess(self, model_outputs, top_k=1, handle_impossible_answer=False, max_answer_len=15,
                    align_to_words=True):
        min_null_score = 1000000  # large and positive
        answers = []
        for output in model_outputs:
            example = output["example"]
            attention_mask = output["attention_mask"].numpy() if output.get("attention_mask") is not None else None
            # Candidates can disappear when aligned to words: decode extra ones.
            pre_topk = top_k * 2 + 10 if align_to_words else top_k
            starts, ends, scores, min_null_score = select_starts_ends(
                output["start"].float().numpy(), output["end"].float().numpy(), output["p_mask"].numpy(),
                attention_mask, min_null_score, pre_topk, handle_impossible_answer, max_answer_len)
            question_first = self.tokenizer.padding_side == "right"
            offset = 0
            if self.tokenizer.padding_side == "left":
                offset = int((output["input_ids"].numpy() == self.tokenizer.pad_token_id).sum())
            sequence_index = 1 if question_first else 0
            for s, e, score in zip(starts, ends, scores):
                start_index, end_index = self.get_indices(output["encoding"], s - offset, e - offset, sequence_index,
                                                          align_to_words)
                target = example.context_text[start_index:end_index]
                answer = self.get_answer(answers, target)
                if answer:
                    answer["score"] += score.item()
                else:
                    answers.append({"score": score.item(), "start": start_index, "end": end_index,
                                    "answer": target})
        if handle_impossible_answer:
            answers.append({"score": min_null_score, "start": 0, "end": 0, "answer": ""})
        answers = sorted(answers, key=lambda x: x["score"], reverse=True)[:top_k]
        if len(answers) == 1:
            return answers[0]
        return answers

    @staticmethod
    def get_answer(answers, target):
        """An answer already found with the same text (case-insensitive), whose score then grows."""
        for answer in answers:
            if answer["answer"].lower() == target.lower():
                return answer
        return None

    @staticmethod
    def get_indices(enc, s, e, sequence_index, align_to_words):
        """Character span of tokens s..e: whole words when align_to_words, else the tokens' own offsets."""
        s, e = int(s), int(e)
        if align_to_words:
            try:
                start_word = enc.token_to_word(s)
                end_word = enc.token_to_word(e)
                start_index = enc.word_to_chars(start_word, sequence_index=sequence_index)[0]
                end_index = enc.word_to_chars(end_word, sequence_index=sequence_index)[1]
                return start_index, end_index
            except (TypeError, ValueError, IndexError):
                pass  # the tokens belong to no word of the context: fall back to their offsets
        return enc.offsets[s][0], enc.offsets[e][1]
