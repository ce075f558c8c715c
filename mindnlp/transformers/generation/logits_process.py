# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Logits processors: functions of (input_ids, next-token scores) that reshape the scores
before a token is picked, with Hugging Face's names, arguments and results.

Each processor sees only the last step's scores, shape (batch, vocab), and returns new
scores without modifying its input (HF's Dia processors excepted, which edit in place as
HF's do). "Warpers" (temperature, top-k, top-p, ...) are processors that `generate()`
applies only when sampling.

The watermarking processors at the end mark generated text so that a detector can tell it
was machine-made: `WatermarkLogitsProcessor` (Kirchenbauer et al. 2023, "green" tokens get
a bias) and `SynthIDTextWatermarkLogitsProcessor` (Dathathri et al. 2024, tournament
sampling). Their pseudo-random choices come from torch's CPU stream, reproduced in
torch_cpu_stream, so the marks equal Hugging Face's and either side detects the other's.
"""
import functools
import inspect
import logging
import math

from ... import core
from ...core.nn import functional as F
from . import torch_cpu_stream

logger = logging.getLogger(__name__)

__all__ = [
    "AlternatingCodebooksLogitsProcessor", "BarkEosPrioritizerLogitsProcessor", "ClassifierFreeGuidanceLogitsProcessor",
    "DiaClassifierFreeGuidanceLogitsProcessor", "DiaEOSChannelFilterLogitsProcessor",
    "DiaEOSDelayPatternLogitsProcessor", "EncoderNoRepeatNGramLogitsProcessor",
    "EncoderRepetitionPenaltyLogitsProcessor", "EpsilonLogitsWarper", "EtaLogitsWarper",
    "ExponentialDecayLengthPenalty", "ForcedBOSTokenLogitsProcessor", "ForcedEOSTokenLogitsProcessor",
    "InfNanRemoveLogitsProcessor", "LogitNormalization", "LogitsProcessor", "LogitsProcessorList", "LogitsWarper",
    "MinLengthLogitsProcessor", "MinNewTokensLengthLogitsProcessor", "MinPLogitsWarper", "NoBadWordsLogitsProcessor",
    "NoRepeatNGramLogitsProcessor", "PrefixConstrainedLogitsProcessor", "RepetitionPenaltyLogitsProcessor",
    "SequenceBiasLogitsProcessor", "SuppressTokensAtBeginLogitsProcessor", "SuppressTokensLogitsProcessor",
    "SynthIDTextWatermarkLogitsProcessor", "SynthIDTextWatermarkState", "TemperatureLogitsWarper",
    "TopHLogitsWarper", "TopKLogitsWarper", "TopPLogitsWarper", "TypicalLogitsWarper",
    "UnbatchedClassifierFreeGuidanceLogitsProcessor", "WatermarkLogitsProcessor", "WhisperNoSpeechDetection",
    "WhisperTimeStampLogitsProcessor",
]


def _token_id_tensor(token_ids, device=None):
    """One id, a list of ids or a tensor of ids → a 1-D int64 tensor."""
    if isinstance(token_ids, core.Tensor):
        return token_ids.reshape(-1).long() if device is None else token_ids.reshape(-1).long().to(device)
    if isinstance(token_ids, int):
        token_ids = [token_ids]
    return core.tensor(list(token_ids), dtype=core.int64, device=device)


def _vocab_mask(token_ids, scores, cache):
    """(vocab,) bool: which vocabulary entries are among token_ids.

    Processors ask at every step with the same ids: the mask is kept in the processor's
    `cache` dict, keyed by the ids tensor (and its version) and the vocabulary."""
    key = (id(token_ids), token_ids._version[0], scores.shape[-1], str(scores.device))
    if key not in cache:
        cache.clear()
        vocab = core.arange(scores.shape[-1], device=scores.device)
        cache[key] = core.isin(vocab, token_ids.to(scores.device))
    return cache[key]


def _check_min_tokens_to_keep(min_tokens_to_keep):
    if not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError(f"`min_tokens_to_keep` has to be a positive integer, but is {min_tokens_to_keep}")


class LogitsProcessor:
    """Base class: `processor(input_ids, scores)` returns the processed scores."""

    def __call__(self, input_ids, scores):
        raise NotImplementedError(
            f"{self.__class__} is an abstract class. Only classes inheriting this class can be called."
        )


# Hugging Face merged warpers into processors; the old name is kept for user subclasses.
LogitsWarper = LogitsProcessor


class LogitsProcessorList(list):
    """Applies its processors in order; extra keyword arguments go to processors that take them."""

    def __call__(self, input_ids, scores, **kwargs):
        for processor in self:
            names = _call_parameters(type(processor))
            if len(names) > 2:
                if not all(name in kwargs for name in names[2:]):
                    raise ValueError(
                        f"Make sure that all the required parameters: {list(names)} for "
                        f"{processor.__class__} are passed to the logits processor."
                    )
                scores = processor(input_ids, scores, **kwargs)
            else:
                scores = processor(input_ids, scores)
        return scores

    def set_continuous_batching_context(self, logits_indices, cu_seq_lens_q):
        """Hand continuous-batching metadata (HF's packed layout) to the processors that use it."""
        for processor in self:
            if hasattr(processor, "set_continuous_batching_context"):
                processor.set_continuous_batching_context(logits_indices, cu_seq_lens_q)


@functools.lru_cache(maxsize=256)
def _call_parameters(processor_class):
    """The parameter names of a processor class's __call__ after self: read once per class, as
    they are asked at every decoding step (inspect.signature costs tens of microseconds)."""
    return tuple(inspect.signature(processor_class.__call__).parameters)[1:]


class MinLengthLogitsProcessor(LogitsProcessor):
    """Forbid EOS while the whole sequence (prompt included) is shorter than `min_length`."""

    def __init__(self, min_length, eos_token_id, device="cpu"):
        if not isinstance(min_length, int) or min_length < 0:
            raise ValueError(f"`min_length` has to be a non-negative integer, but is {min_length}")
        self.min_length = min_length
        self.eos_token_id = _token_id_tensor(eos_token_id, device)
        self._masks = {}

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] < self.min_length:
            return core.where(_vocab_mask(self.eos_token_id, scores, self._masks), -math.inf, scores)
        return scores.clone()


class MinNewTokensLengthLogitsProcessor(LogitsProcessor):
    """Forbid EOS until `min_new_tokens` tokens follow the first `prompt_length_to_skip`."""

    def __init__(self, prompt_length_to_skip, min_new_tokens, eos_token_id, device="cpu"):
        for name, value in (("prompt_length_to_skip", prompt_length_to_skip), ("min_new_tokens", min_new_tokens)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"`{name}` has to be a positive integer, but is {value}")
        self.prompt_length_to_skip = prompt_length_to_skip
        self.min_new_tokens = min_new_tokens
        self.eos_token_id = _token_id_tensor(eos_token_id, device)
        self._masks = {}

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] - self.prompt_length_to_skip < self.min_new_tokens:
            return core.where(_vocab_mask(self.eos_token_id, scores, self._masks), -math.inf, scores)
        return scores.clone()


