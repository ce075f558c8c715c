# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Draft tokens for assisted decoding, as in HF transformers v5's candidate_generator.py.

Assisted decoding lets something cheap propose the next few tokens and has the model check
them all in one forward pass: the tokens it agrees with are kept, plus one of its own. A
candidate generator makes the proposal; `GenerationMixin._assisted_decoding` checks it.

- `AssistedCandidateGenerator`: a smaller model with the same vocabulary drafts the tokens
  (`generate(..., assistant_model=small_model)`), keeping its own KV cache between drafts.
- `AssistedCandidateGeneratorDifferentTokenizers` (universal assisted decoding, greedy): the
  assistant has another tokenizer; text is re-tokenized each way, and the overlap of the two
  tokenizations is found so that only new tokens are added (`tokenizer=`,
  `assistant_tokenizer=`).
- `UniversalSpeculativeDecodingGenerator` (sampling with another tokenizer): tokens and
  logits are mapped through the vocabularies' shared entries (`AssistantToTargetTranslator`),
  so speculative sampling keeps the model's distribution.
- `PromptLookupCandidateGenerator`: the draft is copied from the prompt, after the latest
  earlier occurrence of the text's last n-gram (`prompt_lookup_num_tokens=`), which pays off
  when the output quotes its input (summaries, code edits, extraction).
- `EarlyExitCandidateGenerator`: the model itself drafts with its first
  `assistant_early_exit` layers (for models trained for it, e.g. LayerSkip).
"""
import copy
import functools
import importlib.util
import weakref

import numpy as np

from ... import core
from ...core import nn
from ...core.nn import functional as F
from .configuration_utils import DEFAULT_GENERATION_PARAMS, GenerationConfig
from .logits_process import LogitsProcessorList, MinLengthLogitsProcessor, SuppressTokensLogitsProcessor

__all__ = [
    "AssistantToTargetTranslator", "AssistantVocabTranslatorCache", "AssistedCandidateGenerator",
    "AssistedCandidateGeneratorDifferentTokenizers", "CandidateGenerator", "EarlyExitCandidateGenerator",
    "PromptLookupCandidateGenerator", "UniversalSpeculativeDecodingGenerator",
]


@functools.lru_cache(maxsize=None)
def is_sklearn_available():
    """Whether scikit-learn can be imported: the assistant's confidence threshold is then
    tuned from an ROC curve, as in HF."""
    return importlib.util.find_spec("sklearn") is not None


class CandidateGenerator:
    """The interface `_assisted_decoding` uses."""

    def get_candidates(self, input_ids, is_first_iteration=False):
        """(input_ids followed by the draft tokens, the draft's processed scores
        (batch, draft length, vocab) or None)."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_candidates")

    def update_candidate_strategy(self, input_ids, scores, num_matches):
        """Learn from how many draft tokens the model accepted (`num_matches`); `scores` are the
        model's processed scores for the draft positions plus one."""
        raise NotImplementedError(f"{type(self).__name__} must implement update_candidate_strategy")


def _prepare_attention_mask(model_kwargs, new_length, is_encoder_decoder=False):
    """Crop the 2-D mask of the growing text in `model_kwargs`, or extend it with ones, to
    `new_length`: `attention_mask`, or an encoder-decoder's `decoder_attention_mask` (its
    `attention_mask` is the encoder's and stays)."""
    key = "decoder_attention_mask" if is_encoder_decoder else "attention_mask"
    mask = model_kwargs.get(key)
    if mask is None:
        return model_kwargs
    difference = new_length - mask.shape[1]
    if difference < 0:
        model_kwargs[key] = mask[:, :difference]
    elif difference > 0:
        model_kwargs[key] = core.cat([mask, mask.new_ones((mask.shape[0], difference))], dim=-1)
    return model_kwargs


def _prepare_token_type_ids(model_kwargs, new_length):
    """Crop token_type_ids to `new_length`, or extend them by repeating the last type."""
    token_type_ids = model_kwargs.get("token_type_ids")
    if token_type_ids is None:
        return model_kwargs
    difference = new_length - token_type_ids.shape[1]
    if difference < 0:
        model_kwargs["token_type_ids"] = token_type_ids[:, :difference]
    elif difference > 0:
        last = token_type_ids[:, -1:].repeat(1, difference)
        model_kwargs["token_type_ids"] = core.cat([token_type_ids, last], dim=-1)
    return model_kwargs


