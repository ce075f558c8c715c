"""`PipelineTesterMixin`: every model runs the pipelines of the tasks it serves, in the shape of
HF transformers' tests/test_pipeline_mixin.py.

A model test class lists `pipeline_model_mapping` (HF's task name → model class, e.g.
`{"fill-mask": BertForMaskedLM, "zero-shot": BertForSequenceClassification}`) and mixes in
`PipelineTesterMixin`; each `test_pipeline_<task>` then builds the mapped model from the class's
own tiny config (`self.model_tester`), a tokenizer trained for that config, and runs HF's checks of
that task's answers: their structure, keys and types, `top_k`, targets, text pairs, aggregation,
long inputs split into windows, the argument errors, and batching. HF loads tiny checkpoints from
the Hub instead; the checks are the same. Tasks absent from the mapping are skipped (as in HF);
a mapped task mindnlp's `pipeline()` does not serve fails `test_pipeline_model_mapping`.

The tokenizer is the model type's own tokenizer class (BertTokenizerFast, RobertaTokenizerFast,
...), trained with the `tokenizers` library on the sentences the checks use (`CORPUS`), with
`config.vocab_size` ids and the special tokens at the ids the config names (pad, bos, eos). A
model type whose tokenizer class cannot be built that way (none, a sentencepiece model file, one
token for every special role) overrides `get_pipeline_tokenizer` (see
`tiny_sentencepiece_tokenizer`).
"""
import copy
import inspect
import math
import os
import random
import tempfile

import numpy as np
from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from mindnlp import core
from mindnlp.core import nn
from mindnlp.transformers import PreTrainedTokenizerFast, pipeline
from mindnlp.transformers.models.auto import modeling_auto
from mindnlp.transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING
from mindnlp.transformers.pipelines import (
    PIPELINE_REGISTRY,
    AggregationStrategy,
    FeatureExtractionPipeline,
    FillMaskPipeline,
    PipelineException,
    QuestionAnsweringPipeline,
    TextClassificationPipeline,
    TextGenerationPipeline,
    TokenClassificationPipeline,
    ZeroShotClassificationPipeline,
)
from mindnlp.transformers.testing_utils import torch_device

# The sentences the checks feed the pipelines; the tiny tokenizers learn their words from them.
CORPUS = (
    "This is a test", "This is another test", "Another longer test", "This is great !", "Something else",
    "HuggingFace is in", "Paris is in France", "HuggingFace was founded in Paris.", "Where was HuggingFace founded ?",
    "In what field is HuggingFace working ?", "What field is HuggingFace working ?", "In what field is HuggingFace ?",
    "HuggingFace is a startup based in New-York", "HuggingFace is a startup founded in Paris",
    "A simple string", "list of strings", "A simple string that is quite a bit longer", "My name is",
    "Who are you voting for in 2020?", "My stomach hurts.", "This example is politics.", "This text is about health",
    "politics, public health", "I am happy", "I am sad", "positive", "negative",
)

# The longest input a pipeline test tokenizer accepts: short enough that long texts are cut into
# windows, and below every tester's position table (RoBERTa-style embeddings also give up two
# positions to the padding offset).
PIPELINE_MAX_LENGTH = 128

# New tokens per text-generation call: the pipeline's own default (256) would only cost time.
GENERATION_KWARGS = {"max_new_tokens": 4}


# ---------------------------------------------------------------------------------------------
# comparing answers


class ANY:
    """Equal to any instance of the given types: `{"score": ANY(float)}` (HF's test helper)."""

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return isinstance(other, self.types)

    def __repr__(self):
        return f"ANY({', '.join(t.__name__ for t in self.types)})"