class TemperatureLogitsWarper(LogitsProcessor):
    """Divide the scores by `temperature` (>1 flattens the distribution, <1 sharpens it)."""

    def __init__(self, temperature):
        if not isinstance(temperature, float) or not temperature > 0:
            message = (
                f"`temperature` (={temperature}) has to be a strictly positive float, otherwise your next token "
                "scores will be invalid."
            )
            if isinstance(temperature, float) and temperature == 0.0:
                message += " If you're looking for greedy decoding strategies, set `do_sample=False`."
            raise ValueError(message)
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class RepetitionPenaltyLogitsProcessor(LogitsProcessor):
    """Make tokens already in the sequence less likely: negative scores are multiplied by
    `penalty`, positive ones divided by it (CTRL's rule).

    `prompt_ignore_length` (an int, or a per-row tensor such as each row's left padding)
    excludes that many leading positions from the penalty.

    Scores of shape (batch, positions, vocab) are penalised at each row's last position, in
    place, as HF does; in HF's packed continuous-batching layout (batch 1, the sequences
    one after another, `set_continuous_batching_context`), `input_ids` is 1-D and each
    sequence is penalised at its own logits position.
    """

    def __init__(self, penalty, prompt_ignore_length=None):
        if not isinstance(penalty, float) or not penalty > 0:
            raise ValueError(f"`penalty` has to be a strictly positive float, but is {penalty}")
        if isinstance(prompt_ignore_length, int) and prompt_ignore_length < 0:
            raise ValueError(f"`prompt_ignore_length` has to be a positive integer, but is {prompt_ignore_length}")
        if isinstance(prompt_ignore_length, core.Tensor) and prompt_ignore_length.ndim != 1:
            raise ValueError("`prompt_ignore_length` must be 1D")
        self.penalty = penalty
        self.prompt_ignore_length = prompt_ignore_length
        self.logits_indices = None
        self.cu_seq_lens_q = None

    def set_continuous_batching_context(self, logits_indices, cu_seq_lens_q):
        self.logits_indices = logits_indices
        self.cu_seq_lens_q = cu_seq_lens_q

    def _penalised(self, scores):
        return core.where(scores < 0, scores * self.penalty, scores / self.penalty)

    def _call_3d(self, input_ids, scores):
        if isinstance(self.prompt_ignore_length, int) and self.prompt_ignore_length:
            input_ids = input_ids[..., self.prompt_ignore_length:]
        if self.logits_indices is not None and self.cu_seq_lens_q is not None:
            last_scores = scores[0, self.logits_indices, :]
            lengths = self.cu_seq_lens_q[1:] - self.cu_seq_lens_q[:-1]
            sequence_of_token = core.repeat_interleave(core.arange(lengths.shape[0], device=input_ids.device),
                                                       lengths)
            token_mask = core.zeros_like(last_scores, dtype=core.bool)
            token_mask[sequence_of_token, input_ids] = True
            scores[0, self.logits_indices, :] = core.where(token_mask, self._penalised(last_scores), last_scores)
            return scores
        last_scores = scores[:, -1, :]
        ids = input_ids.unique().unsqueeze(0) if input_ids.ndim == 1 else input_ids
        token_mask = core.zeros_like(last_scores, dtype=core.bool).scatter(1, ids, True)
        scores[:, -1, :] = core.where(token_mask, self._penalised(last_scores), last_scores)
        return scores

    def __call__(self, input_ids, scores):
        if scores.ndim == 3:
            return self._call_3d(input_ids, scores)
        vocab_size = scores.shape[-1]
        if isinstance(self.prompt_ignore_length, int):
            input_ids = input_ids[:, self.prompt_ignore_length:]
        elif isinstance(self.prompt_ignore_length, core.Tensor):
            if input_ids.shape[0] != self.prompt_ignore_length.shape[0]:
                raise ValueError("Incompatible `prompt_ignore_length` batch size")
            positions = core.arange(input_ids.shape[1], device=input_ids.device)
            ignored = positions[None, :] < self.prompt_ignore_length.to(input_ids.device)[:, None]
            input_ids = input_ids.masked_fill(ignored, vocab_size)
        if input_ids.ndim == 1:
            input_ids = input_ids.unsqueeze(1)
        # Ids beyond the output vocabulary (or ignored) go to one extra column that is dropped.
        input_ids = input_ids.clamp(max=vocab_size)
        padded = core.cat([scores, scores.new_zeros((scores.shape[0], 1))], dim=1)
        score = core.gather(padded, 1, input_ids)
        score = core.where(score < 0, score * self.penalty, score / self.penalty)
        return padded.scatter(1, input_ids, score)[:, :vocab_size]


class EncoderRepetitionPenaltyLogitsProcessor(LogitsProcessor):
    """Make tokens of the encoder input (for a decoder-only model: the prompt) more likely:
    the inverse of the repetition penalty, applied to `encoder_input_ids`."""

    def __init__(self, penalty, encoder_input_ids):
        if not isinstance(penalty, float) or not penalty > 0:
            raise ValueError(f"`penalty` has to be a strictly positive float, but is {penalty}")
        self.penalty = 1 / penalty
        self.encoder_input_ids = encoder_input_ids

    def __call__(self, input_ids, scores):
        encoder_input_ids = self.encoder_input_ids
        if scores.shape[0] > encoder_input_ids.shape[0]:
            encoder_input_ids = encoder_input_ids.repeat_interleave(scores.shape[0] // encoder_input_ids.shape[0],
                                                                    dim=0)
        score = core.gather(scores, 1, encoder_input_ids)
        score = core.where(score < 0, score * self.penalty, score / self.penalty)
        return scores.scatter(1, encoder_input_ids, score)


class TopPLogitsWarper(LogitsProcessor):
    """Nucleus filtering: keep the most likely tokens whose probabilities add up to `top_p`."""

    def __init__(self, top_p, filter_value=-float("Inf"), min_tokens_to_keep=1):
        top_p = float(top_p)
        if top_p < 0 or top_p > 1.0:
            raise ValueError(f"`top_p` has to be a float > 0 and < 1, but is {top_p}")
        _check_min_tokens_to_keep(min_tokens_to_keep)
        self.top_p = top_p
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        finite = scores != -math.inf
        counts = finite.sum(-1)
        if int(counts.min()) >= self.min_tokens_to_keep and int(counts.max()) <= scores.shape[-1] // 4 \
                and not bool((scores == math.inf).any() | scores.isnan().any()):
            return self._filter_candidates(scores, finite, counts)
        sorted_logits, sorted_indices = core.sort(scores, descending=False)
        cumulative_probs = core.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        # Drop the low tail whose mass is at most 1 - top_p; always keep the last min_tokens_to_keep.
        sorted_to_remove = cumulative_probs <= (1 - self.top_p)
        sorted_to_remove[..., -self.min_tokens_to_keep:] = False
        to_remove = sorted_to_remove.scatter(1, sorted_indices, sorted_to_remove)
        return scores.masked_fill(to_remove, self.filter_value)

    def _filter_candidates(self, scores, finite, counts):
        """The same result when most scores are already -inf (top-k ran first, the default when
        sampling): -inf scores have probability 0 and sort first, so they are always removed and
        leave the cumulative sums of the others unchanged. Only each row's finite scores are
        sorted, which spares a full sort of the vocabulary every step."""
        batch = scores.shape[0]
        width = int(counts.max())
        rows, cols = finite.nonzero(as_tuple=True)
        slots = core.arange(rows.shape[0], device=scores.device) - (core.cumsum(counts, dim=0) - counts)[rows]
        # Rows with fewer finite scores are padded with one of their -inf columns (removed anyway).
        padding = (~finite).int().argmax(dim=-1)
        index = padding[:, None].expand(batch, width).clone()
        index[rows, slots] = cols
        sorted_logits, order = core.sort(scores.gather(1, index), descending=False)
        sorted_indices = index.gather(1, order)
        cumulative_probs = core.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_to_remove = cumulative_probs <= (1 - self.top_p)
        sorted_to_remove[..., -self.min_tokens_to_keep:] = False
        kept = sorted_logits.masked_fill(sorted_to_remove, self.filter_value)
        return core.full_like(scores, self.filter_value).scatter(1, sorted_indices, kept)


class TopKLogitsWarper(LogitsProcessor):
    """Keep the `top_k` highest scores (ties with the k-th included)."""

    def __init__(self, top_k, filter_value=-float("Inf"), min_tokens_to_keep=1):
        if not isinstance(top_k, int) or top_k <= 0:
            raise ValueError(f"`top_k` has to be a strictly positive integer, but is {top_k}")
        self.top_k = max(top_k, min_tokens_to_keep)
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        top_k = min(self.top_k, scores.shape[-1])
        kth_best = core.topk(scores, top_k)[0][..., -1:]
        return scores.masked_fill(scores < kth_best, self.filter_value)