def _common_prefix_length(a, b):
    """How many leading tokens the (1, n) id tensors a and b share."""
    a, b = a[0].tolist(), b[0].tolist()
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class AssistedCandidateGenerator(CandidateGenerator):
    """Drafts with an assistant model, with HF's arguments.

    input_ids, inputs_tensor: HF's arguments (the prompt; the encoder input). The assistant
        drafts from the ids each `get_candidates` call receives; an encoder-decoder assistant
        runs its own encoder once over `inputs_tensor` and drafts decoder ids.
    assistant_model: a smaller model with the model's vocabulary (an encoder-decoder when the
        model is one).
    generation_config: the main generation settings; the assistant decodes with them (greedy
        or sampling, temperature, top-k...) and returns its processed scores, which
        speculative sampling compares with the model's.
    model_kwargs: the main model's inputs; the assistant gets the attention mask and token
        type ids, extended as the text grows.
    logits_processor: extra processors for the assistant's decoding (the caller's own, which
        the main model applies too); the configured ones come from generation_config.

    The assistant's own generation_config decides the draft length: `num_assistant_tokens`
    tokens per draft, adapted after each check when `num_assistant_tokens_schedule` is
    "heuristic" or "heuristic_transient" (two more after a fully accepted draft, one fewer
    otherwise) and fixed when "constant"; a draft also ends early once the assistant's
    probability of its own token drops below `assistant_confidence_threshold` (0 turns
    that off). With scikit-learn installed the threshold is re-tuned from an ROC curve of
    the assistant's confidences against which drafts were accepted, as HF does.
    """

    def __init__(self, input_ids, assistant_model, generation_config, model_kwargs=None, inputs_tensor=None,
                 logits_processor=None):
        self.is_encoder_decoder = bool(getattr(assistant_model.config, "is_encoder_decoder", False))
        if not self.is_encoder_decoder and model_kwargs is not None and "encoder_outputs" in model_kwargs:
            raise ValueError(f"the model is an encoder-decoder and the assistant ({type(assistant_model).__name__}) "
                             "is not: give an encoder-decoder assistant with the same vocabulary")
        self.assistant_model = assistant_model
        assistant_config = copy.deepcopy(assistant_model.generation_config or GenerationConfig())
        assistant_config.update(**DEFAULT_GENERATION_PARAMS, defaults_only=True)
        assistant_config.eos_token_id = generation_config.eos_token_id
        self.assistant_generation_config = assistant_config
        self.num_assistant_tokens = assistant_config.num_assistant_tokens
        self.assistant_confidence_threshold = assistant_config.assistant_confidence_threshold

        device = assistant_model.device
        self.assistant_kwargs = {
            key: value.detach().to(device) for key, value in (model_kwargs or {}).items()
            if key in ("attention_mask", "token_type_ids", "decoder_attention_mask") and isinstance(value, core.Tensor)
        }
        self.input_ids_key = "input_ids"
        if self.is_encoder_decoder:
            if inputs_tensor is None:
                raise ValueError("an encoder-decoder assistant needs `inputs_tensor`, the encoder's input")
            self.input_ids_key = "decoder_input_ids"
            self.assistant_kwargs = assistant_model._prepare_encoder_decoder_kwargs_for_generation(
                inputs_tensor.to(device), self.assistant_kwargs, assistant_model.main_input_name, GenerationConfig())
        self.logits_processor = logits_processor if logits_processor is not None else LogitsProcessorList()
        for processor in self.logits_processor:
            if isinstance(processor, MinLengthLogitsProcessor):
                raise ValueError(
                    "Passing `MinLengthLogitsProcessor` when using `assisted_generation is disabled. "
                    "Please pass in `min_length` into `.generate()` instead"
                )

        config = copy.deepcopy(generation_config)
        self.main_model_min_length = config.min_length or 0
        for name in ("max_new_tokens", "min_new_tokens", "prompt_lookup_num_tokens", "assistant_early_exit",
                     "watermarking_config"):
            setattr(config, name, None)
        config.min_length = 0
        config.num_beams = 1
        config.num_return_sequences = 1
        config.return_dict_in_generate = True
        config.output_scores = True
        config.output_logits = False
        config.output_attentions = False
        config.output_hidden_states = False
        config.cache_implementation = None
        config.is_assistant = True
        config.assistant_confidence_threshold = self.assistant_confidence_threshold
        self.generation_config = config

        if self._tunes_confidence_threshold():
            self.probs = []
            self.matches = []

    def _tunes_confidence_threshold(self):
        return (is_sklearn_available() and bool(self.assistant_generation_config.assistant_confidence_threshold)
                and type(self) is AssistedCandidateGenerator)

    def get_candidates(self, input_ids, is_first_iteration=False):
        input_ids = input_ids.to(self.assistant_model.device)
        min_new_tokens, max_new_tokens = self._calculate_new_tokens(input_ids)
        if max_new_tokens <= 0:
            return input_ids, None
        self._update_past_and_masks(input_ids)
        return self._generate_candidates(self._prepare_generation_args(input_ids, min_new_tokens, max_new_tokens))

    def update_candidate_strategy(self, input_ids, scores, num_matches):
        num_matches = int(num_matches)
        if self.assistant_generation_config.num_assistant_tokens_schedule in ("heuristic", "heuristic_transient"):
            # scores hold the draft's positions plus the model's own token.
            if num_matches == len(scores[0]) - 1:
                self.num_assistant_tokens += 2.0
            else:
                self.num_assistant_tokens = max(1.0, self.num_assistant_tokens - 1.0)
        if self._tunes_confidence_threshold():
            self._tune_confidence_threshold(num_matches)

    def _tune_confidence_threshold(self, num_matches):
        """Pick the threshold minimising false positives + 3 x false negatives on the ROC curve of
        the assistant's confidences (one per drafted token) against acceptance."""
        from sklearn.metrics import roc_curve

        self.matches.extend([1] * num_matches)
        if len(self.probs) > len(self.matches):
            self.matches.append(0)
        excess_length = len(self.probs) - len(self.matches)
        if excess_length > 0:
            del self.probs[-excess_length:]
        if len(self.probs) > 5 and {0, 1}.issubset(self.matches):
            fpr, tpr, thresholds = roc_curve(self.matches, self.probs)
            costs = fpr + 3 * (1 - tpr)
            self.assistant_generation_config.assistant_confidence_threshold = float(thresholds[np.argmin(costs)])

    def _calculate_new_tokens(self, input_ids):
        """(min, max) new tokens for the next draft: the model adds a token of its own after it,
        so the draft stays one short of max_length."""
        length = input_ids.shape[-1]
        max_new_tokens = min(int(self.num_assistant_tokens), self.generation_config.max_length - length - 1)
        min_new_tokens = max(min(max_new_tokens, self.main_model_min_length - length), 0)
        return min_new_tokens, max_new_tokens

    def _update_past_and_masks(self, input_ids, remove_from_pkv=0, num_added_tokens=1):
        """Forget the rejected part of the last draft (the cache keeps all but the newest
        `num_added_tokens` tokens of input_ids, less `remove_from_pkv` re-tokenized ones) and
        fit the mask to the new length."""
        cache = self.assistant_kwargs.get("past_key_values")
        if cache is not None:
            cache.crop(input_ids.shape[-1] - remove_from_pkv - num_added_tokens)
        self.assistant_kwargs = _prepare_attention_mask(self.assistant_kwargs, input_ids.shape[-1],
                                                        self.is_encoder_decoder)
        self.assistant_kwargs = _prepare_token_type_ids(self.assistant_kwargs, input_ids.shape[-1])
        return cache is not None

    def _prepare_generation_args(self, input_ids, min_new_tokens, max_new_tokens):
        config = copy.copy(self.generation_config)
        length = input_ids.shape[-1]
        config.max_length, config.min_length = length + max_new_tokens, length + min_new_tokens
        config.assistant_confidence_threshold = self.assistant_generation_config.assistant_confidence_threshold
        # The assistant's cache is cropped after every draft: a sliding-window layer could not be.
        config.cache_implementation = None if self.assistant_kwargs.get("past_key_values") is not None \
            else "dynamic_full"
        args = {self.input_ids_key: input_ids, "generation_config": config, "logits_processor": self.logits_processor}
        args.update(self.assistant_kwargs)
        return args

    def _generate_candidates(self, generation_args):
        """Run the assistant; keep its cache and (when tuning the threshold) its confidences."""
        assistant_output = self.assistant_model.generate(**generation_args)
        self.assistant_kwargs["past_key_values"] = assistant_output.past_key_values
        if self._tunes_confidence_threshold():
            scores = F.softmax(core.cat(list(assistant_output.scores), dim=0), dim=-1)
            ids = assistant_output.sequences[-1, -len(assistant_output.scores):]
            self.probs.extend(scores[core.arange(ids.shape[0], device=ids.device), ids].tolist())
        return assistant_output.sequences, core.stack(list(assistant_output.scores), dim=1)