def simplify(value):
    """Python values for NumPy scalars, recursively (pipelines may answer np.float32 scores)."""
    if isinstance(value, dict):
        return {key: simplify(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [simplify(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def rounded(value, decimals=3):
    """Python values with floats rounded to `decimals` places, recursively (HF's nested_simplify)."""
    value = simplify(value)
    if isinstance(value, dict):
        return {key: rounded(item, decimals) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item, decimals) for item in value]
    return round(value, decimals) if isinstance(value, float) else value


def assert_same_answers(case, got, want, where="answer"):
    """Same structure and values; floats equal up to float32 rounding (batched runs pad inputs)."""
    if isinstance(want, dict):
        case.assertIsInstance(got, dict, where)
        case.assertEqual(sorted(got), sorted(want), where)
        for key in want:
            assert_same_answers(case, got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, (list, tuple)):
        case.assertIsInstance(got, (list, tuple), where)
        case.assertEqual(len(got), len(want), where)
        for i, (a, b) in enumerate(zip(got, want)):
            assert_same_answers(case, a, b, f"{where}[{i}]")
    elif isinstance(want, float):
        case.assertTrue(math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-6), f"{where}: {got} != {want}")
    else:
        case.assertEqual(got, want, where)


def nested_shape(value):
    """The shape of nested lists of floats, which must be rectangular (feature-extraction output)."""
    if isinstance(value, float):
        return []
    if not isinstance(value, list) or not value:
        raise TypeError(f"expected non-empty nested lists of floats, got {type(value).__name__}")
    shapes = [nested_shape(item) for item in value]
    if any(shape != shapes[0] for shape in shapes):
        raise ValueError(f"ragged nested lists: {shapes}")
    return [len(value), *shapes[0]]


# ---------------------------------------------------------------------------------------------
# tiny tokenizers


def _special_tokens_in_id_order(special_tokens, config):
    """The distinct special tokens, ordered so that a trainer, which numbers them from 0, gives
    each one the id the config names for its role (pad_token_id, bos_token_id, eos_token_id)."""
    distinct = list(dict.fromkeys(token for token in special_tokens.values() if token is not None))
    fixed = {}
    for role in ("pad", "bos", "eos"):
        token, index = special_tokens.get(f"{role}_token"), getattr(config, f"{role}_token_id", None)
        if token is None or not isinstance(index, int):
            continue
        taken = fixed.get(index, token) != token or (token in fixed.values() and fixed.get(index) != token)
        if taken or index >= len(distinct):
            raise ValueError(f"cannot give {token!r} the id {index} that config.{role}_token_id asks for (special "
                             f"tokens {distinct}, already placed {fixed}): build the tokenizer by hand")
        fixed[index] = token
    others = [token for token in distinct if token not in fixed.values()]
    return [fixed[i] if i in fixed else others.pop(0) for i in range(len(distinct))]


def _class_special_tokens(tokenizer_class):
    """{"pad_token": "[PAD]", ...}: the special tokens a tokenizer class uses by default."""
    parameters = inspect.signature(tokenizer_class.__init__).parameters
    return {name: p.default for name, p in parameters.items() if name.endswith("_token") and isinstance(p.default, str)}


def _check_fits(tokenizer, config):
    if len(tokenizer) > config.vocab_size:
        raise ValueError(f"the tiny tokenizer has {len(tokenizer)} ids but config.vocab_size is {config.vocab_size}")
    for role in ("pad", "bos", "eos"):
        want, got = getattr(config, f"{role}_token_id", None), getattr(tokenizer, f"{role}_token_id")
        if isinstance(want, int) and got is not None and got != want:
            raise ValueError(f"tokenizer.{role}_token_id is {got} but config.{role}_token_id is {want}")


def _model_max_length(config):
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    return PIPELINE_MAX_LENGTH if positions is None else min(PIPELINE_MAX_LENGTH, positions - 2)


def tiny_tokenizer(tokenizer_class, config):
    """A `tokenizer_class` trained on CORPUS for `config`, built from the vocabulary files the
    class reads, as `from_pretrained` would: WordPiece vocab.txt (BERT's classes) or byte-level
    BPE vocab.json + merges.txt (RoBERTa's, GPT-2's)."""
    special_tokens = _class_special_tokens(tokenizer_class)
    order = _special_tokens_in_id_order(special_tokens, config)
    files = set(tokenizer_class.vocab_files_names.values())
    if files == {"vocab.txt"}:
        backend = Tokenizer(models.WordPiece(unk_token=special_tokens["unk_token"]))
        backend.normalizer = normalizers.BertNormalizer(lowercase=True)
        backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=config.vocab_size, special_tokens=order, show_progress=False)
    elif files == {"vocab.json", "merges.txt"}:
        backend = Tokenizer(models.BPE(unk_token=special_tokens.get("unk_token")))
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(vocab_size=config.vocab_size, special_tokens=order, show_progress=False)
    else:
        raise ValueError(f"no tiny-tokenizer recipe for {tokenizer_class.__name__} (files {sorted(files)}): override "
                         "get_pipeline_tokenizer")
    backend.train_from_iterator(CORPUS, trainer)
    with tempfile.TemporaryDirectory() as folder:
        backend.model.save(folder)
        paths = {name: os.path.join(folder, file) for name, file in tokenizer_class.vocab_files_names.items()}
        tokenizer = tokenizer_class(**paths, model_max_length=_model_max_length(config))
    _check_fits(tokenizer, config)
    return tokenizer


def tiny_sentencepiece_tokenizer(config, special_tokens, single, pair):
    """A `PreTrainedTokenizerFast` in sentencepiece's style ("▁" marks a word start; BPE pieces)
    trained on CORPUS, for model types whose checkpoints ship only a tokenizer.json (XLM-R) or
    whose own tokenizer cannot be trained to the config's special ids (the decoder families).
    `single`/`pair` are the post-processor's templates, e.g. "<s> $A </s>"."""
    order = _special_tokens_in_id_order(special_tokens, config)
    backend = Tokenizer(models.BPE(unk_token=special_tokens.get("unk_token")))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    backend.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=config.vocab_size, special_tokens=order,
                                                            show_progress=False))
    if special_tokens.get("mask_token") is not None:
        # as in such checkpoints' tokenizer.json, the mask takes the space before it ("▁a <mask>")
        backend.add_special_tokens([AddedToken(special_tokens["mask_token"], lstrip=True, normalized=False,
                                               special=True)])
    backend.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(token, backend.token_to_id(token)) for token in order])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, model_max_length=_model_max_length(config),
                                        **special_tokens)
    _check_fits(tokenizer, config)
    return tokenizer


# ---------------------------------------------------------------------------------------------
# the checks of each task (HF's tests/pipelines/test_pipelines_<task>.py)