class TopHLogitsWarper(LogitsProcessor):
    """Top-H sampling (Potraghloo et al. 2025): among the 100 most likely tokens, keep them in
    order of probability while their cumulative entropy -sum p log p (p normalised over
    those 100) stays within `top_h` times that distribution's entropy; the best token is
    always kept."""

    def __init__(self, top_h, filter_value=-float("Inf")):
        if not 0 < top_h <= 1:
            raise ValueError("`top_h` must be in the range (0, 1].")
        self.top_n = 100
        self.top_h = top_h
        self.filter_value = filter_value

    def __call__(self, input_ids, scores):
        top_n = min(self.top_n, scores.shape[-1])
        top_logits, top_idx = core.topk(scores, top_n, dim=-1)
        normalized = F.log_softmax(top_logits, dim=-1)
        probs = normalized.exp()
        # The entropy as torch.distributions.Categorical computes it (filtered tokens, with
        # probability 0, add nothing); the running sum from -p log p, as HF writes it.
        entropy = -(normalized.clamp(min=core.finfo(normalized.dtype).min) * probs).sum(-1, keepdim=True)
        entropy_terms = -(probs * core.log(probs)).masked_fill(probs == 0, 0.0)
        selection = core.cumsum(entropy_terms, dim=-1) <= entropy * self.top_h
        selection[:, 0] = True
        keep = core.zeros(scores.shape, dtype=core.bool, device=scores.device).scatter(1, top_idx, selection)
        return scores.masked_fill(~keep, self.filter_value)


class MinPLogitsWarper(LogitsProcessor):
    """Keep tokens whose probability is at least `min_p` times the top token's."""

    def __init__(self, min_p, filter_value=-float("Inf"), min_tokens_to_keep=1):
        if not 0 <= min_p <= 1.0:
            raise ValueError(f"`min_p` has to be a float in the [0, 1] interval, but is {min_p}")
        _check_min_tokens_to_keep(min_tokens_to_keep)
        self.min_p = min_p
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        probs = F.softmax(scores, dim=-1)
        threshold = self.min_p * probs.amax(dim=-1, keepdim=True)
        to_remove = probs < threshold
        k = min(self.min_tokens_to_keep, probs.shape[-1])
        to_remove = to_remove.scatter(-1, core.topk(probs, k, dim=-1)[1], False)
        return scores.masked_fill(to_remove, self.filter_value)


class TypicalLogitsWarper(LogitsProcessor):
    """Locally typical sampling: keep the tokens whose surprisal is closest to the
    distribution's entropy, up to probability mass `mass`."""

    def __init__(self, mass=0.9, filter_value=-float("Inf"), min_tokens_to_keep=1):
        mass = float(mass)
        if not 0 < mass < 1:
            raise ValueError(f"`typical_p` has to be a float > 0 and < 1, but is {mass}")
        _check_min_tokens_to_keep(min_tokens_to_keep)
        self.filter_value = filter_value
        self.mass = mass
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        normalized = F.log_softmax(scores, dim=-1)
        p = normalized.exp()
        # Filtered tokens (p = 0, log p = -inf) add nothing, as HF's nansum makes them.
        entropy = -(p * normalized.masked_fill(p == 0, 0.0)).sum(-1, keepdim=True)
        shifted = (-normalized - entropy).abs()
        sorted_scores, sorted_indices = core.sort(shifted, descending=False)
        sorted_logits = scores.gather(-1, sorted_indices)
        cumulative_probs = core.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        last_ind = (cumulative_probs < self.mass).sum(dim=1).clamp(max=sorted_scores.shape[-1] - 1)
        sorted_to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view(-1, 1))
        sorted_to_remove[..., :self.min_tokens_to_keep] = False
        to_remove = sorted_to_remove.scatter(1, sorted_indices, sorted_to_remove)
        return scores.masked_fill(to_remove, self.filter_value)


class _ProbabilityCutoffWarper(LogitsProcessor):
    """Epsilon and eta sampling: drop the tokens whose probability is below a threshold
    (`_threshold` of the probabilities), keeping the min_tokens_to_keep best. `epsilon` is
    the generation config's `cutoff_name`."""

    cutoff_name = None

    def __init__(self, epsilon, filter_value=-float("Inf"), min_tokens_to_keep=1):
        epsilon = float(epsilon)
        if epsilon <= 0 or epsilon >= 1:
            raise ValueError(f"`{self.cutoff_name}` has to be a float > 0 and < 1, but is {epsilon}")
        min_tokens_to_keep = int(min_tokens_to_keep)
        if min_tokens_to_keep < 1:
            raise ValueError(f"`min_tokens_to_keep` has to be a strictly positive integer, but is {min_tokens_to_keep}")
        self.epsilon = epsilon
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        probabilities = F.softmax(scores, dim=-1)
        to_remove = probabilities < self._threshold(probabilities, scores)
        top_k = min(self.min_tokens_to_keep, scores.shape[-1])
        to_remove = to_remove & (scores < core.topk(scores, top_k)[0][..., -1:])
        return scores.masked_fill(to_remove, self.filter_value)


class EpsilonLogitsWarper(_ProbabilityCutoffWarper):
    """Drop tokens whose probability is below `epsilon` (keeping the min_tokens_to_keep best)."""

    cutoff_name = "epsilon_cutoff"

    def _threshold(self, probabilities, scores):
        return self.epsilon


class EtaLogitsWarper(_ProbabilityCutoffWarper):
    """Eta sampling: drop tokens below min(epsilon, sqrt(epsilon) * exp(-entropy))."""

    cutoff_name = "eta_cutoff"

    def __init__(self, epsilon, filter_value=-float("Inf"), min_tokens_to_keep=1, device="cpu"):
        super().__init__(epsilon, filter_value, min_tokens_to_keep)

    def _threshold(self, probabilities, scores):
        log_probs = F.log_softmax(scores, dim=-1)
        # Entropy as torch.distributions.Categorical computes it: 0 * log 0 counts as 0.
        entropy = -(probabilities * log_probs.masked_fill(probabilities == 0, 0.0)).sum(-1)
        return core.minimum(core.tensor(self.epsilon, device=scores.device),
                            math.sqrt(self.epsilon) * core.exp(-entropy))[..., None]


class NoRepeatNGramLogitsProcessor(LogitsProcessor):
    """Forbid any token that would repeat an n-gram of size `ngram_size` already in the sequence."""

    def __init__(self, ngram_size):
        if not isinstance(ngram_size, int) or ngram_size <= 0:
            raise ValueError(f"`ngram_size` has to be a strictly positive integer, but is {ngram_size}")
        self.ngram_size = ngram_size

    def __call__(self, input_ids, scores):
        cur_len = input_ids.shape[-1]
        if cur_len < self.ngram_size:
            return scores
        # Every earlier window whose first n-1 tokens equal the last n-1 tokens bans its n-th token.
        prefix = input_ids[:, cur_len + 1 - self.ngram_size:]
        windows = input_ids.unfold(1, self.ngram_size, 1)
        matches = (windows[..., :-1] == prefix.unsqueeze(1)).all(dim=-1)
        vocab_size = scores.shape[-1]
        banned_ids = core.where(matches, windows[..., -1].clamp(max=vocab_size), vocab_size)
        banned = core.zeros((scores.shape[0], vocab_size + 1), dtype=core.bool, device=scores.device)
        banned = banned.scatter(1, banned_ids, True)
        return scores.masked_fill(banned[:, :vocab_size], -math.inf)