class AssistedCandidateGeneratorDifferentTokenizers(AssistedCandidateGenerator):
    """Universal assisted decoding (greedy): the assistant has its own tokenizer.

    The model's text is decoded and re-encoded with the assistant's tokenizer, the assistant
    drafts, and its draft is decoded and re-encoded with the model's. Re-tokenizing a window
    of the last `target_lookbehind` (model) / `assistant_lookbehind` (assistant) tokens
    and aligning it with what is already known (the longest run of equal tokens, see
    `_get_tokens_diag`) tells which tokens are new and which earlier ones tokenize
    differently now. The draft has no scores: the model checks it token by token.
    """

    def __init__(self, input_ids, assistant_model, target_tokenizer, assistant_tokenizer, generation_config,
                 model_kwargs=None, inputs_tensor=None, logits_processor=None):
        super().__init__(input_ids, assistant_model, generation_config, model_kwargs, inputs_tensor, logits_processor)
        self.target_tokenizer = target_tokenizer
        self.assistant_tokenizer = assistant_tokenizer
        self.prev_target_ids_len = None
        self.prev_assistant_ids = None
        self.target_lookbehind = self.assistant_generation_config.target_lookbehind
        self.assistant_lookbehind = self.assistant_generation_config.assistant_lookbehind

    @staticmethod
    def _get_longest_diag_dict(input_matrix, nonzero_idx):
        """{(row, col): length} of the run of non-zero entries along the diagonal from each
        non-zero position in `nonzero_idx` (row-major order), skipping positions that lie
        inside a run already counted."""
        matrix = np.asarray(input_matrix.tolist() if isinstance(input_matrix, core.Tensor) else input_matrix)
        rows, cols = matrix.shape
        visited = set()
        diags = {}
        for idx in np.asarray(nonzero_idx.tolist() if isinstance(nonzero_idx, core.Tensor) else nonzero_idx):
            row, col = int(idx[0]), int(idx[1])
            if (row, col) in visited:
                continue
            visited.add((row, col))
            length = 1
            r, c = row + 1, col + 1
            while r < rows and c < cols:
                visited.add((r, c))
                if matrix[r, c] != 1:
                    break
                length += 1
                r, c = r + 1, c + 1
            diags[(row, col)] = length
        return diags

    @staticmethod
    def _get_longest_diag_index(input_matrix):
        """((row, col) where the longest diagonal run of ones starts (the first such), its length)."""
        matrix = np.asarray(input_matrix.tolist() if isinstance(input_matrix, core.Tensor) else input_matrix)
        diags = AssistedCandidateGeneratorDifferentTokenizers._get_longest_diag_dict(
            matrix, np.argwhere(matrix != 0))
        starts, lengths = list(diags.keys()), list(diags.values())
        best = int(np.argmax(lengths))
        return starts[best], lengths[best]

    @staticmethod
    def _get_tokens_diag(prompt, prompt_plus_new_tokens):
        """Align `prompt` (1, P) with `prompt_plus_new_tokens` (1, N): a re-tokenization of the
        prompt's end followed by new tokens. Returns (how many of the prompt's last tokens the
        new tokenization replaces, the new tokens only, the replacements), the latter two as
        slices of `prompt_plus_new_tokens`; (None, None, None) when they share no token."""
        old = np.asarray(prompt.tolist() if isinstance(prompt, core.Tensor) else prompt)
        new = np.asarray(prompt_plus_new_tokens.tolist() if isinstance(prompt_plus_new_tokens, core.Tensor)
                         else prompt_plus_new_tokens)
        compare_mat = (old == new.T).astype(np.int64)     # [i, j]: new token i equals old token j
        if not compare_mat.any():
            return None, None, None
        (row, col), length = AssistedCandidateGeneratorDifferentTokenizers._get_longest_diag_index(compare_mat)
        new_token_start_index = row + length
        discrepancy_length = int(old.shape[1] - (col + length))
        new_tokens_only = prompt_plus_new_tokens[:, new_token_start_index + discrepancy_length:]
        discrepancy_only = prompt_plus_new_tokens[:, new_token_start_index:new_token_start_index + discrepancy_length]
        return discrepancy_length, new_tokens_only, discrepancy_only

    def _update_past_and_masks(self, input_ids, remove_from_pkv=0, num_added_tokens=1):
        # The model's mask and token types do not fit the assistant's tokens: the assistant runs
        # unpadded (assisted decoding has a batch of one).
        self.assistant_kwargs.pop("attention_mask", None)
        self.assistant_kwargs.pop("token_type_ids", None)
        return super()._update_past_and_masks(input_ids, remove_from_pkv, num_added_tokens)

    def convert_source_tokens_to_target_tokens(self, input_ids, source_tokenizer, destination_tokenizer):
        """Token ids (1, L) of one tokenizer → the other's, through the decoded text."""
        text = source_tokenizer.decode(input_ids[0].tolist(), skip_special_tokens=True,
                                       clean_up_tokenization_spaces=True)
        dest_ids = destination_tokenizer(text, add_special_tokens=True)["input_ids"]
        return core.tensor([list(dest_ids)], dtype=core.int64, device=input_ids.device)

    def get_candidates(self, input_ids, is_first_iteration=False):
        max_new_tokens = int(self.num_assistant_tokens)
        if max_new_tokens == 0:
            return input_ids, None
        input_ids = input_ids.to(self.assistant_model.device)
        previous = self.prev_assistant_ids
        assistant_input_ids, _ = self._prepare_assistant_input_ids(input_ids)
        self.prev_assistant_ids = assistant_input_ids
        min_new_tokens = max(min(max_new_tokens, self.main_model_min_length - assistant_input_ids.shape[-1]), 0)
        # The assistant's cache stays valid for the tokens its last input and this one share
        # (re-tokenization can change earlier tokens, and the last draft may be rejected).
        kept = _common_prefix_length(previous, assistant_input_ids) if previous is not None else 0
        self._update_past_and_masks(assistant_input_ids, num_added_tokens=max(1, assistant_input_ids.shape[-1] - kept))
        generation_args = self._prepare_generation_args(assistant_input_ids, min_new_tokens, max_new_tokens)
        assistant_output = self.assistant_model.generate(**generation_args)
        new_target_ids = self._process_assistant_outputs(input_ids, assistant_output.sequences)
        self.prev_target_ids_len = input_ids.shape[1]
        self.assistant_kwargs["past_key_values"] = assistant_output.past_key_values
        self.prev_assistant_ids = assistant_output.sequences
        if self.prev_target_ids_len >= new_target_ids.shape[1]:
            return input_ids, None
        return new_target_ids, None

    def _prepare_assistant_input_ids(self, input_ids):
        """The text so far in assistant tokens and how many cached assistant tokens to drop."""
        convert = {"source_tokenizer": self.target_tokenizer, "destination_tokenizer": self.assistant_tokenizer}
        remove_from_pkv = 0
        if self.prev_assistant_ids is not None and self.prev_target_ids_len > self.target_lookbehind:
            # Re-tokenize a window that ends with the model's newest tokens.
            start_index_in_target_window = self.prev_target_ids_len - self.target_lookbehind
            new_assistant_ids = self.convert_source_tokens_to_target_tokens(
                input_ids[:, start_index_in_target_window:], **convert)
            prompt_use = self.prev_assistant_ids[:, -new_assistant_ids.shape[1]:]
            discrepancy_length, new_tokens_only, discrepancy_only = self._get_tokens_diag(
                prompt_use, new_assistant_ids)
            assistant_input_ids = self.prev_assistant_ids
            if new_tokens_only is not None:
                if discrepancy_length > 0 and discrepancy_only.shape[1] > 0:
                    if discrepancy_length == discrepancy_only.shape[1]:
                        assistant_input_ids = assistant_input_ids.clone()
                        assistant_input_ids[:, -discrepancy_length:] = discrepancy_only
                    elif discrepancy_length > discrepancy_only.shape[1]:
                        surplus = discrepancy_length - discrepancy_only.shape[1]
                        assistant_input_ids = assistant_input_ids[:, :-surplus].clone()
                        assistant_input_ids[:, -discrepancy_only.shape[1]:] = discrepancy_only
                    remove_from_pkv = discrepancy_length
                if new_tokens_only.shape[1] > 0:
                    assistant_input_ids = core.cat([assistant_input_ids, new_tokens_only], dim=-1)
            else:
                # No token in common with the window: append its tokens as they are.
                assistant_input_ids = core.cat([assistant_input_ids, new_assistant_ids], dim=-1)
        else:
            assistant_input_ids = self.convert_source_tokens_to_target_tokens(input_ids, **convert)
            self.prev_target_ids_len = input_ids.shape[1]
        return assistant_input_ids, remove_from_pkv

    def _process_assistant_outputs(self, input_ids, assistant_sequences):
        """The model's tokens followed by the draft re-tokenized into the model's vocabulary."""
        start_assistant_look_index = self.prev_assistant_ids.shape[1] - self.assistant_lookbehind
        new_target_ids_from_window = self.convert_source_tokens_to_target_tokens(
            assistant_sequences[:, max(start_assistant_look_index, 0):], source_tokenizer=self.assistant_tokenizer,
            destination_tokenizer=self.target_tokenizer)
        target_prompt_use = input_ids[:, -new_target_ids_from_window.shape[1]:]
        _, target_new_tokens_only, _ = self._get_tokens_diag(target_prompt_use, new_target_ids_from_window)
        new_target_ids = input_ids
        if target_new_tokens_only is not None:
            if target_new_tokens_only.shape[1] > 0:
                new_target_ids = core.cat([new_target_ids, target_new_tokens_only], dim=-1)
        else:
            new_target_ids = core.cat([new_target_ids, new_target_ids_from_window], dim=-1)
        return new_target_ids[:, :self.generation_config.max_length]


