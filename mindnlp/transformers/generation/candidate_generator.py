"""Draft tokens for assisted decoding, as in HF transformers v5's candidate_generator.py.

Assisted decoding lets something cheap propose the next few tokens and has the model check
them all in one forward pass: the tokens it agrees with are kept, plus one of its own. A
candidate generator makes the proposal; `GenerationMixin._assisted_decoding` checks it.

- `AssistedCandidateGenerator`: a smaller model with the same vocabulary drafts the tokens
  (`generate(..., assistant_model=small_model)`), keeping its own KV cache between drafts.
- `PromptLookupCandidateGenerator`: the draft is copied from the prompt, after the latest
  earlier occurrence of the text's last n-gram (`prompt_lookup_num_tokens=`), which pays off
  when the output quotes its input (summaries, code edits, extraction).
"""
import copy

from ... import core
from .configuration_utils import DEFAULT_GENERATION_PARAMS


class CandidateGenerator:
    """The interface `_assisted_decoding` uses."""

    def get_candidates(self, input_ids):
        """(input_ids followed by the draft tokens, the draft's processed scores
        (batch, draft length, vocab) or None)."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_candidates")

    def update_candidate_strategy(self, input_ids, scores, num_matches):
        """Learn from how many draft tokens the model accepted (`num_matches`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement update_candidate_strategy")


class AssistedCandidateGenerator(CandidateGenerator):
    """Drafts with an assistant model: `num_assistant_tokens` tokens per draft, taken from the
    assistant's generation config, adapted after each check when its
    `num_assistant_tokens_schedule` is "heuristic" (two more after a fully accepted draft,
    one fewer otherwise) and fixed when "constant".

    The assistant decodes with the main settings (greedy or sampling, temperature, top-k...)
    and returns its processed scores, which speculative sampling compares with the model's.
    """

    def __init__(self, assistant_model, generation_config):
        self.assistant_model = assistant_model
        assistant_config = assistant_model.generation_config
        tokens = getattr(assistant_config, "num_assistant_tokens", None)
        schedule = getattr(assistant_config, "num_assistant_tokens_schedule", None)
        defaults = DEFAULT_GENERATION_PARAMS
        self.num_assistant_tokens = float(tokens if tokens is not None else defaults["num_assistant_tokens"])
        self.schedule = schedule if schedule is not None else defaults["num_assistant_tokens_schedule"]
        self.max_length = generation_config.max_length
        self.main_min_length = generation_config.min_length or 0
        config = copy.deepcopy(generation_config)
        for name in ("max_new_tokens", "min_new_tokens", "prompt_lookup_num_tokens"):
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
        self.generation_config = config
        self.past_key_values = None

    def get_candidates(self, input_ids):
        length = input_ids.shape[-1]
        # The model adds one token of its own after the draft: stay one short of max_length.
        max_new_tokens = min(int(self.num_assistant_tokens), self.max_length - length - 1)
        if max_new_tokens <= 0:
            return input_ids, None
        min_new_tokens = max(min(max_new_tokens, self.main_min_length - length), 0)
        if self.past_key_values is not None:
            self.past_key_values.crop(length - 1)    # forget the rejected part of the last draft
        config = copy.copy(self.generation_config)
        config.max_length, config.min_length = length + max_new_tokens, length + min_new_tokens
        out = self.assistant_model.generate(input_ids, generation_config=config, past_key_values=self.past_key_values)
        self.past_key_values = out.past_key_values
        return out.sequences, core.stack(list(out.scores), dim=1)

    def update_candidate_strategy(self, input_ids, scores, num_matches):
        if self.schedule in ("heuristic", "heuristic_transient"):
            if num_matches == int(self.num_assistant_tokens):
                self.num_assistant_tokens += 2.0
            else:
                self.num_assistant_tokens = max(1.0, self.num_assistant_tokens - 1.0)


class PromptLookupCandidateGenerator(CandidateGenerator):
    """Drafts up to `num_output_tokens` tokens copied from earlier in the text: the tokens
    that followed the first earlier occurrence of its last n-gram, trying n from
    `max_matching_ngram_size` down to 1. Draft tokens the logits processors forbid (e.g. EOS
    before `min_new_tokens`) end the draft there."""

    def __init__(self, num_output_tokens=10, max_matching_ngram_size=None, max_length=20,
                 logits_processor=None, vocab_size=None):
        if num_output_tokens <= 0:
            raise ValueError(f"prompt_lookup_num_tokens must be positive, got {num_output_tokens}")
        self.num_output_tokens = num_output_tokens
        self.max_matching_ngram_size = max_matching_ngram_size or 2
        if self.max_matching_ngram_size <= 0:
            raise ValueError(f"max_matching_ngram_size must be positive, got {self.max_matching_ngram_size}")
        self.max_length = max_length
        self.logits_processor = logits_processor
        self.vocab_size = vocab_size

    def get_candidates(self, input_ids):
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

    def update_candidate_strategy(self, input_ids, scores, num_matches):
        """The prompt does not change with the model's answers: nothing to learn."""