class EncoderNoRepeatNGramLogitsProcessor(LogitsProcessor):
    """Forbid tokens that would copy an n-gram of size `encoder_ngram_size` from the encoder input."""

    def __init__(self, encoder_ngram_size, encoder_input_ids):
        if not isinstance(encoder_ngram_size, int) or encoder_ngram_size <= 0:
            raise ValueError(
                f"`encoder_ngram_size` has to be a strictly positive integer, but is {encoder_ngram_size}"
            )
        self.ngram_size = encoder_ngram_size
        if encoder_input_ids.ndim == 1:
            encoder_input_ids = encoder_input_ids.unsqueeze(0)
        self.batch_size = encoder_input_ids.shape[0]
        # Per encoder row: n-1 token prefix → the tokens that followed it.
        self.generated_ngrams = []
        for row in encoder_input_ids.tolist():
            followers = {}
            for start in range(len(row) - encoder_ngram_size + 1):
                ngram = row[start:start + encoder_ngram_size]
                followers.setdefault(tuple(ngram[:-1]), []).append(ngram[-1])
            self.generated_ngrams.append(followers)

    def __call__(self, input_ids, scores):
        num_hypos = scores.shape[0]
        num_beams = num_hypos // self.batch_size
        cur_len = input_ids.shape[-1]
        processed = scores.clone()
        prefixes = input_ids[:, cur_len + 1 - self.ngram_size:cur_len].tolist() if self.ngram_size > 1 else \
            [[] for _ in range(num_hypos)]
        for hypo, prefix in enumerate(prefixes):
            banned = self.generated_ngrams[hypo // num_beams].get(tuple(prefix), [])
            if banned:
                processed[hypo, banned] = -math.inf
        return processed


class SequenceBiasLogitsProcessor(LogitsProcessor):
    """Add a bias to a token's score when it would complete a given token sequence.

    `sequence_bias` maps tuples of ids to floats (or is a list of [ids, bias] pairs); a
    one-token sequence biases that token always, a longer one only after its prefix.
    """

    def __init__(self, sequence_bias):
        self.sequence_bias = sequence_bias
        self._validate_arguments()
        if isinstance(self.sequence_bias, list):
            self.sequence_bias = {tuple(ids): bias for ids, bias in self.sequence_bias}
        self.length_1_bias = None
        self.multi_token_biases = None

    def __call__(self, input_ids, scores):
        if self.length_1_bias is None:
            self._prepare_bias_variables(scores)
        bias = core.zeros_like(scores) + self.length_1_bias
        for prefixes, last_tokens, biases in self.multi_token_biases:
            prefix_length = prefixes.shape[1]
            if prefix_length > input_ids.shape[1]:
                continue
            matching_rows = (input_ids[:, None, -prefix_length:] == prefixes).all(dim=-1)
            bias = bias.index_add(1, last_tokens, core.where(matching_rows, biases, 0.0).to(bias.dtype))
        return scores + bias

    def _prepare_bias_variables(self, scores):
        vocab_size = scores.shape[-1]
        invalid = [token for ids in self.sequence_bias for token in ids if token >= vocab_size]
        if invalid:
            raise ValueError(
                f"The model vocabulary size is {vocab_size}, but the following tokens were being biased: {invalid}"
            )
        self.length_1_bias = core.zeros((vocab_size,), dtype=core.float32, device=scores.device)
        single = [(ids[0], bias) for ids, bias in self.sequence_bias.items() if len(ids) == 1]
        if single:
            self.length_1_bias[[token for token, _ in single]] = core.tensor([bias for _, bias in single])
        by_prefix_length = {}
        for ids, bias in self.sequence_bias.items():
            if len(ids) > 1:
                by_prefix_length.setdefault(len(ids) - 1, []).append((ids, bias))
        self.multi_token_biases = [
            (
                core.tensor([ids[:-1] for ids, _ in group], device=scores.device),
                core.tensor([ids[-1] for ids, _ in group], device=scores.device),
                core.tensor([bias for _, bias in group], dtype=core.float32, device=scores.device),
            )
            for group in by_prefix_length.values()
        ]

    def _validate_arguments(self):
        sequence_bias = self.sequence_bias
        if not isinstance(sequence_bias, (dict, list)) or len(sequence_bias) == 0:
            raise ValueError(
                f"`sequence_bias` has to be a non-empty dictionary, or non-empty list of lists but is {sequence_bias}."
            )
        if isinstance(sequence_bias, dict):
            if any(not isinstance(ids, tuple) for ids in sequence_bias):
                raise ValueError(f"`sequence_bias` has to be a dict with tuples as keys, but is {sequence_bias}.")
            if any(len(ids) == 0 or any(not _is_token_id(t) for t in ids) for ids in sequence_bias):
                raise ValueError(
                    f"Each key in `sequence_bias` has to be a non-empty tuple of positive integers, but is "
                    f"{sequence_bias}."
                )
            if any(not isinstance(bias, float) for bias in sequence_bias.values()):
                raise ValueError(f"`sequence_bias` has to be a dict with floats as values, but is {sequence_bias}.")
        elif any(
            len(pair) == 0 or not isinstance(pair[0], list) or any(not _is_token_id(t) for t in pair[0])
            or not isinstance(pair[1], float)
            for pair in sequence_bias
        ):
            raise ValueError(
                "Each element in `sequence_bias` has to be a non-empty list of lists of positive integers and float, "
                f"but is {sequence_bias}."
            )


def _is_token_id(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class NoBadWordsLogitsProcessor(SequenceBiasLogitsProcessor):
    """Forbid the token sequences in `bad_words_ids` (one-token ones outright, longer ones after
    their prefix). A bad word that is just an EOS id is ignored, so generation can still end."""

    def __init__(self, bad_words_ids, eos_token_id=None):
        self.bad_word_ids = bad_words_ids
        self._validate_arguments()
        if eos_token_id is not None:
            eos_ids = _token_id_tensor(eos_token_id).tolist()
            bad_words_ids = [ids for ids in bad_words_ids if all(ids != [eos] for eos in eos_ids)]
        # What is left may be nothing (only EOS was "bad"): then the processor changes nothing.
        super().__init__({tuple(ids): float("-inf") for ids in bad_words_ids})

    def _validate_arguments(self):
        bad_words_ids = self.bad_word_ids
        if not isinstance(bad_words_ids, list) or len(bad_words_ids) == 0:
            raise ValueError(f"`bad_words_ids` has to be a non-empty list, but is {bad_words_ids}.")
        if any(not isinstance(ids, list) for ids in bad_words_ids):
            raise ValueError(f"`bad_words_ids` has to be a list of lists, but is {bad_words_ids}.")
        if any(any(not _is_token_id(t) for t in ids) for ids in bad_words_ids):
            raise ValueError(
                f"Each list in `bad_words_ids` has to be a list of positive integers, but is {bad_words_ids}."
            )


class PrefixConstrainedLogitsProcessor(LogitsProcessor):
    """Allow only the tokens `prefix_allowed_tokens_fn(batch_id, input_ids_row)` returns."""

    def __init__(self, prefix_allowed_tokens_fn, num_beams):
        self._prefix_allowed_tokens_fn = prefix_allowed_tokens_fn
        self._num_beams = num_beams

    def __call__(self, input_ids, scores):
        mask = core.full_like(scores, -math.inf)
        batch_size = input_ids.shape[0] // self._num_beams
        for batch_id in range(batch_size):
            for beam_id in range(self._num_beams):
                row = batch_id * self._num_beams + beam_id
                allowed = self._prefix_allowed_tokens_fn(batch_id, input_ids[row])
                if len(allowed) == 0:
                    raise ValueError(
                        f"`prefix_allowed_tokens_fn` returned an empty list for batch ID {batch_id}. This means that "
                        "the constraint is unsatisfiable. Please check your implementation of "
                        "`prefix_allowed_tokens_fn`"
                    )
                mask[row, list(allowed)] = 0
        processed = scores + mask
        unsatisfiable = processed.amax(dim=-1).isneginf().view(batch_size, -1).all(dim=-1, keepdim=True)
        return core.where(unsatisfiable.repeat_interleave(self._num_beams, dim=0), mask, processed)


class ForcedBOSTokenLogitsProcessor(LogitsProcessor):
    """Force `bos_token_id` as the first generated token (when the sequence has length 1)."""

    def __init__(self, bos_token_id):
        self.bos_token_id = bos_token_id

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] != 1:
            return scores
        forced = core.full_like(scores, -math.inf)
        forced[:, self.bos_token_id] = 0
        return forced


class ForcedEOSTokenLogitsProcessor(LogitsProcessor):
    """Force an EOS token as the last token before `max_length`."""

    def __init__(self, max_length, eos_token_id, device="cpu"):
        self.max_length = max_length
        self.eos_token_id = _token_id_tensor(eos_token_id, device)
        if self.eos_token_id.numel() and bool((self.eos_token_id < 0).any()):
            raise ValueError(f"`eos_token_id` has to be a list of positive integers, but is {eos_token_id}")

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] != self.max_length - 1:
            return scores
        forced = core.full_like(scores, -math.inf)
        forced[:, self.eos_token_id.to(scores.device)] = 0
        return forced