class _PruneReindexingLMHead(nn.Module):
    """The assistant's LM head restricted to the tokens both vocabularies share: logits come
    out indexed by position in `assistant_overlap_token_ids`."""

    def __init__(self, original_lm_head, assistant_overlap_token_ids):
        super().__init__()
        weight = original_lm_head.weight.detach().index_select(0, assistant_overlap_token_ids)
        bias = getattr(original_lm_head, "bias", None)
        self.pruned_lm_head = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None,
                                        dtype=weight.dtype)
        with core.no_grad():
            self.pruned_lm_head.weight.copy_(weight)
            if bias is not None:
                self.pruned_lm_head.bias.copy_(bias.detach().index_select(0, assistant_overlap_token_ids))

    def forward(self, hidden_states):
        return self.pruned_lm_head(hidden_states)


class _MapInputEmbedding(nn.Module):
    """The assistant's input embedding for a pruned head: after the first forward of a draft,
    the newest input id is a position in `assistant_overlap_token_ids` (what the pruned head
    produced), mapped back to the assistant's vocabulary before the lookup."""

    def __init__(self, original_embedding, assistant_overlap_token_ids):
        super().__init__()
        self.original_embedding = original_embedding
        self.weight = original_embedding.weight
        self.assistant_overlap_token_ids = assistant_overlap_token_ids
        self.map = False

    def forward(self, input_ids):
        if self.map:
            my_input_ids = self.assistant_overlap_token_ids[input_ids[0, -1]].reshape(1, 1)
        else:
            self.map = True
            my_input_ids = input_ids
        return self.original_embedding(my_input_ids)


