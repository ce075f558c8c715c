# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Detecting watermarked text: `WatermarkDetector` for Kirchenbauer et al.'s green lists
(`WatermarkingConfig`), `SynthIDTextWatermarkDetector` for SynthID Text
(`SynthIDTextWatermarkingConfig`), as in Hugging Face transformers.

The green-list detector needs no model: it recomputes each token's green list from the same
settings the text was generated with and counts how many tokens are green. Unwatermarked
text hits a green list a `greenlist_ratio` share of the time; watermarked text far more
often, which a one-sided z-test measures. SynthID's detector scores the text's g-values
with a small trained model, `BayesianDetectorModel`.
"""
import collections
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

from ... import core
from ...core import nn
from ..configuration_utils import PretrainedConfig
from ..modeling_utils import PreTrainedModel
from ..utils.generic import ModelOutput
from .logits_process import WatermarkLogitsProcessor

__all__ = [
    "BayesianDetectorConfig", "BayesianDetectorModel", "BayesianWatermarkDetectorModelOutput",
    "SynthIDTextWatermarkDetector", "WatermarkDetector", "WatermarkDetectorOutput",
]


@dataclass
class WatermarkDetectorOutput:
    """Per batch row (NumPy arrays): tokens scored, green tokens among them, their fraction,
    the z-score of that count against unwatermarked text, its one-sided p-value, and, with a
    threshold, the prediction (watermarked or not) and confidence (1 - p-value)."""

    num_tokens_scored: np.ndarray = None
    num_green_tokens: np.ndarray = None
    green_fraction: np.ndarray = None
    z_score: np.ndarray = None
    p_value: np.ndarray = None
    prediction: np.ndarray = None
    confidence: np.ndarray = None


class WatermarkDetector:
    """Tell text watermarked by `generate(watermarking_config=...)` from other text.

    model_config: the generating model's config (vocabulary size; a leading BOS, or for
        encoder-decoders the decoder start token, is not scored).
    device: accepted for HF's signature (green lists here do not depend on it).
    watermarking_config: the exact WatermarkingConfig (or its dict) used when generating.
    ignore_repeated_ngrams: score each distinct n-gram once, so repeated text cannot inflate
        the count. (HF's version keys its count on tensor objects, which never compare
        equal, so there every occurrence counts either way; here the flag does what it says.)
    max_cache_size: green-list lookups remembered between calls (LRU).

    `detector(input_ids, z_threshold=3.0, return_dict=False)` returns the per-row
    predictions, or a `WatermarkDetectorOutput`. Pass only the generated part: the prompt,
    not watermarked, dilutes the count.
    """

    def __init__(self, model_config, device, watermarking_config, ignore_repeated_ngrams=False, max_cache_size=128):
        if not isinstance(watermarking_config, dict):
            watermarking_config = watermarking_config.to_dict()
        start_token = "decoder_start_token_id" if getattr(model_config, "is_encoder_decoder", False) else "bos_token_id"
        self.bos_token_id = getattr(model_config, start_token, None)
        self.greenlist_ratio = watermarking_config["greenlist_ratio"]
        self.ignore_repeated_ngrams = ignore_repeated_ngrams
        self.processor = WatermarkLogitsProcessor(vocab_size=model_config.vocab_size, device=device,
                                                  **watermarking_config)
        self._get_ngram_score_cached = lru_cache(maxsize=max_cache_size)(self._get_ngram_score)

    def _get_ngram_score(self, prefix, target):
        """Whether `target` is green after the token ids `prefix` (a tuple)."""
        return self.processor._is_green(prefix, target)

    def _score_ngrams_in_passage(self, input_ids):
        """(tokens scored, green tokens) per row. Each scored token is the last of an n-gram:
        its context_width predecessors (lefthash) or itself and context_width - 1
        predecessors (selfhash, whose seed includes the token)."""
        selfhash = int(self.processor.seeding_scheme == "selfhash")
        n = self.processor.context_width + 1 - selfhash
        rows = np.asarray(input_ids.tolist(), dtype=np.int64)
        num_tokens_scored = np.zeros(rows.shape[0])
        green_token_count = np.zeros(rows.shape[0])
        for b_idx, row in enumerate(rows):
            ngrams = [tuple(int(t) for t in row[start:start + n]) for start in range(len(row) - n + 1)]
            frequencies = collections.Counter(ngrams)
            is_green = {
                ngram: self._get_ngram_score_cached(ngram if selfhash else ngram[:-1], ngram[-1])
                for ngram in frequencies
            }
            if self.ignore_repeated_ngrams:
                num_tokens_scored[b_idx] = len(frequencies)
                green_token_count[b_idx] = sum(is_green.values())
            else:
                num_tokens_scored[b_idx] = sum(frequencies.values())
                green_token_count[b_idx] = sum(count * is_green[ngram] for ngram, count in frequencies.items())
        return num_tokens_scored, green_token_count

    def _compute_z_score(self, green_token_count, total_num_tokens):
        expected = self.greenlist_ratio
        return (green_token_count - expected * total_num_tokens) / np.sqrt(
            total_num_tokens * expected * (1 - expected))

    def _compute_pval(self, x, loc=0, scale=1):
        """1 - Phi(z), with HF's closed-form approximation of the normal CDF."""
        z = (x - loc) / scale
        return 1 - (0.5 * (1 + np.sign(z) * (1 - np.exp(-2 * z ** 2 / np.pi))))

    def __call__(self, input_ids, z_threshold=3.0, return_dict=False):
        # As HF: if the first row starts with BOS, every row is taken to.
        if self.bos_token_id is not None and int(input_ids[0, 0]) == self.bos_token_id:
            input_ids = input_ids[:, 1:]
        if input_ids.shape[-1] - self.processor.context_width < 1:
            raise ValueError(
                f"Must have at least `1` token to score after the first "
                f"min_prefix_len={self.processor.context_width} tokens required by the seeding scheme."
            )
        num_tokens_scored, green_token_count = self._score_ngrams_in_passage(input_ids)
        z_score = self._compute_z_score(green_token_count, num_tokens_scored)
        prediction = z_score > z_threshold
        if not return_dict:
            return prediction
        p_value = self._compute_pval(z_score)
        return WatermarkDetectorOutput(
            num_tokens_scored=num_tokens_scored, num_green_tokens=green_token_count,
            green_fraction=green_token_count / num_tokens_scored, z_score=z_score, p_value=p_value,
            prediction=prediction, confidence=1 - p_value)