class InfNanRemoveLogitsProcessor(LogitsProcessor):
    """Replace NaN by 0 and ±inf by the dtype's largest/smallest finite value."""

    def __call__(self, input_ids, scores):
        finfo = core.finfo(scores.dtype)
        processed = core.where(scores != scores, 0.0, scores)
        processed = core.where(scores == math.inf, finfo.max, processed)
        return core.where(scores == -math.inf, finfo.min, processed)


class ExponentialDecayLengthPenalty(LogitsProcessor):
    """After `start_index` new tokens, raise the EOS scores by |score| * (factor ** steps - 1)."""

    def __init__(self, exponential_decay_length_penalty, eos_token_id, input_ids_seq_length):
        self.regulation_start = exponential_decay_length_penalty[0] + input_ids_seq_length
        self.regulation_factor = exponential_decay_length_penalty[1]
        self.eos_token_id = _token_id_tensor(eos_token_id)
        if bool((self.eos_token_id < 0).any()):
            raise ValueError(f"`eos_token_id` has to be a list of positive integers, but is {eos_token_id}")

    def __call__(self, input_ids, scores):
        cur_len = input_ids.shape[-1]
        if cur_len <= self.regulation_start:
            return scores
        eos = self.eos_token_id.to(scores.device)
        eos_scores = scores[:, eos]
        penalty = eos_scores.abs() * (pow(self.regulation_factor, cur_len - self.regulation_start) - 1)
        penalty = penalty.masked_fill(~eos_scores.isfinite(), 0.0)
        penalties = core.zeros_like(scores)
        penalties[:, eos] = penalty
        return scores + penalties


class LogitNormalization(LogitsProcessor):
    """Turn scores into log-probabilities (log_softmax)."""

    def __call__(self, input_ids, scores):
        return F.log_softmax(scores, dim=-1)


class SuppressTokensAtBeginLogitsProcessor(LogitsProcessor):
    """Forbid `begin_suppress_tokens` at the step where the sequence has length `begin_index`."""

    def __init__(self, begin_suppress_tokens, begin_index, device="cpu"):
        self.begin_suppress_tokens = core.tensor(list(begin_suppress_tokens), dtype=core.int64, device=device)
        self._masks = {}
        self.begin_index = begin_index

    def set_begin_index(self, begin_index):
        self.begin_index = begin_index

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] != self.begin_index:
            return scores
        return core.where(_vocab_mask(self.begin_suppress_tokens, scores, self._masks), -math.inf, scores)


class SuppressTokensLogitsProcessor(LogitsProcessor):
    """Forbid `suppress_tokens` at every step."""

    def __init__(self, suppress_tokens, device="cpu"):
        self.suppress_tokens = _token_id_tensor(suppress_tokens, device)
        self._masks = {}

    def __call__(self, input_ids, scores):
        return core.where(_vocab_mask(self.suppress_tokens, scores, self._masks), -math.inf, scores)


# ---------------------------------------------------------------------- Whisper


class WhisperTimeStampLogitsProcessor(LogitsProcessor):
    """Whisper's timestamp grammar over the tokens generated since `begin_index`: timestamp
    tokens (ids from `no_timestamps_token_id + 1` on, one per 20 ms) come in pairs that close
    one segment and open the next, never go back in time, and the first token is a timestamp
    (at most `max_initial_timestamp_index` steps in). When the timestamps together are more
    likely than any single text token, a timestamp is forced (`_detect_timestamp_from_logprob`).
    """

    def __init__(self, generate_config, begin_index, _detect_timestamp_from_logprob=None):
        self.no_timestamps_token_id = generate_config.no_timestamps_token_id
        self.timestamp_begin = generate_config.no_timestamps_token_id + 1
        self.eos_token_id = generate_config.eos_token_id or generate_config.bos_token_id
        self._detect_timestamp_from_logprob = (
            _detect_timestamp_from_logprob if _detect_timestamp_from_logprob is not None
            else getattr(generate_config, "_detect_timestamp_from_logprob", True))
        if begin_index is None:
            raise ValueError("WhisperTimeStampLogitsProcessor needs `begin_index`: the length of the decoder prompt")
        self.begin_index = begin_index
        self.max_initial_timestamp_index = getattr(generate_config, "max_initial_timestamp_index", None)

    def set_begin_index(self, begin_index):
        self.begin_index = begin_index

    def __call__(self, input_ids, scores):
        scores = scores.clone()
        scores[:, self.no_timestamps_token_id] = -math.inf
        first = self.timestamp_begin
        for row, sampled in enumerate(input_ids[:, self.begin_index:].tolist()):
            last_was_timestamp = len(sampled) >= 1 and sampled[-1] >= first
            penultimate_was_timestamp = len(sampled) < 2 or sampled[-2] >= first
            if last_was_timestamp:
                if penultimate_was_timestamp:  # a pair just closed: text (or EOS) comes next
                    scores[row, first:] = -math.inf
                else:  # a segment's closing timestamp: no text before it
                    scores[row, :self.eos_token_id] = -math.inf
            timestamps = [token for token in sampled if token >= first]
            if timestamps:
                # time never goes back; after a lone timestamp its pair may repeat it
                latest = timestamps[-1] if last_was_timestamp and not penultimate_was_timestamp else timestamps[-1] + 1
                scores[row, first:latest] = -math.inf
        if input_ids.shape[1] == self.begin_index:
            scores[:, :first] = -math.inf
            if self.max_initial_timestamp_index is not None:
                scores[:, first + self.max_initial_timestamp_index + 1:] = -math.inf
        if self._detect_timestamp_from_logprob:
            logprobs = F.log_softmax(scores.float(), dim=-1)
            timestamp_logprob = logprobs[:, first:].logsumexp(dim=-1)
            text_logprob = logprobs[:, :first].max(dim=-1).values
            positions = core.arange(scores.shape[-1], device=scores.device)
            force = (timestamp_logprob > text_logprob)[:, None] & (positions < first)[None, :]
            scores = scores.masked_fill(force, -math.inf)
        return scores


class WhisperNoSpeechDetection(LogitsProcessor):
    """Records, at the first generated step, the probability of Whisper's no-speech token
    (`no_speech_prob`), from the raw scores or, when the decoder prompt holds more than the
    start token, from a forward pass over the inputs given with `set_inputs` (the model's
    prediction right after the start-of-transcript token). Scores pass through unchanged."""

    def __init__(self, no_speech_token, begin_index, scores_is_logprobs=False):
        self.no_speech_token = no_speech_token
        self.start_of_trans_offset = begin_index
        self.begin_index = begin_index
        self._no_speech_prob = [0.0]
        self.is_scores_logprobs = scores_is_logprobs
        self.model = None
        self.inputs = None

    def set_model(self, model):
        self.model = model

    def set_inputs(self, inputs):
        """The keyword arguments of the forward pass that scores the prompt."""
        self.inputs = {"input_features": inputs["inputs"], "decoder_input_ids": inputs["input_ids"]}
        if inputs.get("decoder_attention_mask") is not None:
            self.inputs["decoder_attention_mask"] = inputs["decoder_attention_mask"]

    @property
    def no_speech_prob(self):
        return self._no_speech_prob

    def set_begin_index(self, begin_index):
        self.begin_index = begin_index

    def __call__(self, input_ids, scores):
        if input_ids.shape[1] == self.begin_index:
            from_logprobs = self.is_scores_logprobs
            if self.start_of_trans_offset > 1:
                with core.no_grad():
                    logits = self.model(**self.inputs, use_cache=False).logits
                no_speech_scores = logits[:, self.begin_index - self.start_of_trans_offset]
                from_logprobs = False
            else:
                no_speech_scores = scores
            probs = no_speech_scores.exp() if from_logprobs else no_speech_scores.float().softmax(dim=-1)
            self._no_speech_prob = probs[:, self.no_speech_token]
        return scores