class AssistantToTargetTranslator:
    """Token ids and logits from the assistant's vocabulary to the model's (Timor et al. 2025,
    "Lossless Speculative Decoding Algorithms for Heterogeneous Vocabularies").

    Tokens are matched by their vocabulary strings (with the assistant's word-start marker
    rewritten to the model's when they differ, e.g. "Ġ" vs "▁"). Assistant tokens the model
    lacks map to SUPPRESS_TOKEN_ID and are forbidden in the assistant's drafts, either by a
    SuppressTokensLogitsProcessor or, with `assistant_prune_lm_head`, by cutting them out of
    the assistant's LM head (which also makes each draft step cheaper). Pruning replaces the
    assistant model's LM head and input embedding in place, as in HF: that model then
    drafts in the shared vocabulary only.
    """

    FILTER_VALUE = -float("Inf")
    SUPPRESS_TOKEN_ID = -1

    def __init__(self, target_tokenizer, assistant_tokenizer, target_vocab_size, assistant_model=None,
                 assistant_prune_lm_head=False):
        self._target_tokenizer = target_tokenizer
        self._assistant_tokenizer = assistant_tokenizer
        self._assistant_model_device = assistant_model.device if assistant_model is not None else "cpu"
        self.target_vocab_size = target_vocab_size
        self._assistant_to_target_input_ids, self.target_to_assistant_input_ids = \
            self._get_assistant_to_target_input_ids()
        self._suppress_input_ids = self._get_suppress_input_ids()
        self.logits_processors = None
        self.assistant_prune_lm_head = assistant_prune_lm_head and assistant_model is not None
        self._pruned_model = None
        if len(self._suppress_input_ids) > 0:
            if self.assistant_prune_lm_head:
                self._pruned_model = weakref.ref(assistant_model)
                self.assistant_overlap_token_ids = core.tensor(
                    list(self.target_to_assistant_input_ids.values()), dtype=core.int64,
                    device=self._assistant_model_device)
                assistant_model.set_output_embeddings(
                    _PruneReindexingLMHead(assistant_model.get_output_embeddings(), self.assistant_overlap_token_ids))
                self.map_input_embeddings = _MapInputEmbedding(assistant_model.get_input_embeddings(),
                                                               self.assistant_overlap_token_ids)
                assistant_model.set_input_embeddings(self.map_input_embeddings)
            else:
                self.logits_processors = LogitsProcessorList(
                    [SuppressTokensLogitsProcessor(self._suppress_input_ids.tolist(), self._assistant_model_device)])

    def serves(self, assistant_model):
        """Whether this translator fits `assistant_model`: one that pruned a model's head works
        with that model only."""
        return self._pruned_model is None or self._pruned_model() is assistant_model

    def unmap_input_ids(self):
        """Let the next forward take assistant-vocabulary ids as they are (the draft's first
        forward, over the re-tokenized text)."""
        if self.assistant_prune_lm_head:
            self.map_input_embeddings.map = False

    def _get_assistant_to_target_input_ids(self):
        target_vocab = self._target_tokenizer.get_vocab()
        assistant_vocab = self._assistant_tokenizer.get_vocab()
        target_space_ids = self._target_tokenizer(" ", add_special_tokens=False)["input_ids"]
        if len(target_space_ids) > 0:
            target_space_sign = self._target_tokenizer.convert_ids_to_tokens(target_space_ids)[0][0]
            assistant_space_ids = self._assistant_tokenizer(" ", add_special_tokens=False)["input_ids"]
            if len(assistant_space_ids) > 0:
                assistant_space_sign = self._assistant_tokenizer.convert_ids_to_tokens(assistant_space_ids)[0][0]
                if target_space_sign != assistant_space_sign:
                    assistant_vocab = {
                        (tok.replace(assistant_space_sign, target_space_sign, 1)
                         if tok.startswith(assistant_space_sign) else tok): idx
                        for tok, idx in assistant_vocab.items()
                    }
        mapping = [self.SUPPRESS_TOKEN_ID] * (max(assistant_vocab.values()) + 1)
        target_to_assistant_input_ids = {}
        for tok, assistant_id in assistant_vocab.items():
            target_id = target_vocab.get(tok)
            if target_id is not None:
                mapping[assistant_id] = target_id
                target_to_assistant_input_ids[target_id] = assistant_id
        return (core.tensor(mapping, dtype=core.int64, device=self._assistant_model_device),
                target_to_assistant_input_ids)

    def _get_suppress_input_ids(self):
        """The assistant ids with no counterpart in the model's vocabulary (1-D tensor)."""
        return core.where(self._assistant_to_target_input_ids == self.SUPPRESS_TOKEN_ID)[0]

    def get_target_ids(self, assistant_input_ids, target_input_ids, assistant_candidate_ids):
        """The model's ids followed by the draft's new tokens in the model's vocabulary."""
        num_new_tokens = assistant_candidate_ids.shape[1] - assistant_input_ids.shape[1]
        if num_new_tokens == 0:
            return target_input_ids
        last_candidate_ids = assistant_candidate_ids[0, -num_new_tokens:]
        if self.assistant_prune_lm_head:
            last_candidate_ids = self.assistant_overlap_token_ids[last_candidate_ids]
        transformed_slice = self._assistant_to_target_input_ids[last_candidate_ids]
        return core.cat([target_input_ids, transformed_slice.unsqueeze(0).to(target_input_ids.dtype)], dim=1)

    def get_target_logits(self, assistant_logits):
        """Assistant logits (..., assistant vocab or pruned size) → (..., target_vocab_size), with
        FILTER_VALUE for model tokens the assistant lacks."""
        target_logits = core.full((*assistant_logits.shape[:-1], self.target_vocab_size), self.FILTER_VALUE,
                                  dtype=assistant_logits.dtype, device=assistant_logits.device)
        supported = self._assistant_to_target_input_ids != self.SUPPRESS_TOKEN_ID
        target_ids = self._assistant_to_target_input_ids[supported]
        if self.assistant_prune_lm_head:
            target_logits[..., target_ids] = assistant_logits
        else:
            valid = assistant_logits[..., :self._assistant_to_target_input_ids.shape[0]]
            target_logits[..., target_ids] = valid[..., supported]
        return target_logits