class _TaskChecks:
    """What one task's pipeline must answer. `case` is the running TestCase (for assertions)."""

    task = None  # the pipeline() task name
    pipeline_class = None

    def __init__(self, case):
        self.case = case

    def make_pipeline(self, model, tokenizer, **kwargs):
        pipe = pipeline(self.task, model=model, tokenizer=tokenizer, **kwargs)
        self.case.assertIsInstance(pipe, self.pipeline_class)
        return pipe

    def assert_same_answers(self, got, want):
        assert_same_answers(self.case, got, want)

    def check_batched(self, pipe, inputs, batched):
        """Batching changes no answer: `batched` equals the answers to `inputs` one at a time."""
        one_by_one = list(pipe((copy.deepcopy(item) for item in inputs), batch_size=1))
        self.assert_same_answers(simplify(batched), simplify(one_by_one))


class FeatureExtractionPipelineTests(_TaskChecks):
    task = "feature-extraction"
    pipeline_class = FeatureExtractionPipeline

    def get_test_pipeline(self, model, tokenizer):
        return self.make_pipeline(model, tokenizer), ["This is a test", "This is another test"]

    def run_pipeline_test(self, extractor, examples):
        case, tokenizer = self.case, extractor.tokenizer
        hidden = extractor.model.config.hidden_size

        def length(text):
            return len(tokenizer(text)["input_ids"])

        case.assertEqual(nested_shape(extractor("This is a test")), [1, length("This is a test"), hidden])
        texts = ["This is a test", "Another longer test"]
        outputs = extractor(texts)
        case.assertEqual([nested_shape(output) for output in outputs], [[1, length(t), hidden] for t in texts])
        # a long text is cut to the tokenizer's limit
        case.assertEqual(nested_shape(extractor("This is a test" * 100, truncation=True)),
                         [1, tokenizer.model_max_length, hidden])
        # the tensor itself on request
        tensor = extractor("This is a test", return_tensors=True)
        case.assertIsInstance(tensor, core.Tensor)
        np.testing.assert_allclose(tensor.float().cpu().numpy(), np.array(extractor("This is a test")), atol=1e-6)
        # tokenizer options pass through; max_length alone truncates (HF's tokenizer convention)
        case.assertEqual(nested_shape(extractor("This is a test", tokenize_kwargs={"max_length": 3})), [1, 3, hidden])
        options = {"truncation": True, "padding": "max_length", "max_length": 4}
        outputs = extractor(["This", "This is a test test test"], tokenize_kwargs=options)
        case.assertEqual(np.squeeze(np.array(outputs)).shape, (2, 4, hidden))
        with case.assertRaises(ValueError):
            extractor("This is a test", truncation=True, tokenize_kwargs={"truncation": True})

    def assert_same_answers(self, got, want):
        """Items of a padded batch keep the padded length (HF); the real tokens must agree."""
        for batched, alone in zip(got, want):
            batched, alone = np.array(batched), np.array(alone)
            self.case.assertGreaterEqual(batched.shape[1], alone.shape[1])
            np.testing.assert_allclose(batched[:, : alone.shape[1]], alone, atol=1e-5)


class FillMaskPipelineTests(_TaskChecks):
    task = "fill-mask"
    pipeline_class = FillMaskPipeline

    def get_test_pipeline(self, model, tokenizer):
        self.case.assertIsNotNone(tokenizer.mask_token_id, "a fill-mask tokenizer needs a mask token")
        return self.make_pipeline(model, tokenizer), [f"This is another {tokenizer.mask_token} test"]

    def check_predictions(self, predictions, fill_masker, count):
        """`count` candidates, best first, each {"sequence", "score", "token", "token_str"}."""
        entry = {"sequence": ANY(str), "score": ANY(float), "token": ANY(int), "token_str": ANY(str)}
        self.case.assertEqual(simplify(predictions), [entry] * count)
        scores = [p["score"] for p in predictions]
        self.case.assertEqual(scores, sorted(scores, reverse=True))
        for prediction in predictions:
            self.case.assertEqual(prediction["token_str"], fill_masker.tokenizer.decode([prediction["token"]]))

    def run_pipeline_test(self, fill_masker, examples):
        case, tokenizer, model = self.case, fill_masker.tokenizer, fill_masker.model
        mask = tokenizer.mask_token
        # the mask stands for a whole word, space included: no stray space token before it (HF's
        # mask tokens take the space before them where words carry their leading space)
        ids = tokenizer(f"This is a {mask}", add_special_tokens=False)["input_ids"]
        case.assertEqual([i for i in ids if tokenizer.decode([i]).strip() == ""], [], tokenizer.convert_ids_to_tokens(ids))
        self.check_predictions(fill_masker(f"This is a {mask}"), fill_masker, 5)
        # a list of one text is answered like the text itself (HF)
        self.check_predictions(fill_masker([f"This is a {mask}"]), fill_masker, 5)
        outputs = fill_masker([f"This is a {mask}", f"Another {mask} great test."])
        case.assertEqual(len(outputs), 2)
        for predictions in outputs:
            self.check_predictions(predictions, fill_masker, 5)
        with case.assertRaises(ValueError):
            fill_masker([None])
        with case.assertRaises(PipelineException):
            fill_masker("This is")

        # top_k given to the pipeline or to the call
        two = FillMaskPipeline(model=model, tokenizer=tokenizer, top_k=2)(f"This is a {mask}")
        self.check_predictions(two, fill_masker, 2)
        self.assert_same_answers(fill_masker(f"This is a {mask}", top_k=2), two)

        # targets restrict the candidates, given to the pipeline or to the call
        vocab = tokenizer.get_vocab()
        targets = sorted(vocab)[:2]
        target_ids = {vocab[target] for target in targets}
        for outputs in (FillMaskPipeline(model=model, tokenizer=tokenizer, targets=targets)(f"This is a {mask}"),
                        fill_masker(f"This is a {mask}", targets=targets)):
            self.check_predictions(outputs, fill_masker, 2)
            case.assertEqual({p["token"] for p in outputs}, target_ids)
            case.assertEqual({p["token_str"] for p in outputs}, {tokenizer.decode([i]) for i in target_ids})
        # a target's score does not depend on the other targets
        outputs = fill_masker(f"This is a {mask}", targets=targets)
        tokens = [p["token_str"] for p in outputs]
        if set(tokens) == set(targets):
            again = fill_masker(f"This is a {mask}", targets=tokens)
            self.assert_same_answers([p["score"] for p in again], [p["score"] for p in outputs])
        with case.assertRaises(ValueError):
            fill_masker(f"This is a {mask}", targets=[])
        if "" not in vocab:
            with case.assertRaises(ValueError):
                fill_masker(f"This is a {mask}", targets=[""])
            with case.assertRaises(ValueError):
                fill_masker(f"This is a {mask}", targets="")

        # the best 2 of 3 targets, asked again with those 2 as targets, are the same answers
        outputs = fill_masker(f"This is a {mask}", top_k=2, targets=sorted(vocab)[:3])
        best = [p["token_str"] for p in outputs]
        if set(best).issubset(sorted(vocab)[:3]):
            self.assert_same_answers(fill_masker(f"This is a {mask}", top_k=3, targets=best), outputs)
        # duplicated targets count once, so top_k cannot exceed the distinct targets
        first = sorted(vocab)[:3]
        duplicated = [first[0], first[1], first[0], first[2], first[1]]
        case.assertEqual(len(fill_masker(f"My name is {mask}", targets=duplicated, top_k=10)), 3)
        # several masks: one list of candidates per mask
        outputs = fill_masker(f"This is a {mask} {mask} {mask}", top_k=2)
        case.assertEqual(len(outputs), 3)
        for predictions in outputs:
            self.check_predictions(predictions, fill_masker, 2)