# ---------------------------------------------------------------------- classifier-free guidance


class ClassifierFreeGuidanceLogitsProcessor(LogitsProcessor):
    """Classifier-free guidance for a batch that holds the conditional rows first and the
    unconditional ones after them (MusicGen's layout): uncond + (cond - uncond) * scale."""

    def __init__(self, guidance_scale):
        if not guidance_scale > 1:
            raise ValueError(
                "Require guidance scale >1 to use the classifier free guidance processor, got guidance scale "
                f"{guidance_scale}."
            )
        self.guidance_scale = guidance_scale

    def __call__(self, input_ids, scores):
        if scores.shape[0] != 2 * input_ids.shape[0]:
            raise ValueError(
                f"Logits should have twice the batch size of the input ids, the first half of batches corresponding to "
                f"the conditional inputs, and the second half of batches corresponding to the unconditional inputs. Got "
                f"batch size {scores.shape[0]} for the logits and {input_ids.shape[0]} for the input ids."
            )
        cond_logits, uncond_logits = scores.split(scores.shape[0] // 2, dim=0)
        return uncond_logits + (cond_logits - uncond_logits) * self.guidance_scale


class UnbatchedClassifierFreeGuidanceLogitsProcessor(LogitsProcessor):
    """Classifier-free guidance (Sanchez et al. 2023) for a decoder-only model: the model runs a
    second, unconditional branch itself (`unconditional_ids`, by default the prompt's last
    token, plus every generated token), and the scores become
    uncond + scale * (cond - uncond) on log-softmax scale. A scale below 1 turns the
    unconditional prompt into a positive one. The branch keeps its own cache when `use_cache`.
    """

    def __init__(self, guidance_scale, model, unconditional_ids=None, unconditional_attention_mask=None,
                 use_cache=True):
        self.guidance_scale = guidance_scale
        self.model = model
        self.unconditional_context = {
            "input_ids": unconditional_ids,
            "attention_mask": unconditional_attention_mask,
            "use_cache": use_cache,
            "past_key_values": None,
            "first_pass": True,
        }

    def get_unconditional_logits(self, input_ids):
        context = self.unconditional_context
        if context["first_pass"]:
            if context["input_ids"] is None:
                context["input_ids"] = input_ids[:, -1:]
            if context["attention_mask"] is None:
                context["attention_mask"] = core.ones_like(context["input_ids"], dtype=core.long)
            input_ids = context["input_ids"]
            attention_mask = context["attention_mask"]
            context["first_pass"] = False
        else:
            attention_mask = core.cat([context["attention_mask"], core.ones_like(input_ids[:, -1:], dtype=core.long)],
                                      dim=1)
            if not context["use_cache"]:
                input_ids = core.cat([context["input_ids"], input_ids[:, -1:]], dim=1)
            else:
                input_ids = input_ids[:, -1:]
            context["input_ids"] = input_ids
            context["attention_mask"] = attention_mask
        out = self.model(input_ids, attention_mask=attention_mask, use_cache=context["use_cache"],
                         past_key_values=context["past_key_values"])
        context["past_key_values"] = out.get("past_key_values", None)
        return out.logits

    def __call__(self, input_ids, scores):
        scores = F.log_softmax(scores, dim=-1)
        if self.guidance_scale == 1:
            return scores
        logits = self.get_unconditional_logits(input_ids)
        unconditional_logits = F.log_softmax(logits[:, -1], dim=-1)
        return self.guidance_scale * (scores - unconditional_logits) + unconditional_logits


# ---------------------------------------------------------------------- audio models (Bark, Dia)


class AlternatingCodebooksLogitsProcessor(LogitsProcessor):
    """Bark's fine model: alternate between its two codebooks, the first at even steps after
    `input_start_len` (only ids in [semantic_vocab_size, semantic_vocab_size + codebook_size)),
    the second at odd steps (only ids from semantic_vocab_size + codebook_size on)."""

    def __init__(self, input_start_len, semantic_vocab_size, codebook_size):
        if not isinstance(input_start_len, int) or input_start_len < 0:
            raise ValueError(f"`input_starting_length` has to be a non-negative integer, but is {input_start_len}")
        self.input_start_len = input_start_len
        self.semantic_vocab_size = semantic_vocab_size
        self.codebook_size = codebook_size

    def __call__(self, input_ids, scores):
        is_first_codebook = (input_ids.shape[-1] - self.input_start_len) % 2 == 0
        scores_processed = scores.clone()
        if is_first_codebook:
            scores_processed[:, :self.semantic_vocab_size] = -math.inf
            scores_processed[:, self.semantic_vocab_size + self.codebook_size:] = -math.inf
        else:
            scores_processed[:, :self.semantic_vocab_size + self.codebook_size] = -math.inf
        return scores_processed


class BarkEosPrioritizerLogitsProcessor(LogitsProcessor):
    """Bark: in rows where an EOS id's probability exceeds `min_eos_p`, keep only the EOS
    scores (everything else -inf), so EOS is picked."""

    def __init__(self, eos_token_id, min_eos_p, device="cpu"):
        eos_token_id = _token_id_tensor(eos_token_id, device) if not isinstance(eos_token_id, core.Tensor) \
            else eos_token_id
        if eos_token_id.is_floating_point() or bool((eos_token_id < 0).any()):
            raise ValueError(f"`eos_token_id` has to be a list of positive integers, but is {eos_token_id}")
        if min_eos_p is not None and min_eos_p <= 0:
            raise ValueError(f"`min_eos_p` has to be a positive float, but is {min_eos_p}")
        self.eos_token_id = eos_token_id
        self.min_eos_p = min_eos_p

    def __call__(self, input_ids, scores):
        if not self.min_eos_p:
            return scores
        eos = self.eos_token_id.reshape(-1).long().to(scores.device)
        probs = F.softmax(scores.float(), dim=-1)
        early_stop_scores = core.full_like(scores, -math.inf)
        early_stop_scores[:, eos] = scores[:, eos]
        do_early_stop = (probs[:, eos] > self.min_eos_p).any(dim=1, keepdim=True)
        return core.where(do_early_stop, early_stop_scores, scores)


class DiaClassifierFreeGuidanceLogitsProcessor(LogitsProcessor):
    """Dia's classifier-free guidance, centred on the conditional logits:
    cond + (cond - uncond) * scale; with `guidance_top_k`, the conditional logits of the k
    best guided tokens are returned instead (the rest -inf)."""

    def __init__(self, guidance_scale, guidance_top_k=None):
        if not guidance_scale > 1:
            raise ValueError(
                "Require guidance scale >1 to use the classifier free guidance processor, got guidance scale "
                f"{guidance_scale}."
            )
        if guidance_top_k is not None and guidance_top_k < 1:
            raise ValueError(
                f"`guidance_top_k` has to be a strictly positive integer if given, but is {guidance_top_k}"
            )
        self.guidance_scale = guidance_scale
        self.guidance_top_k = guidance_top_k

    def __call__(self, input_ids, scores):
        if scores.shape[0] != 2 * input_ids.shape[0]:
            raise ValueError(
                f"Logits should have twice the batch size of the input ids, the first half of batches corresponding to "
                f"the conditional inputs, and the second half of batches corresponding to the unconditional inputs. Got "
                f"batch size {scores.shape[0]} for the logits and {input_ids.shape[0]} for the input ids."
            )
        cond_logits, uncond_logits = scores.split(scores.shape[0] // 2, dim=0)
        scores_processed = cond_logits + (cond_logits - uncond_logits) * self.guidance_scale
        if self.guidance_top_k is not None:
            top_k_indices = core.topk(scores_processed, k=self.guidance_top_k, dim=-1)[1]
            outside_top_k = core.ones_like(scores_processed, dtype=core.bool).scatter(-1, top_k_indices, False)
            scores_processed = cond_logits.masked_fill(outside_top_k, -math.inf)
        return scores_processed


class DiaEOSChannelFilterLogitsProcessor(LogitsProcessor):
    """Dia's EOS rules over scores of shape (batch * num_channels, vocab): only channel 0 may
    produce EOS, and ids above EOS (special tokens) never; where EOS is a row's best token
    it becomes the only candidate, elsewhere it is suppressed. Edits `scores` in place."""

    def __init__(self, num_channels, eos_token_id):
        if num_channels < 1:
            raise ValueError(f"Audio codebooks need at least one channel, but found {num_channels} channels.")
        if eos_token_id < 1:
            raise ValueError(f"Expected `eos_token_id` to be a positive integer, found {eos_token_id} instead.")
        self.num_channels = num_channels
        self.eos_id = eos_token_id

    def __call__(self, input_ids, scores):
        eos = self.eos_id
        scores = scores.reshape(-1, self.num_channels, scores.shape[-1])
        scores[:, 1:, eos:] = -math.inf
        scores[:, 0, eos + 1:] = -math.inf
        scores = scores.view(-1, scores.shape[-1])
        eos_is_best = (core.argmax(scores, dim=-1) == eos)[:, None]
        vocab = core.arange(scores.shape[-1], device=scores.device)[None, :]
        scores = scores.masked_fill(eos_is_best & (vocab < eos), -math.inf)
        return scores.masked_fill(~eos_is_best & (vocab == eos), -math.inf)


class DiaEOSDelayPatternLogitsProcessor(LogitsProcessor):
    """Dia's delayed EOS: once channel 0 picks EOS in a row (or the row nears
    `max_generation_len`), channel c is forced to EOS `delay_pattern[c]` steps later. Scores
    are (batch * channels, vocab) and edited in place; the per-row countdown lives in
    `delay_pattern` and `active_batches`, set up on the first call."""

    def __init__(self, delay_pattern, eos_token_id, max_generation_len, device="cpu"):
        self.num_channels = len(delay_pattern)
        self.active_batches = None
        self.delay_pattern = core.tensor(delay_pattern, device=device, dtype=core.int32)[None, :]
        self.eos_token_id = eos_token_id
        self.max_generation_len = max_generation_len - max(delay_pattern) - 1
        self.device = device

    def __call__(self, input_ids, scores):
        scores = scores.reshape(-1, self.num_channels, scores.shape[-1])
        if self.active_batches is None:
            self.delay_pattern = self.delay_pattern.repeat(scores.shape[0], 1)
            self.active_batches = core.zeros((scores.shape[0],), device=self.device, dtype=core.bool)
        channel_generated_eos = core.argmax(scores, dim=-1)[:, 0] == self.eos_token_id
        reached_max_len = input_ids.shape[1] == self.max_generation_len
        self.active_batches = self.active_batches | channel_generated_eos | reached_max_len
        forced = self.active_batches[:, None] & (self.delay_pattern == 0)
        idx_bsz, idx_channel = forced.nonzero(as_tuple=True)
        scores[idx_bsz, idx_channel, :] = -math.inf
        scores[idx_bsz, idx_channel, self.eos_token_id] = 0.0
        self.delay_pattern = self.delay_pattern - self.active_batches[:, None].int()
        return scores.reshape(-1, scores.shape[-1])


# ---------------------------------------------------------------------- watermarking


def _wrap_int64(value):
    """A Python int reduced to int64 as a tensor product would wrap it."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= (1 << 63) else value


class WatermarkLogitsProcessor(LogitsProcessor):
    """Kirchenbauer et al. 2023's watermark ("A Watermark for Large Language Models"): at each
    step a pseudo-random "green" list of `greenlist_ratio` of the vocabulary, seeded by the
    context, gets `bias` added to its scores. `WatermarkDetector` later counts green tokens.

    Seeding schemes, as HF (Algorithms 2 and 3 of the paper):
    - "lefthash": the seed is `hashing_key` times the previous token;
    - "selfhash": the green list also depends on the candidate token itself: among the 40
      best candidates, those that are green under their own seed
      (hashing_key * min over the last `context_width` tokens of table[t] * table[candidate],
      `table` a fixed permutation of 1,000,003 entries) get the bias. Slower, more robust.

    The green list of a seed is the start of torch.randperm(vocab_size) under a CPU generator
    seeded with it, reproduced exactly (torch_cpu_stream): the same text gets the same green
    lists as in Hugging Face transformers, so detection works across the two. `device` is
    accepted for HF's signature; the lists are device-independent here (HF's differ on
    accelerators, whose generators draw other streams).
    """

    def __init__(self, vocab_size, device, greenlist_ratio=0.25, bias=2.0, hashing_key=15485863,
                 seeding_scheme="lefthash", context_width=1):
        if seeding_scheme not in ("selfhash", "lefthash"):
            raise ValueError(f"seeding_scheme has to be one of [`selfhash`, `lefthash`], but found {seeding_scheme}")
        if greenlist_ratio >= 1.0 or greenlist_ratio <= 0.0:
            raise ValueError(
                f"greenlist_ratio has be in range between 0.0 and 1.0, exclusively. but found {greenlist_ratio}"
            )
        self.vocab_size = vocab_size
        self.greenlist_size = int(vocab_size * greenlist_ratio)
        self.bias = bias
        self.seeding_scheme = seeding_scheme
        self.hash_key = hashing_key
        self.context_width = context_width
        self.device = device
        self.table_size = 1_000_003

    @property
    def fixed_table(self):
        """torch.randperm(1_000_003) seeded with the hashing key: the selfhash seeds' lookup table
        (built on first use and shared between processors with the same key)."""
        return core.tensor(torch_cpu_stream.randperm_table(self.hash_key, self.table_size))

    def _seed(self, input_seq):
        """The generator seed for the green list after `input_seq` (1-D ids: a tensor, array or list)."""
        tail = input_seq[-self.context_width:]
        context = [int(token) for token in (tail.tolist() if hasattr(tail, "tolist") else tail)]
        if self.seeding_scheme == "selfhash":
            table = torch_cpu_stream.randperm_table(self.hash_key, self.table_size)
            b = int(table[context[-1] % self.table_size]) + 1
            seed = min(_wrap_int64(_wrap_int64(self.hash_key * (int(table[token % self.table_size]) + 1)) * b)
                       for token in context)
        else:
            seed = self.hash_key * context[-1]
        return seed % (2 ** 64 - 1)

    def _greenlist(self, input_seq):
        return torch_cpu_stream.randperm(self._seed(input_seq), self.vocab_size, prefix=self.greenlist_size)

    def _is_green(self, input_seq, token):
        """Whether `token` is in the green list after `input_seq` (faster than building the list)."""
        return torch_cpu_stream.randperm_prefix_contains(self._seed(input_seq), self.vocab_size, self.greenlist_size,
                                                         token)

    def _get_greenlist_ids(self, input_seq):
        """The green token ids after `input_seq`, as HF orders them (a 1-D int64 tensor)."""
        return core.tensor(self._greenlist(input_seq), dtype=core.int64, device=input_seq.device)

    def _score_rejection_sampling(self, input_seq, scores):
        """selfhash: the best 40 candidates (fewer in a smaller vocabulary) that are green
        under their own seed."""
        order = core.sort(scores, dim=-1, descending=True)[1][:40].tolist()
        context = input_seq.tolist()
        green = [candidate for candidate in order if self._is_green(context + [candidate], candidate)]
        return core.tensor(green, dtype=core.int64, device=input_seq.device)

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] < self.context_width:
            logger.warning(
                f"`input_ids` should have at least `{self.context_width}` tokens but has {input_ids.shape[-1]}. "
                "The seeding will be skipped for this generation step!"
            )
            return scores
        scores_processed = scores.clone()
        for b_idx, input_seq in enumerate(input_ids):
            if self.seeding_scheme == "selfhash":
                greenlist_ids = self._score_rejection_sampling(input_seq, scores[b_idx])
            else:
                greenlist_ids = self._get_greenlist_ids(input_seq)
            scores_processed[b_idx, greenlist_ids] = scores_processed[b_idx, greenlist_ids] + self.bias
        return scores_processed


class SynthIDTextWatermarkState:
    """What SynthID carries between steps of one generation: the last `ngram_len - 1` tokens of
    each row and the hashes of the contexts already watermarked (newest first)."""

    def __init__(self, batch_size, ngram_len, context_history_size, device):
        self.context = core.zeros((batch_size, ngram_len - 1), dtype=core.int64, device=device)
        self.context_history = core.zeros((batch_size, context_history_size), dtype=core.int64, device=device)
        self.num_calls = 0


class SynthIDTextWatermarkLogitsProcessor(LogitsProcessor):
    """SynthID Text (Dathathri et al. 2024, Nature): tournament sampling over `len(keys)`
    layers. Every candidate token gets one pseudo-random bit (g-value) per layer from a hash of
    the previous `ngram_len - 1` tokens, the token and the layer's key; each layer moves
    probability towards the tokens with g = 1:

        p <- p * (1 + g - sum(g * p))

    so sampled text has a mean g-value above 1/2, which `compute_g_values` lets a detector
    measure. A context seen before in the same generation is not watermarked again (its
    hash is remembered for `context_history_size` steps), so repeated text does not repeat
    the bias. Scores come back as log-probabilities.

    Hashes are HF's (an LCG over int64, wrapping), and the g-value table is
    torch.randint(0, 2, (sampling_table_size,)) seeded with `sampling_table_seed` on the CPU,
    reproduced exactly: g-values, and so detection, match Hugging Face's.
    """

    def __init__(self, ngram_len, keys, sampling_table_size, sampling_table_seed, context_history_size, device,
                 skip_first_ngram_calls=False, debug_mode=False):
        self.ngram_len = ngram_len
        self.keys = core.tensor([int(key) for key in keys], dtype=core.int64, device=device)
        self.sampling_table = core.tensor(
            torch_cpu_stream.randint_table(int(sampling_table_seed), 0, 2, int(sampling_table_size)), device=device)
        self.context_history_size = context_history_size
        self.device = device
        self.state = None
        self.skip_first_ngram_calls = skip_first_ngram_calls
        self.debug_mode = debug_mode

    def _init_state(self, batch_size):
        self.state = SynthIDTextWatermarkState(batch_size, self.ngram_len, self.context_history_size, self.device)

    def update_scores(self, scores, g_values):
        """Tournament over the layers: scores (batch, vocab), g_values (batch, vocab, depth) →
        log-probabilities (batch, vocab); -inf becomes the dtype's lowest finite value."""
        probs = F.softmax(scores, dim=1)
        for depth in range(g_values.shape[2]):
            g = g_values[:, :, depth]
            g_mass = (g * probs).sum(dim=1, keepdim=True)
            probs = probs * (1 + g - g_mass)
        log_probs = core.log(probs)
        return core.where(core.isfinite(log_probs), log_probs, core.finfo(log_probs.dtype).min)

    def __call__(self, input_ids, scores):
        self._check_input_ids_shape(input_ids)
        batch_size, vocab_size = scores.shape
        if self.debug_mode:
            scores = core.ones_like(scores)
        if self.state is None:
            self._init_state(batch_size)
        else:
            # The token added since the last call joins the context; the oldest leaves.
            self.state.context = core.cat([self.state.context, input_ids[:, -1:]], dim=1)[:, 1:]
        self.state.num_calls += 1
        if self.skip_first_ngram_calls and self.state.num_calls < self.ngram_len:
            return scores
        all_indices = core.arange(vocab_size, device=scores.device)[None, :].expand(batch_size, vocab_size)
        ngram_keys, hash_result_with_just_context = self._compute_keys(self.state.context, all_indices)
        g_values = self.sample_g_values(ngram_keys)
        updated_scores = self.update_scores(scores, g_values)
        context_hash = hash_result_with_just_context[:, None]
        is_repeated_context = (self.state.context_history == context_hash).any(dim=1, keepdim=True)
        self.state.context_history = core.cat([context_hash, self.state.context_history], dim=1)[:, :-1]
        return core.where(is_repeated_context, scores, updated_scores)

    def accumulate_hash(self, current_hash, data, multiplier=6364136223846793005, increment=1):
        """Fold the last axis of `data` into `current_hash` (broadcastable to data.shape[:-1]) with
        an LCG step per element: h = (h + x) * multiplier + increment, in wrapping int64."""
        for i in range(data.shape[-1]):
            current_hash = (current_hash + data[..., i]) * multiplier + increment
        return current_hash

    def _hash_with_keys(self, hash_result):
        """(...,) hashes → (..., depth): one more LCG step with each layer's key."""
        return self.accumulate_hash(hash_result[..., None], self.keys.reshape(*([1] * hash_result.ndim), -1, 1))

    def compute_ngram_keys(self, ngrams):
        """ngrams (batch, num_ngrams, ngram_len) → keys (batch, num_ngrams, depth)."""
        if len(ngrams.shape) != 3:
            raise ValueError(f"Ngrams should be of shape (batch_size, num_ngrams, ngram_len), but is {ngrams.shape}")
        if ngrams.shape[2] != self.ngram_len:
            raise ValueError(
                "Ngrams should be of shape (batch_size, num_ngrams, ngram_len),"
                f" where ngram_len is {self.ngram_len}, but is {ngrams.shape}"
            )
        start = core.ones(ngrams.shape[:2], dtype=core.int64, device=ngrams.device)
        return self._hash_with_keys(self.accumulate_hash(start, ngrams.long()))

    def _compute_keys(self, n_minus_1_grams, indices):
        """(keys (batch, num_indices, depth) of each context + candidate, the context hashes (batch,))."""
        start = core.ones((n_minus_1_grams.shape[0],), dtype=core.int64, device=n_minus_1_grams.device)
        hash_result_with_just_context = self.accumulate_hash(start, n_minus_1_grams.long())
        hash_result = self.accumulate_hash(hash_result_with_just_context[:, None], indices.long()[:, :, None])
        return self._hash_with_keys(hash_result), hash_result_with_just_context

    def sample_g_values(self, ngram_keys):
        """g-values: the sampling table at each key modulo its size (same shape as the keys)."""
        return self.sampling_table[ngram_keys % self.sampling_table.shape[0]]

    def _check_input_ids_shape(self, input_ids):
        if len(input_ids.shape) != 2:
            raise ValueError(f"Input ids should be of shape (batch_size, input_len), but is {input_ids.shape}")

    def compute_g_values(self, input_ids):
        """g-values of every n-gram of the text: (batch, input_len - (ngram_len - 1), depth)."""
        self._check_input_ids_shape(input_ids)
        ngrams = input_ids.unfold(1, self.ngram_len, 1)
        return self.sample_g_values(self.compute_ngram_keys(ngrams))

    def compute_context_repetition_mask(self, input_ids):
        """(batch, input_len - (ngram_len - 1)): 1 where the n-gram's context was not seen
        earlier in the text (within `context_history_size`), 0 where it repeats."""
        self._check_input_ids_shape(input_ids)
        batch_size = input_ids.shape[0]
        state = SynthIDTextWatermarkState(batch_size, self.ngram_len, self.context_history_size, self.device)
        contexts = input_ids[:, :-1].unfold(1, self.ngram_len - 1, 1)
        are_repeated_contexts = []
        for i in range(contexts.shape[1]):
            start = core.ones((batch_size,), dtype=core.int64, device=input_ids.device)
            context_hash = self.accumulate_hash(start, contexts[:, i, :].long())[:, None]
            are_repeated_contexts.append((state.context_history == context_hash).any(dim=1, keepdim=True))
            state.context_history = core.cat([context_hash, state.context_history], dim=1)[:, :-1]
        return core.logical_not(core.cat(are_repeated_contexts, dim=1))

    def compute_eos_token_mask(self, input_ids, eos_token_id):
        """(batch, input_len) bool: True before each row's first `eos_token_id`, False from it on."""
        self._check_input_ids_shape(input_ids)
        return core.cumsum((input_ids == eos_token_id).long(), dim=1) == 0

    def expected_mean_g_value(self, vocab_size, coinflip_prob=0.5):
        """The mean g-value watermarked text has under a uniform model distribution, one layer."""
        return coinflip_prob + coinflip_prob * (1 - coinflip_prob) * (1 - (1 / vocab_size))