class AssistantVocabTranslatorCache:
    """One `AssistantToTargetTranslator` per (target tokenizer, assistant tokenizer) pair, held
    weakly: it goes when either tokenizer does."""

    _cache = weakref.WeakKeyDictionary()

    @classmethod
    def get_translator(cls, target_tokenizer, assistant_tokenizer, target_vocab_size, assistant_model=None,
                       assistant_prune_lm_head=False):
        assistant_dict = cls._cache.get(target_tokenizer)
        if assistant_dict is None:
            assistant_dict = weakref.WeakKeyDictionary()
            cls._cache[target_tokenizer] = assistant_dict
        mapping = assistant_dict.get(assistant_tokenizer)
        if mapping is None or not mapping.serves(assistant_model):
            mapping = AssistantToTargetTranslator(target_tokenizer, assistant_tokenizer, target_vocab_size,
                                                  assistant_model, assistant_prune_lm_head)
            assistant_dict[assistant_tokenizer] = mapping
        return mapping

    @classmethod
    def cleanup(cls):
        """Drop entries whose tokenizers are gone (weak dictionaries mostly do this themselves)."""
        for key in [key for key in cls._cache if key is None]:
            del cls._cache[key]
        for assistant_dict in cls._cache.values():
            for key in [key for key in assistant_dict if key is None]:
                del assistant_dict[key]