class TextClassificationPipelineTests(_TaskChecks):
    task = "text-classification"
    pipeline_class = TextClassificationPipeline

    def get_test_pipeline(self, model, tokenizer):
        return self.make_pipeline(model, tokenizer), ["HuggingFace is in", "This is another test"]

    def check_ranking(self, ranked, labels):
        self.case.assertEqual(simplify(ranked), [{"label": ANY(str), "score": ANY(float)}] * len(ranked))
        scores = [entry["score"] for entry in ranked]
        self.case.assertEqual(scores, sorted(scores, reverse=True))
        self.case.assertTrue({entry["label"] for entry in ranked} <= labels)

    def run_pipeline_test(self, classifier, examples):
        case = self.case
        labels = set(classifier.model.config.id2label.values())
        n = len(labels)
        # a single text is answered with a list of one answer (HF's legacy shape)
        outputs = classifier("HuggingFace is in")
        self.check_ranking(outputs, labels)
        case.assertEqual(len(outputs), 1)
        texts = ["HuggingFace is in ", "Paris is in France"]
        outputs = classifier(texts)
        case.assertEqual(len(outputs), 2)
        for output in outputs:
            self.check_ranking([output], labels)
        # top_k=None: every label, best first (not the legacy format)
        outputs = classifier(texts, top_k=None)
        case.assertEqual([len(ranked) for ranked in outputs], [n, n])
        for ranked in outputs:
            self.check_ranking(ranked, labels)
            case.assertEqual({entry["label"] for entry in ranked}, labels)
            if n > 1:  # softmax over the labels
                case.assertAlmostEqual(sum(entry["score"] for entry in ranked), 1.0, places=5)
        self.check_ranking(classifier("This is great !", top_k=1), labels)
        case.assertEqual(len(classifier("This is great !", top_k=min(2, n))), min(2, n))
        # legacy return_all_scores: every label in label order, wrapped in a list for a single text
        every = classifier("This is great !", return_all_scores=True)
        case.assertEqual([entry["label"] for entry in every[0]], list(classifier.model.config.id2label.values()))
        case.assertEqual(len(classifier("This is great !", return_all_scores=False)), 1)
        # a text pair is a dict and is answered with a dict
        output = classifier({"text": "HuggingFace is in ", "text_pair": "Paris is in France"})
        self.check_ranking([output], labels)
        # a list holding one pair is ambiguous and refused; the old triple nesting still means a pair
        with case.assertRaises(ValueError):
            classifier([["HuggingFace is in ", "Paris is in France"]])
        outputs = classifier([[["HuggingFace is in ", "Paris is in France"]]])
        case.assertEqual(len(outputs), 1)
        self.check_ranking(outputs, labels)