class SynthIDTextWatermarkDetector:
    """SynthID Text detection: the text's g-values (`logits_processor.compute_g_values`), masked
    where a context repeats or after EOS, are scored by `detector_module` (a trained Bayesian
    detector, or any callable `(g_values, mask)`), whose result is returned."""

    def __init__(self, detector_module, logits_processor, tokenizer):
        self.detector_module = detector_module
        self.logits_processor = logits_processor
        self.tokenizer = tokenizer

    def __call__(self, tokenized_outputs):
        processor = self.logits_processor
        eos_token_mask = processor.compute_eos_token_mask(
            tokenized_outputs, self.tokenizer.eos_token_id)[:, processor.ngram_len - 1:]
        context_repetition_mask = processor.compute_context_repetition_mask(tokenized_outputs)
        combined_mask = context_repetition_mask * eos_token_mask
        g_values = processor.compute_g_values(tokenized_outputs)
        return self.detector_module(g_values, combined_mask)


class BayesianDetectorConfig(PretrainedConfig):
    """A `BayesianDetectorModel`: `watermarking_depth` tournament layers and `base_rate`, the
    prior probability that a text is watermarked; `model_name` and `watermarking_config`
    record what the detector was trained for (`set_detector_information`)."""

    watermarking_depth: Optional[int] = None
    base_rate: float = 0.5
    model_name: Optional[str] = None
    watermarking_config: Optional[dict] = None

    def set_detector_information(self, model_name, watermarking_config):
        self.model_name = model_name
        self.watermarking_config = watermarking_config


@dataclass
class BayesianWatermarkDetectorModelOutput(ModelOutput):
    """loss (with labels): binary cross-entropy plus the delta penalty; posterior_probabilities:
    P(watermarked | g-values) per text."""

    loss: Optional[object] = None
    posterior_probabilities: Optional[object] = None