class UniversalSpeculativeDecodingGenerator(AssistedCandidateGeneratorDifferentTokenizers):
    """Speculative sampling with an assistant of another vocabulary: the assistant drafts among
    the tokens both vocabularies share, and its draft and logits are mapped to the model's
    vocabulary by `atm_translator`, so the kept tokens follow the model's distribution."""

    def __init__(self, input_ids, assistant_model, target_tokenizer, assistant_tokenizer, generation_config,
                 model_kwargs=None, atm_translator=None, inputs_tensor=None, logits_processor=None):
        self._atm_translator = atm_translator
        super().__init__(input_ids, assistant_model, target_tokenizer, assistant_tokenizer, generation_config,
                         model_kwargs, inputs_tensor, logits_processor)
        self._target_seq_len_with_candidates = 0
        self._prev_assistant_ids = None
        if atm_translator.assistant_prune_lm_head:
            # Logits of a pruned head are indexed by shared-token position, which a repetition
            # penalty (indexed by token id) would misread.
            self.generation_config.repetition_penalty = None

    def get_candidates(self, input_ids, is_first_iteration=False):
        target_input_ids = input_ids.to(self.assistant_model.device)
        assistant_input_ids, num_added_tokens = self._prepare_assistant_input_ids(target_input_ids)
        min_new_tokens, max_new_tokens = self._calculate_new_tokens(target_input_ids)
        if max_new_tokens <= 0:
            return input_ids, None
        self._update_past_and_masks(assistant_input_ids, num_added_tokens=num_added_tokens)
        generation_args = self._prepare_generation_args(assistant_input_ids, min_new_tokens, max_new_tokens)
        if self._atm_translator.logits_processors is not None:
            generation_args["logits_processor"] = self._atm_translator.logits_processors
        self._prev_assistant_ids, assistant_candidate_logits = self._generate_candidates(generation_args)
        target_candidate_ids = self._atm_translator.get_target_ids(
            assistant_input_ids, target_input_ids, self._prev_assistant_ids)
        self._target_seq_len_with_candidates = target_candidate_ids.shape[-1]
        return target_candidate_ids, self._atm_translator.get_target_logits(assistant_candidate_logits)

    def _prepare_assistant_input_ids(self, target_input_ids):
        """(the assistant's ids for the text so far, how many of them are new): only the model's
        newest token is converted, directly through the vocabulary map when it has an entry."""
        target_seq_len = target_input_ids.shape[-1]
        new_token_count = target_seq_len if self._target_seq_len_with_candidates == 0 else 1
        target_new_ids = target_input_ids[:, -new_token_count:]
        assistant_new_ids = None
        if self._target_seq_len_with_candidates > 0:
            assistant_new_ids = self._atm_translator.target_to_assistant_input_ids.get(int(target_new_ids[0, 0]))
        if assistant_new_ids is None:
            text = self.target_tokenizer.decode(target_new_ids[0].tolist(), skip_special_tokens=True,
                                                clean_up_tokenization_spaces=True)
            ids = self.assistant_tokenizer(text, add_special_tokens=False)["input_ids"]
            assistant_new_ids = core.tensor([list(ids)], dtype=core.int64, device=self.assistant_model.device)
        else:
            assistant_new_ids = core.tensor([[assistant_new_ids]], dtype=core.int64,
                                            device=self.assistant_model.device)
        if self._prev_assistant_ids is None:
            assistant_input_ids = assistant_new_ids
        else:
            # Drop the rejected part of the last draft (and the token the model replaced).
            tokens_to_remove = self._target_seq_len_with_candidates + 1 - target_seq_len
            if tokens_to_remove > 0:
                self._prev_assistant_ids = self._prev_assistant_ids[:, :-tokens_to_remove]
            assistant_input_ids = core.cat([self._prev_assistant_ids, assistant_new_ids], dim=-1)
        self._atm_translator.unmap_input_ids()
        return assistant_input_ids.long(), assistant_new_ids.shape[1]