class TokenClassificationPipelineTests(_TaskChecks):
    task = "token-classification"
    pipeline_class = TokenClassificationPipeline

    def get_test_pipeline(self, model, tokenizer):
        return self.make_pipeline(model, tokenizer), ["A simple string", "A simple string that is quite a bit longer"]

    def check_tokens(self, entities, sentence, tokenizer):
        """With the default labels nothing is "O", so every token but the special ones is an
        entity, at its own index and character offsets."""
        encoding = tokenizer(sentence, return_offsets_mapping=True, return_special_tokens_mask=True)
        positions = [i for i, special in enumerate(encoding["special_tokens_mask"]) if not special]
        entry = {"entity": ANY(str), "score": ANY(float), "start": ANY(int), "end": ANY(int), "index": ANY(int),
                 "word": ANY(str)}
        self.case.assertEqual(simplify(entities), [entry] * len(positions))
        self.case.assertEqual([entity["index"] for entity in entities], positions)
        self.case.assertEqual([(entity["start"], entity["end"]) for entity in entities],
                              [tuple(encoding["offset_mapping"][i]) for i in positions])
        self.case.assertEqual([entity["word"] for entity in entities],
                              tokenizer.convert_ids_to_tokens([encoding["input_ids"][i] for i in positions]))

    def check_groups(self, groups, sentence):
        entry = {"entity_group": ANY(str), "score": ANY(float), "start": ANY(int), "end": ANY(int), "word": ANY(str)}
        self.case.assertEqual(simplify(groups), [entry] * len(groups))
        self.case.assertGreater(len(groups), 0)
        ends = [0] + [group["end"] for group in groups]
        for group, previous_end in zip(groups, ends):
            self.case.assertTrue(previous_end <= group["start"] < group["end"] <= len(sentence), groups)

    def run_pipeline_test(self, token_classifier, examples):
        case, tokenizer, model = self.case, token_classifier.tokenizer, token_classifier.model
        case.assertTrue(tokenizer.is_fast, "token-classification needs the offsets of a fast tokenizer")
        outputs = token_classifier("A simple string")
        case.assertIsInstance(outputs, list)
        self.check_tokens(outputs, "A simple string", tokenizer)
        sentences = ["list of strings", "A simple string that is quite a bit longer"]
        outputs = token_classifier(sentences)
        case.assertEqual(len(outputs), 2)
        for entities, sentence in zip(outputs, sentences):
            self.check_tokens(entities, sentence, tokenizer)
        for strategy in ("simple", "first", "max", "average"):
            grouping = TokenClassificationPipeline(model=model, tokenizer=tokenizer, aggregation_strategy=strategy)
            case.assertEqual(grouping._postprocess_params["aggregation_strategy"], AggregationStrategy[strategy.upper()])
            self.check_groups(grouping("A simple string"), "A simple string")


class QAPipelineTests(_TaskChecks):
    task = "question-answering"
    pipeline_class = QuestionAnsweringPipeline

    def get_test_pipeline(self, model, tokenizer):
        examples = [{"question": "Where was HuggingFace founded ?", "context": "HuggingFace was founded in Paris."},
                    {"question": "In what field is HuggingFace ?", "context": "HuggingFace is  an AI startup."}]
        return self.make_pipeline(model, tokenizer), examples

    def check_answer(self, answer, context):
        self.case.assertEqual(simplify(answer), {"answer": ANY(str), "start": ANY(int), "end": ANY(int),
                                                 "score": ANY(float)})
        self.case.assertEqual(answer["answer"], context[answer["start"]:answer["end"]])

    def run_pipeline_test(self, question_answerer, examples):
        case = self.case
        question, context = "Where was HuggingFace founded ?", "HuggingFace was founded in Paris."
        self.check_answer(question_answerer(question=question, context=context), context)
        self.check_answer(question_answerer(question=question, context=context, handle_impossible_answer=True),
                          context)
        # several questions about one context, or question i about context i
        outputs = question_answerer(question=["In what field is HuggingFace working ?"] * 2, context=context)
        case.assertEqual(len(outputs), 2)
        for answer in outputs:
            self.check_answer(answer, context)
        contexts = ["HuggingFace is a startup based in New-York", "HuggingFace is a startup founded in Paris"]
        outputs = question_answerer(question=["What field is HuggingFace working ?", "In what field is HuggingFace ?"],
                                    context=contexts)
        case.assertEqual(len(outputs), 2)
        for answer, text in zip(outputs, contexts):
            self.check_answer(answer, text)
        for bad in ({"question": "", "context": context}, {"question": None, "context": context},
                    {"question": question, "context": ""}, {"question": question, "context": None}):
            with case.assertRaises(ValueError):
                question_answerer(**bad)
        # at most top_k distinct answers, best first. Answers are whole-word spans (align_to_words):
        # when every token span of the context is among the 2 * top_k + 10 candidates the pipeline
        # decodes, each of the n(n+1)/2 word spans of its n words is one, so there are top_k of them
        answers = question_answerer(question=question, context=context, top_k=20)
        case.assertLessEqual(len(answers), 20)
        for answer in answers:
            self.check_answer(answer, context)
        scores = [answer["score"] for answer in answers]
        case.assertEqual(scores, sorted(scores, reverse=True))
        case.assertEqual(len({answer["answer"].lower() for answer in answers}), len(answers))
        encoding = question_answerer.tokenizer(question, context)
        in_context = [word for word, sequence in zip(encoding.word_ids(), encoding.sequence_ids()) if sequence == 1]
        token_spans, words = len(in_context) * (len(in_context) + 1) // 2, len(set(in_context))
        if token_spans <= 2 * 20 + 10 and words * (words + 1) // 2 >= 20:
            case.assertEqual(len(answers), 20)
        # a context longer than the tokenizer's limit is read in windows; batching them changes no
        # answer, its score compared to 3 decimals as HF's test compares it (nested_simplify): the
        # repeated context makes candidate spans of near-equal scores, among which the last bits
        # of a batched product (BLAS's kernel for the batch's rows) may pick others to add up
        long_context = context * 20
        windows = question_answerer.tokenizer(question, long_context, truncation="only_second",
                                              max_length=question_answerer.tokenizer.model_max_length,
                                              return_overflowing_tokens=True)["input_ids"]
        case.assertGreater(len(windows), 1)
        answer = question_answerer(question=question, context=long_context)
        self.check_answer(answer, long_context)
        batched = question_answerer(question=question, context=long_context, batch_size=2)
        self.check_answer(batched, long_context)
        self.assert_same_answers(rounded(batched), rounded(answer))