class BayesianDetectorWatermarkedLikelihood(nn.Module):
    """P(g-values | watermarked) for binary g-values. In a tournament match a layer's g-value
    tells something only when the two competing tokens differ ("two unique tokens"); the
    chance of that at layer l is a logistic model of the g-values of the layers before it:
    sigmoid(delta[l] . g[:l] + beta[l])."""

    def __init__(self, watermarking_depth):
        super().__init__()
        self.watermarking_depth = watermarking_depth
        self.beta = nn.Parameter(-2.5 + 0.001 * core.randn(1, 1, watermarking_depth))
        self.delta = nn.Parameter(0.001 * core.randn(1, 1, watermarking_depth, watermarking_depth))

    def _compute_latents(self, g_values):
        """(P(one unique token), P(two unique tokens)), each (batch, length, depth)."""
        x = g_values.unsqueeze(-2).repeat_interleave(self.watermarking_depth, dim=-2)
        x = core.tril(x, diagonal=-1).to(self.delta.dtype)    # layer l sees layers before it only
        logits = (self.delta * x).sum(-1) + self.beta
        p_two_unique_tokens = core.sigmoid(logits)
        return 1 - p_two_unique_tokens, p_two_unique_tokens

    def forward(self, g_values):
        p_one_unique_token, p_two_unique_tokens = self._compute_latents(g_values)
        return 0.5 * ((g_values + 0.5) * p_two_unique_tokens + p_one_unique_token)


class BayesianDetectorModel(PreTrainedModel):
    """SynthID's Bayesian detector (Dathathri et al. 2024, "BayesianScore"):
    P(watermarked | g-values) = sigmoid(log-odds of the prior + the summed log-likelihood
    ratios of the unmasked g-values), unwatermarked g-values being fair coin flips. Train it
    on g-values of watermarked and plain text (labels 1/0); `forward(g_values, mask)`
    returns the posteriors. Only for tournament watermarking with Bernoulli(0.5) g-values.
    """

    config_class = BayesianDetectorConfig
    base_model_prefix = "model"

    def __init__(self, config):
        super().__init__(config)
        self.watermarking_depth = config.watermarking_depth
        self.base_rate = config.base_rate
        self.likelihood_model_watermarked = BayesianDetectorWatermarkedLikelihood(
            watermarking_depth=self.watermarking_depth)
        self.prior = nn.Parameter(core.tensor([self.base_rate]))
        self.post_init()

    def _init_weights(self, module):
        """The parameters keep the values they are built with (a small random delta, beta near
        -2.5, the prior at base_rate), as in HF."""

    def _compute_posterior(self, likelihoods_watermarked, likelihoods_unwatermarked, mask, prior):
        """P(watermarked | g-values) per row, from likelihoods (batch, length, depth) under each
        hypothesis, the mask (batch, length) of g-values to use and the prior P(watermarked)."""
        mask = mask.unsqueeze(-1)
        prior = core.clamp(prior, min=1e-5, max=1 - 1e-5)
        log_odds = (core.log(core.clamp(likelihoods_watermarked, min=1e-30))
                    - core.log(core.clamp(likelihoods_unwatermarked, min=1e-30)))
        relative_surprisal_likelihood = (log_odds * mask).reshape(log_odds.shape[0], -1).sum(-1)
        relative_surprisal_prior = core.log(prior) - core.log(1 - prior)
        return core.sigmoid(relative_surprisal_prior + relative_surprisal_likelihood)

    def forward(self, g_values, mask, labels=None, loss_batch_weight=1, return_dict=False):
        likelihoods_watermarked = self.likelihood_model_watermarked(g_values)
        likelihoods_unwatermarked = 0.5 * core.ones_like(g_values)
        out = self._compute_posterior(likelihoods_watermarked, likelihoods_unwatermarked, mask, self.prior)
        loss = None
        if labels is not None:
            penalty = (self.likelihood_model_watermarked.delta ** 2).sum() * loss_batch_weight
            loss = nn.BCELoss()(core.clamp(out, 1e-5, 1 - 1e-5), labels) + penalty
        if not return_dict:
            return (out,) if loss is None else (out, loss)
        return BayesianWatermarkDetectorModelOutput(loss=loss, posterior_probabilities=out)