class PromptLookupCandidateGenerator(CandidateGenerator):
    """Drafts up to `num_output_tokens` tokens copied from earlier in the text: the tokens
    that followed the first earlier occurrence of its last n-gram, trying n from
    `max_matching_ngram_size` down to 1. Draft tokens the logits processors forbid (e.g. EOS
    before `min_new_tokens`) end the draft there, and so does an `eos_token_id`: a copied
    EOS the model accepted would end generation in the middle of a draft."""

    def __init__(self, eos_token_id=None, num_output_tokens=10, max_matching_ngram_size=None, max_length=20,
                 logits_processor=None, vocab_size=None):
        if num_output_tokens <= 0:
            raise ValueError(f"prompt_lookup_num_tokens must be positive, got {num_output_tokens}")
        self.num_output_tokens = num_output_tokens
        self.max_matching_ngram_size = max_matching_ngram_size or 2
        if self.max_matching_ngram_size <= 0:
            raise ValueError(f"max_matching_ngram_size must be positive, got {self.max_matching_ngram_size}")
        self.max_length = max_length
        self.eos_token_id = eos_token_id
        self.logits_processor = logits_processor
        self.vocab_size = vocab_size

    def get_candidates(self, input_ids, is_first_iteration=False):
        length = input_ids.shape[1]
        if self.max_length <= length + 1:
            return input_ids, None
        row = input_ids[0]
        for ngram_size in range(min(self.max_matching_ngram_size, length - 1), 0, -1):
            windows = row.unfold(0, ngram_size, 1)[:-1]            # every earlier n-gram
            matches = (windows == row[-ngram_size:]).all(dim=1).nonzero().reshape(-1).tolist()
            for start in matches:
                begin = start + ngram_size
                # The model adds a token of its own after the draft: stay within max_length.
                end = min(begin + self.num_output_tokens, length, begin + self.max_length - length - 1)
                if begin < end:
                    draft = self._allowed_prefix(input_ids, row[begin:end])
                    if draft.shape[0] == 0:
                        continue
                    draft = self._before_eos(draft)
                    if draft.shape[0] == 0:
                        return input_ids, None
                    return core.cat([input_ids, draft[None].to(input_ids.dtype)], dim=1), None
        return input_ids, None

    def _allowed_prefix(self, input_ids, draft):
        """The draft up to the first token the logits processors would forbid at its place."""
        if self.logits_processor is None or len(self.logits_processor) == 0 or self.vocab_size is None:
            return draft
        sequence = input_ids
        for i, token in enumerate(draft.tolist()):
            scores = self.logits_processor(sequence, core.ones((1, self.vocab_size), device=input_ids.device))
            value = scores[0, token].item()
            if value == float("-inf") or value == core.finfo(scores.dtype).min:
                return draft[:i]
            sequence = core.cat([sequence, draft[i:i + 1][None].to(sequence.dtype)], dim=1)
        return draft

    def _before_eos(self, draft):
        if self.eos_token_id is None:
            return draft
        eos = self.eos_token_id if isinstance(self.eos_token_id, core.Tensor) else core.tensor(self.eos_token_id)
        hits = core.isin(draft, eos.reshape(-1).to(draft.device)).nonzero().reshape(-1)
        return draft[:int(hits[0])] if hits.shape[0] > 0 else draft

    def update_candidate_strategy(self, input_ids, scores, num_matches):
        """The prompt does not change with the model's answers: nothing to learn."""


class EarlyExitCandidateGenerator(AssistedCandidateGenerator):
    """Self-speculation: the model drafts with only its first `assistant_early_exit` layers
    (its LM head applied there), for models trained to make that work (LayerSkip)."""

    def __init__(self, input_ids, assistant_model, generation_config, model_kwargs=None, inputs_tensor=None,
                 logits_processor=None):
        super().__init__(input_ids, assistant_model, generation_config, model_kwargs, inputs_tensor,
                         logits_processor)
        self.assistant_early_exit = generation_config.assistant_early_exit

    def get_candidates(self, input_ids, is_first_iteration=False):
        base_model = getattr(self.assistant_model, self.assistant_model.base_model_prefix)
        original_num_hidden_layers = base_model.config.num_hidden_layers
        base_model.config.num_hidden_layers = self.assistant_early_exit
        try:
            return super().get_candidates(input_ids, is_first_iteration)
        finally:
            base_model.config.num_hidden_layers = original_num_hidden_layers