class TextGenerationPipelineTests(_TaskChecks):
    task = "text-generation"
    pipeline_class = TextGenerationPipeline

    def get_test_pipeline(self, model, tokenizer):
        return self.make_pipeline(model, tokenizer, **GENERATION_KWARGS), ["This is a test", "Another test"]

    def run_pipeline_test(self, text_generator, examples):
        case, tokenizer, model = self.case, text_generator.tokenizer, text_generator.model
        outputs = text_generator("This is a test")
        case.assertEqual(outputs, [{"generated_text": ANY(str)}])
        case.assertTrue(outputs[0]["generated_text"].startswith("This is a test"))
        outputs = text_generator("This is a test", return_full_text=False)
        case.assertEqual(outputs, [{"generated_text": ANY(str)}])
        case.assertNotIn("This is a test", outputs[0]["generated_text"])
        new_text_only = pipeline(self.task, model=model, tokenizer=tokenizer, return_full_text=False,
                                 **GENERATION_KWARGS)
        outputs = new_text_only("This is a test")
        case.assertEqual(outputs, [{"generated_text": ANY(str)}])
        case.assertNotIn("This is a test", outputs[0]["generated_text"])
        outputs = new_text_only("This is a test", return_full_text=True)
        case.assertTrue(outputs[0]["generated_text"].startswith("This is a test"))

        # the new text is the whole sequence decoded, minus the decoded prompt (so a word piece
        # continuing the prompt's last word joins it, as in HF)
        prompt_ids = tokenizer("This is a test")["input_ids"]
        ids = text_generator("This is a test", do_sample=False, return_tensors=True)[0]["generated_token_ids"]
        case.assertEqual(ids[: len(prompt_ids)], prompt_ids)
        case.assertTrue(len(prompt_ids) < len(ids) <= len(prompt_ids) + GENERATION_KWARGS["max_new_tokens"])
        new_text = text_generator("This is a test", do_sample=False, return_full_text=False)[0]["generated_text"]
        decoded = tokenizer.decode(ids, skip_special_tokens=True)
        case.assertEqual(new_text, decoded[len(tokenizer.decode(prompt_ids, skip_special_tokens=True)):])

        expected = [[{"generated_text": ANY(str)}] * 2] * 2
        texts = ["This is great !", "Something else"]
        case.assertEqual(text_generator(texts, num_return_sequences=2, do_sample=True), expected)
        if tokenizer.pad_token is not None:
            case.assertEqual(text_generator(texts, num_return_sequences=2, batch_size=2, do_sample=True), expected)
        for exclusive in ({"return_full_text": True, "return_text": True},
                          {"return_full_text": True, "return_tensors": True},
                          {"return_text": True, "return_tensors": True}):
            with case.assertRaises(ValueError):
                text_generator("test", **exclusive)
        # an empty prompt needs a bos token to start from
        if tokenizer.bos_token_id is not None:
            case.assertEqual(text_generator(""), [{"generated_text": ANY(str)}])
        else:
            with case.assertRaises((ValueError, AssertionError)):
                text_generator("", add_special_tokens=False)
        # a prompt longer than a learned position table is an error, not a silent wrap-around
        table = max((module.num_embeddings for name, module in model.named_modules()
                     if isinstance(module, nn.Embedding) and name.endswith(("position_embeddings", "wpe"))),
                    default=None)
        if table is not None:
            with case.assertRaises((RuntimeError, IndexError, ValueError, AssertionError)):
                text_generator("This is a test" * (table // 4 + 1), max_new_tokens=1)

    def check_batched(self, pipe, inputs, batched):
        """Sampled texts differ from run to run: only their form is checked."""
        self.case.assertEqual(batched, [[{"generated_text": ANY(str)}]] * len(inputs))


class ZeroShotClassificationPipelineTests(_TaskChecks):
    task = "zero-shot-classification"
    pipeline_class = ZeroShotClassificationPipeline

    def get_test_pipeline(self, model, tokenizer):
        classifier = self.make_pipeline(model, tokenizer, candidate_labels=["polics", "health"])
        return classifier, ["Who are you voting for in 2020?", "My stomach hurts."]

    def check_answer(self, answer, sequence, labels):
        self.case.assertEqual(simplify(answer), {"sequence": sequence, "labels": [ANY(str)] * len(labels),
                                                 "scores": [ANY(float)] * len(labels)})
        self.case.assertEqual(sorted(answer["labels"]), sorted(labels))
        self.case.assertEqual(answer["scores"], sorted(answer["scores"], reverse=True))
        if len(labels) > 1:
            self.case.assertAlmostEqual(sum(answer["scores"]), 1.0, places=5)

    def run_pipeline_test(self, classifier, examples):
        case = self.case
        text = "Who are you voting for in 2020?"
        self.check_answer(classifier(text, candidate_labels="politics"), text, ["politics"])
        self.check_answer(classifier(text, ["politics"]), text, ["politics"])
        self.check_answer(classifier(text, candidate_labels=["politics"]), text, ["politics"])
        both = ["politics", "public health"]
        self.check_answer(classifier(text, candidate_labels="politics, public health"), text, both)
        self.check_answer(classifier(text, candidate_labels=both), text, both)
        self.check_answer(classifier(text, candidate_labels="politics", hypothesis_template="This text is about {}"),
                          text, ["politics"])
        # the scores are the entailment logits of the (text, hypothesis) pairs, softmaxed over the labels
        answer = classifier(text, candidate_labels=both)
        self.assert_same_answers(dict(zip(answer["labels"], answer["scores"])),
                                 self.expected_scores(classifier, text, both, multi_label=False))
        # multi_label: each label on its own (entailment against contradiction), so no sum to 1
        answer = classifier(text, candidate_labels=both, multi_label=True)
        case.assertEqual(sorted(answer["labels"]), both)
        self.assert_same_answers(dict(zip(answer["labels"], answer["scores"])),
                                 self.expected_scores(classifier, text, both, multi_label=True))
        # a list of texts, even of one, is answered with a list
        outputs = classifier(["I am happy"], ["positive", "negative"])
        case.assertEqual(len(outputs), 1)
        self.check_answer(outputs[0], "I am happy", ["positive", "negative"])
        outputs = classifier(["I am happy", "I am sad"], ["positive", "negative"])
        for answer, sequence in zip(outputs, ["I am happy", "I am sad"]):
            self.check_answer(answer, sequence, ["positive", "negative"])
        with case.assertRaises(ValueError):
            classifier("", candidate_labels="politics")
        with case.assertRaises(TypeError):
            classifier(None, candidate_labels="politics")
        with case.assertRaises(ValueError):
            classifier(text, candidate_labels="")
        with case.assertRaises(TypeError):
            classifier(text, candidate_labels=None)
        with case.assertRaises(ValueError):
            classifier(text, candidate_labels="politics", hypothesis_template="Not formatting template")
        with case.assertRaises(TypeError):
            classifier(text, candidate_labels="politics", hypothesis_template=None)
        self.check_entailment_id(classifier)

    @staticmethod
    def expected_scores(classifier, text, labels, multi_label):
        """{label: score} computed by hand from the model's logits on each NLI pair."""
        entail = classifier.entailment_id
        logits = []
        for label in labels:
            inputs = classifier.tokenizer(text, f"This example is {label}.", return_tensors="pt")
            inputs = {k: v.to(classifier.device) for k, v in inputs.items()}
            with core.no_grad():
                logits.append(classifier.model(**inputs).logits[0].float().cpu().numpy().astype(np.float64))
        logits = np.stack(logits)
        if multi_label:
            pair = np.exp(logits[:, [-1 if entail == 0 else 0, entail]])
            scores = pair[:, 1] / pair.sum(axis=-1)
        else:
            scores = np.exp(logits[:, entail]) / np.exp(logits[:, entail]).sum()
        return dict(zip(labels, scores.tolist()))

    def check_entailment_id(self, classifier):
        """The entailment class is the first label starting with "entail", whatever its case."""
        config = classifier.model.config
        original = config.label2id
        for label2id, expected in (({"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2}, -1),
                                   ({"entailment": 0, "neutral": 1, "contradiction": 2}, 0),
                                   ({"ENTAIL": 0, "NON-ENTAIL": 1}, 0),
                                   ({"ENTAIL": 2, "NEUTRAL": 1, "CONTR": 0}, 2)):
            config.label2id = label2id
            self.case.assertEqual(classifier.entailment_id, expected)
        config.label2id = original


# HF's task name (a key of `pipeline_model_mapping`) → the checks of that task's pipeline.
pipeline_test_mapping = {
    "feature-extraction": {"test": FeatureExtractionPipelineTests},
    "fill-mask": {"test": FillMaskPipelineTests},
    "question-answering": {"test": QAPipelineTests},
    "text-classification": {"test": TextClassificationPipelineTests},
    "text-generation": {"test": TextGenerationPipelineTests},
    "token-classification": {"test": TokenClassificationPipelineTests},
    "zero-shot": {"test": ZeroShotClassificationPipelineTests},
}


class PipelineTesterMixin:
    model_tester = None
    pipeline_model_mapping = None

    def __init_subclass__(cls, **kwargs):
        """A test class runs the tests of the tasks its mapping lists; the others are removed
        from it rather than skipped (HF skips them: a skip here would only be noise)."""
        super().__init_subclass__(**kwargs)
        mapping = cls.pipeline_model_mapping
        if mapping is None:
            return
        for task in pipeline_test_mapping:
            name = "test_pipeline_" + task.replace("-", "_")
            if task not in mapping and callable(getattr(cls, name, None)):
                setattr(cls, name, None)

    # ------------------------------------------------------------------ what the tests are built from

    def get_pipeline_config(self, task):
        """The tester's tiny config; text-generation takes its decoder config where the tester has
        one (an encoder's LM head generates causally only with `is_decoder=True`)."""
        tester = self.model_tester
        if task == "text-generation" and hasattr(tester, "prepare_config_and_inputs_for_decoder"):
            return tester.prepare_config_and_inputs_for_decoder()[0]
        if hasattr(tester, "get_config"):
            return tester.get_config()
        return tester.prepare_config_and_inputs_for_common()[0]

    def get_pipeline_tokenizer(self, config):
        """The model type's tokenizer class, trained for `config` (see `tiny_tokenizer`)."""
        tokenizer_class = TOKENIZER_MAPPING.get(config.model_type)
        if tokenizer_class is None:
            self.fail(f"{type(self).__name__}: model type {config.model_type!r} has no tokenizer class; override "
                      "get_pipeline_tokenizer (e.g. with tiny_sentencepiece_tokenizer)")
        return tiny_tokenizer(tokenizer_class, config)

    def is_pipeline_test_to_skip(self, pipeline_test_case_name, config_class, model_architecture, tokenizer_name,
                                 image_processor_name, feature_extractor_name, processor_name):
        """HF's hook for known failures, before anything is built: return True to skip."""
        return False

    def is_pipeline_test_to_skip_more(self, pipeline_test_case_name, config, model, tokenizer, image_processor=None,
                                      feature_extractor=None, processor=None):
        """HF's hook for known failures, once model and tokenizer exist: return True to skip."""
        return False

    # ------------------------------------------------------------------ running

    def run_task_tests(self, task):
        """The checks of `task` on each model class `pipeline_model_mapping` gives for it."""
        if task not in (self.pipeline_model_mapping or {}):
            self.skipTest(f"`{task}` is not in `pipeline_model_mapping` of {type(self).__name__}")
        architectures = self.pipeline_model_mapping[task]
        for architecture in architectures if isinstance(architectures, tuple) else (architectures,):
            with self.subTest(model=architecture.__name__):
                self.run_pipeline_test(task, architecture)

    def run_pipeline_test(self, task, model_architecture):
        checks_class = pipeline_test_mapping[task]["test"]
        config = self.get_pipeline_config(task)
        tokenizer = self.get_pipeline_tokenizer(config)
        if self.is_pipeline_test_to_skip(checks_class.__name__, type(config), model_architecture,
                                         type(tokenizer).__name__, None, None, None):
            self.skipTest(f"{checks_class.__name__} is known to fail for {model_architecture.__name__}")
        core.manual_seed(0)  # the same weights (and samples) on every run
        model = model_architecture(config).to(torch_device).eval()
        if self.is_pipeline_test_to_skip_more(checks_class.__name__, config, model, tokenizer):
            self.skipTest(f"{checks_class.__name__} is known to fail for {model_architecture.__name__}")
        checks = checks_class(self)
        pipe, examples = checks.get_test_pipeline(model, tokenizer)
        checks.run_pipeline_test(pipe, examples)
        self.run_batch_test(checks, pipe, examples)

    def run_batch_test(self, checks, pipe, examples):
        """10 examples streamed in batches of 4 (the last one short): one answer each, the same
        answers as one at a time. Without a pad token there is no batching, and asking for it is
        an error that says so (HF)."""
        chooser = random.Random(0)
        data = [copy.deepcopy(chooser.choice(examples)) for _ in range(10)]
        if pipe.tokenizer.pad_token_id is None:
            with self.assertRaisesRegex(ValueError, "pad_token"):
                list(pipe((copy.deepcopy(item) for item in data), batch_size=4))
            return
        batched = list(pipe((copy.deepcopy(item) for item in data), batch_size=4))
        self.assertEqual(len(batched), 10)
        checks.check_batched(pipe, data, batched)

    # ------------------------------------------------------------------ the tests

    def test_pipeline_model_mapping(self):
        """Every mapped task is one mindnlp's pipeline() serves, with the model class pipeline(task,
        model=<checkpoint>) would load for this config."""
        self.assertTrue(self.pipeline_model_mapping, f"{type(self).__name__} sets no pipeline_model_mapping")
        unsupported = sorted(set(self.pipeline_model_mapping) - set(pipeline_test_mapping))
        self.assertFalse(unsupported, f"{type(self).__name__}.pipeline_model_mapping lists tasks mindnlp's pipeline() "
                                      f"does not support: {unsupported}; supported: {sorted(pipeline_test_mapping)}")
        for task, architectures in self.pipeline_model_mapping.items():
            _, entry = PIPELINE_REGISTRY.check_task(pipeline_test_mapping[task]["test"].task)
            auto_class = getattr(modeling_auto, entry["auto"])
            for architecture in architectures if isinstance(architectures, tuple) else (architectures,):
                loaded = auto_class._model_mapping.get(architecture.config_class)
                self.assertIs(loaded, architecture, f"{task}: {entry['auto']} loads {loaded} for "
                                                    f"{architecture.config_class.__name__}, not {architecture}")

    def test_pipeline_feature_extraction(self):
        self.run_task_tests("feature-extraction")

    def test_pipeline_fill_mask(self):
        self.run_task_tests("fill-mask")

    def test_pipeline_question_answering(self):
        self.run_task_tests("question-answering")

    def test_pipeline_text_classification(self):
        self.run_task_tests("text-classification")

    def test_pipeline_text_generation(self):
        self.run_task_tests("text-generation")

    def test_pipeline_token_classification(self):
        self.run_task_tests("token-classification")

    def test_pipeline_zero_shot(self):
        self.run_task_tests("zero-shot")
