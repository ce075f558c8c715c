# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`GenerationMixin.generate()`: greedy decoding, multinomial sampling, beam search and
assisted decoding (`assistant_model=`, `prompt_lookup_num_tokens=`; see candidate_generator)
for decoder-only models, and greedy decoding, sampling and beam search for encoder-decoders,
with Hugging Face transformers v5's arguments, defaults and results.

An encoder-decoder's prompt goes through the encoder once (its output rides along in
`encoder_outputs`, repeated per beam); the decoder starts from `decoder_start_token_id`
(after any `decoder_input_ids` the caller gives) and caches its self-attention keys and the
projected encoder output in an `EncoderDecoderCache`.

The decoding loops follow HF v5 step for step (same processors in the same order, same beam
bookkeeping), so a model that computes the same logits generates the same tokens and
scores. Speed comes from the model side (a KV cache written in place, only the last
position's logits via `logits_to_keep`) and from keeping per-step work here small: the
generated ids are written into a preallocated buffer, processors see only the last step's
scores, and an all-ones attention mask is dropped so no padding mask is built at all.
"""
import copy
import inspect
import logging
import warnings
from dataclasses import dataclass
from typing import Optional

from ... import core
from ...core.nn import functional as F
from ..cache_utils import Cache, DynamicCache, EncoderDecoderCache, StaticCache, StaticLayer
from ..utils.generic import ModelOutput
from .candidate_generator import (
    AssistantVocabTranslatorCache, AssistedCandidateGenerator, AssistedCandidateGeneratorDifferentTokenizers,
    EarlyExitCandidateGenerator, PromptLookupCandidateGenerator, UniversalSpeculativeDecodingGenerator,
)
from .configuration_utils import DEFAULT_GENERATION_PARAMS, GenerationConfig, _as_watermarking_config
from .logits_process import (
    EncoderNoRepeatNGramLogitsProcessor, EncoderRepetitionPenaltyLogitsProcessor, EpsilonLogitsWarper,
    EtaLogitsWarper, ExponentialDecayLengthPenalty, ForcedBOSTokenLogitsProcessor, ForcedEOSTokenLogitsProcessor,
    InfNanRemoveLogitsProcessor, LogitNormalization, LogitsProcessorList, MinLengthLogitsProcessor,
    MinNewTokensLengthLogitsProcessor, MinPLogitsWarper, NoBadWordsLogitsProcessor, NoRepeatNGramLogitsProcessor,
    PrefixConstrainedLogitsProcessor, RepetitionPenaltyLogitsProcessor, SequenceBiasLogitsProcessor,
    SuppressTokensAtBeginLogitsProcessor, SuppressTokensLogitsProcessor, TemperatureLogitsWarper, TopHLogitsWarper,
    TopKLogitsWarper, TopPLogitsWarper, TypicalLogitsWarper, UnbatchedClassifierFreeGuidanceLogitsProcessor,
)
from .stopping_criteria import (
    ConfidenceCriteria, EosTokenCriteria, MaxLengthCriteria, MaxTimeCriteria, StoppingCriteria, StoppingCriteriaList,
    StopStringCriteria,
)

logger = logging.getLogger(__name__)

__all__ = [
    "GenerateBeamDecoderOnlyOutput", "GenerateBeamEncoderDecoderOutput", "GenerateDecoderOnlyOutput",
    "GenerateEncoderDecoderOutput", "GenerationMixin",
]

STATIC_CACHE_IMPLEMENTATIONS = ("static", "sliding_window", "hybrid", "hybrid_chunked")


@dataclass
class GenerateDecoderOnlyOutput(ModelOutput):
    """`generate()`'s result for greedy decoding and sampling with `return_dict_in_generate=True`.

    sequences: (batch * num_return_sequences, length) prompt + generated ids.
    scores: per generated token, the processed scores (batch, vocab) (`output_scores`).
    logits: per generated token, the raw logits (batch, vocab) (`output_logits`).
    attentions / hidden_states: per step, the model's outputs (`output_attentions`, ...).
    past_key_values: the cache after the last step.
    """

    sequences: Optional[object] = None
    scores: Optional[tuple] = None
    logits: Optional[tuple] = None
    attentions: Optional[tuple] = None
    hidden_states: Optional[tuple] = None
    past_key_values: Optional[object] = None


@dataclass
class GenerateBeamDecoderOnlyOutput(ModelOutput):
    """`generate()`'s result for beam search with `return_dict_in_generate=True`.

    sequences_scores: (batch * num_return_sequences,) final length-penalised scores (`output_scores`).
    scores: per step, the processed log-probabilities of every beam (batch * num_beams, vocab).
    beam_indices: (batch * num_return_sequences, generated length) the beam row each token came from
    (-1 past the end of a sequence).
    """

    sequences: Optional[object] = None
    sequences_scores: Optional[object] = None
    scores: Optional[tuple] = None
    logits: Optional[tuple] = None
    beam_indices: Optional[object] = None
    attentions: Optional[tuple] = None
    hidden_states: Optional[tuple] = None
    past_key_values: Optional[object] = None


@dataclass
class GenerateEncoderDecoderOutput(ModelOutput):
    """HF's result type for an encoder-decoder model's greedy decoding or sampling with
    `return_dict_in_generate=True`: as GenerateDecoderOnlyOutput, with the encoder's
    attentions and hidden states (once) and the decoder's self- and cross-attentions and
    hidden states (per step) in place of `attentions` / `hidden_states`."""

    sequences: Optional[object] = None
    scores: Optional[tuple] = None
    logits: Optional[tuple] = None
    encoder_attentions: Optional[tuple] = None
    encoder_hidden_states: Optional[tuple] = None
    decoder_attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None
    decoder_hidden_states: Optional[tuple] = None
    past_key_values: Optional[object] = None


@dataclass
class GenerateBeamEncoderDecoderOutput(ModelOutput):
    """HF's result type for an encoder-decoder model's beam search with
    `return_dict_in_generate=True`: GenerateBeamDecoderOnlyOutput's fields with the
    encoder/decoder split of GenerateEncoderDecoderOutput."""

    sequences: Optional[object] = None
    sequences_scores: Optional[object] = None
    scores: Optional[tuple] = None
    logits: Optional[tuple] = None
    beam_indices: Optional[object] = None
    encoder_attentions: Optional[tuple] = None
    encoder_hidden_states: Optional[tuple] = None
    decoder_attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None
    decoder_hidden_states: Optional[tuple] = None
    past_key_values: Optional[object] = None


def _speculative_sampling(candidate_input_ids, candidate_logits, candidate_length, new_logits, is_done_candidate):
    """(accepted tokens (1, n_matches + 1), n_matches as a 0-d tensor) by speculative sampling
    (Leviathan et al. 2023, algorithm 1), with HF's arguments: draft token i is kept with
    probability min(1, p_i / q_i) (p the model's distribution from `new_logits`
    (1, candidate_length + 1, vocab), q the assistant's from `candidate_logits`); at the first
    rejection a token is drawn from max(0, p - q) normalised, and after a fully accepted draft
    one more from p. The kept tokens are distributed as sampling the model alone would give.
    When the draft ends the generation (`is_done_candidate`) and is fully accepted, its last
    token is the last one: nothing is drawn after it."""
    new_candidate_input_ids = candidate_input_ids[:, -candidate_length:]
    q = F.softmax(candidate_logits, dim=-1)
    p = F.softmax(new_logits, dim=-1)
    tokens = new_candidate_input_ids[0]
    positions = core.arange(candidate_length, device=tokens.device)
    probability_ratio = p[0, positions, tokens] / q[0, positions, tokens]
    is_accepted = core.rand_like(probability_ratio) <= probability_ratio
    n_matches = ((~is_accepted).long().cumsum(dim=-1) < 1).sum()
    matched = int(n_matches)
    if bool(is_done_candidate) and matched == candidate_length:
        n_matches = n_matches - 1
        return new_candidate_input_ids[:, :matched], n_matches
    p_next = p[0, matched]
    if matched < candidate_logits.shape[1]:
        p_prime = (p_next - q[0, matched]).clamp(min=0)
        total = p_prime.sum()
        # max(0, p - q) has mass wherever a rejection is possible; rounding aside, fall back to p.
        p_prime = p_prime / total if total.item() > 0 else p_next
    else:
        p_prime = p_next
    t = core.multinomial(p_prime, num_samples=1).to(new_candidate_input_ids.dtype)[None, :]
    valid_tokens = core.cat([new_candidate_input_ids[:, :matched], t], dim=-1) if matched > 0 else t
    return valid_tokens, n_matches


def _split_model_outputs(outputs, new_outputs, cur_len, added_len, is_decoder_attention=False):
    """Append to `outputs` one entry per token assisted decoding just added, as HF lays them out:
    `new_outputs` (per layer, one forward over several positions) is cut into the rows of
    each new token, attentions to the keys that token saw. The first forward covered the
    prompt too: its prompt rows form one entry, as in plain decoding."""
    offset = 0
    if len(outputs) == 0:
        outputs += (tuple(layer[..., :cur_len, :cur_len if is_decoder_attention else layer.shape[-1]]
                          for layer in new_outputs),)
        offset = cur_len                     # the rows of the tokens after the prompt
        cur_len += 1
        added_len -= cur_len
    for i in range(added_len):
        outputs += (tuple(layer[..., offset + i:offset + i + 1, :cur_len + i if is_decoder_attention else
                                layer.shape[-1]] for layer in new_outputs),)
    return outputs


def _vocabulary_extensions(vocab, prefix):
    """The vocabulary entries that token healing may put in place of `prefix`, as HF's
    ExtensionsTrie finds them: the prefix is followed through the vocabulary's character
    trie as far as it goes, and every entry below that point is returned spelled as
    `prefix` + the rest of the entry (so when the walk stops early, the names are not
    entries and map to the unknown token, as in HF)."""
    matched = 0
    while matched < len(prefix) and any(token.startswith(prefix[:matched + 1]) for token in vocab):
        matched += 1
    stem = prefix[:matched]
    return [prefix + token[matched:] for token in vocab if token.startswith(stem)]


def _generation_mode(config, assistant_model=None):
    """'greedy', 'sample', 'beam' (beam sampling included) or 'assisted', or an error for HF
    strategies that moved out of transformers' core in v5."""
    if assistant_model is not None or config.prompt_lookup_num_tokens is not None \
            or config.assistant_early_exit is not None:
        if config.num_beams is not None and config.num_beams > 1:
            raise ValueError("assisted generate (assistant_model / prompt_lookup_num_tokens / assistant_early_exit) "
                             "does not support beam search: set num_beams=1")
        if config.num_return_sequences is not None and config.num_return_sequences > 1:
            raise ValueError("assisted generate returns one sequence: set num_return_sequences=1")
        return "assisted"
    if config.constraints is not None or config.force_words_ids is not None:
        raise ValueError("constrained beam search (constraints / force_words_ids) is not supported")
    if config.num_beam_groups is not None and config.num_beam_groups > 1:
        raise ValueError("group beam search (num_beam_groups > 1) is not supported")
    if config.dola_layers is not None:
        raise ValueError("DoLa decoding (dola_layers) is not supported")
    if config.num_beams is not None and config.num_beams > 1 and config.low_memory:
        raise ValueError("`low_memory=True` (sequential beam search) is not supported: HF dropped it in its beam "
                         "search refactor (#35802)")
    if config.num_beams is None or config.num_beams == 1:
        if config.do_sample is True:
            return "sample"
        if config.penalty_alpha is not None and config.penalty_alpha > 0 and config.top_k is not None \
                and config.top_k > 1:
            raise ValueError("contrastive search (penalty_alpha > 0) is not supported")
        return "greedy"
    return "beam"


def _parameters(fn):
    return set(inspect.signature(fn).parameters)


# Encoder families whose causal-LM class masks the future only when `config.is_decoder` is set;
# loaded from an encoder checkpoint as it is, they attend in both directions.
ENCODERS_WITH_CAUSAL_LM = frozenset({"bert", "roberta", "xlm-roberta"})


def attends_both_ways(config):
    """True for an encoder family's config without `is_decoder=True`: its LM head class sees the
    whole sequence, so what it generates is not a continuation."""
    return getattr(config, "model_type", None) in ENCODERS_WITH_CAUSAL_LM and not getattr(config, "is_decoder", False)


def _check_prompt(model, inputs, kwargs):
    """Refuse a prompt generate() cannot continue, before any work: not a tensor, not
    (batch, sequence), empty, or with a padding mask of another shape."""
    from ..modeling_inputs import not_a_tensor_error

    name = model.main_input_name
    prompt = inputs if inputs is not None else kwargs.get(name)
    if prompt is None or name != "input_ids":
        return
    if not isinstance(prompt, core.Tensor):
        raise not_a_tensor_error(name, prompt)
    if prompt.ndim != 2:
        raise ValueError(f"{name} passed to generate() should have 2 dimensions (batch_size, sequence_length), got "
                         f"shape {tuple(prompt.shape)}" + (": add the batch dimension with unsqueeze(0)"
                                                          if prompt.ndim == 1 else ""))
    if prompt.shape[1] == 0 and kwargs.get("inputs_embeds") is None:
        raise ValueError(f"{name} passed to generate() is empty (shape {tuple(prompt.shape)}): give at least one "
                         "token to continue, e.g. the tokenizer's bos_token_id")
    mask = kwargs.get("attention_mask")
    if isinstance(mask, core.Tensor) and mask.ndim == 2 and "past_key_values" not in kwargs \
            and mask.shape != prompt.shape:
        raise ValueError(f"attention_mask has shape {tuple(mask.shape)} but {name} has shape {tuple(prompt.shape)}: "
                         "pass the attention_mask the tokenizer returned with these ids")


def _padded_to_cache(attention_mask, cache):
    """A 2-D attention mask padded with zeros to a static cache's length: every step then sees
    a mask of one shape, so one compiled graph serves them all."""
    if attention_mask.ndim != 2 or not cache.is_compileable:
        return attention_mask
    width = cache.get_max_length()
    if attention_mask.shape[1] >= width:
        return attention_mask
    padding = attention_mask.new_zeros((attention_mask.shape[0], width - attention_mask.shape[1]))
    return core.cat([attention_mask, padding], dim=1)


def _decoder_static_cache(config, max_cache_len):
    """A StaticCache of one layer per decoder layer of an encoder-decoder. Its config's
    num_hidden_layers counts the encoder's (BART, Whisper) or both stacks' (T5) layers, and a
    layer no step writes would keep the cache from being captured as a compiled step's input."""
    cache = StaticCache(config=config, max_cache_len=max_cache_len)
    depth = next((getattr(config, name) for name in ("decoder_layers", "num_decoder_layers")
                  if getattr(config, name, None) is not None), None)
    if depth is not None:
        del cache.layers[depth:]
    return cache


def _static_cache_fits(cache, batch_size, max_cache_len, model):
    """Whether a static cache from an earlier generate() serves one of `batch_size` rows and
    `max_cache_len` positions (HF's test, which allows a longer cache: the positions past the
    prompt and new tokens stay masked), with every allocated layer's storage of this batch
    size and of the model's dtype and device (else its writes would convert the new states).
    A cache with sliding-window layers is not reused: their prompt path branches on how many
    positions they hold, which a compiled forward (fullgraph) cannot capture, and a new cache's
    prompt runs eagerly while it allocates."""
    if not isinstance(cache, StaticCache) or cache.max_cache_len < max_cache_len:
        return False
    for layer in cache.layers:
        if type(layer) is not StaticLayer:
            return False
        if layer.is_initialized and (layer.keys.shape[0] != batch_size or layer.keys.dtype != model.dtype
                                     or layer.keys.device != model.device):
            return False
    return True


def _accepts(fn, name):
    """Whether fn takes keyword `name` (explicitly, or through **kwargs)."""
    params = inspect.signature(fn).parameters
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _last_step_logits(logits):
    """The last position's logits as a fresh float32 tensor (user processors may edit it in place)."""
    last = logits[:, -1, :]
    return last.float() if last.dtype != core.float32 else last.clone()


class GenerationMixin:
    """Adds `generate()` to a model with a language-modelling head.

    The model's `forward` must return an object with `logits` (batch, seq, vocab) and, when it
    uses a cache, `past_key_values`; it may accept `attention_mask`, `position_ids`,
    `past_key_values`, `use_cache` and `logits_to_keep`, which `generate()` then passes.
    """

    # Whether decoder inputs given to generate() that do not begin with `decoder_start_token_id`
    # get it put in front. Whisper's do not: its prompts may begin with `<|startofprev|>` and the
    # previous text, the start token coming later.
    _prepends_decoder_start = True

    # ------------------------------------------------------------------ model inputs

    def prepare_inputs_for_generation(self, input_ids, next_sequence_length=None, past_key_values=None,
                                      attention_mask=None, inputs_embeds=None, is_first_iteration=False, **kwargs):
        """The keyword arguments of one forward call: only the `next_sequence_length` newest
        tokens (all when None), their position ids, the cache and the 2-D attention mask;
        `inputs_embeds` replace the ids on the first iteration only.

        An encoder-decoder gets the ids as `decoder_input_ids`, `attention_mask` (the
        encoder's padding) and everything else in kwargs (`encoder_outputs`,
        `decoder_attention_mask`, ...) as they are."""
        if self.config.is_encoder_decoder:
            if next_sequence_length is not None:
                input_ids = input_ids[:, -next_sequence_length:]
            model_inputs = {"decoder_input_ids": input_ids}
            if past_key_values is not None:
                model_inputs["past_key_values"] = past_key_values
            if attention_mask is not None:
                model_inputs["attention_mask"] = attention_mask
            for key, value in kwargs.items():
                if key not in ("labels", "next_sequence_length", "decoder_input_ids"):
                    model_inputs[key] = value
            if model_inputs.get("decoder_attention_mask") is not None and past_key_values is not None:
                model_inputs["decoder_attention_mask"] = _padded_to_cache(model_inputs["decoder_attention_mask"],
                                                                          past_key_values)
            return model_inputs
        model_inputs = {}
        if inputs_embeds is not None and is_first_iteration:
            model_inputs["input_ids"] = None
            embeds = inputs_embeds[:, -next_sequence_length:, :] if next_sequence_length is not None else inputs_embeds
            model_inputs["inputs_embeds"] = embeds
            sequence_length = embeds.shape[1]
        else:
            if next_sequence_length is not None:
                input_ids = input_ids[:, -next_sequence_length:]
            model_inputs["input_ids"] = input_ids
            sequence_length = input_ids.shape[1]

        if past_key_values is not None:
            model_inputs["past_key_values"] = past_key_values
            if attention_mask is not None:
                attention_mask = _padded_to_cache(attention_mask, past_key_values)
        for name in ("position_ids", "token_type_ids"):
            value = kwargs.pop(name, None)
            if value is not None:
                if value.shape[-1] != sequence_length:
                    value = value[..., -sequence_length:]
                model_inputs[name] = value
        if attention_mask is not None:
            model_inputs["attention_mask"] = attention_mask
        for key, value in kwargs.items():
            if key not in ("labels", "next_sequence_length") and key not in model_inputs:
                model_inputs[key] = value
        return model_inputs

    def _prepare_model_inputs(self, inputs, bos_token_id, model_kwargs):
        """(the main input tensor, its name, the remaining model kwargs). An encoder-decoder's
        main input is its encoder's: `inputs_embeds` given instead of ids go to the encoder."""
        input_name = self.main_input_name
        is_encoder_decoder = self.config.is_encoder_decoder
        encoder = getattr(self, "encoder", None) if is_encoder_decoder else None
        if encoder is not None and getattr(encoder, "main_input_name", input_name) != input_name:
            input_name = encoder.main_input_name
        from_kwargs = model_kwargs.pop(input_name, None)
        if from_kwargs is not None and inputs is not None:
            raise ValueError(
                f"`inputs`: {inputs}` were passed alongside {input_name} which is not allowed. "
                f"Make sure to either pass {inputs} or {input_name}=..."
            )
        if from_kwargs is not None:
            inputs = from_kwargs
        if input_name == "input_ids" and "inputs_embeds" in model_kwargs:
            if model_kwargs["inputs_embeds"] is None:
                model_kwargs.pop("inputs_embeds")
            elif is_encoder_decoder:
                if inputs is not None:
                    raise ValueError("You passed `inputs_embeds` and `input_ids` to `.generate()`. Please pick one.")
                return model_kwargs.pop("inputs_embeds"), "inputs_embeds", model_kwargs
            else:
                if "inputs_embeds" not in _parameters(self.prepare_inputs_for_generation):
                    raise ValueError(
                        f"You passed `inputs_embeds` to `.generate()`, but the model class {type(self).__name__} "
                        "doesn't have its forwarding implemented."
                    )
                model_kwargs["input_ids"] = self._maybe_initialize_input_ids_for_generation(
                    inputs, bos_token_id, model_kwargs)
                return model_kwargs["inputs_embeds"], "inputs_embeds", model_kwargs
        inputs = self._maybe_initialize_input_ids_for_generation(inputs, bos_token_id, model_kwargs)
        return inputs, input_name, model_kwargs

    def _maybe_initialize_input_ids_for_generation(self, inputs, bos_token_id, model_kwargs):
        """Without a prompt: a (batch, 0) tensor next to inputs_embeds, else one BOS per row;
        for an encoder-decoder given `encoder_outputs`, placeholder ids of -100 in the
        encoder's shape (they are never encoded)."""
        if inputs is not None:
            return inputs
        encoder_outputs = model_kwargs.get("encoder_outputs")
        if self.config.is_encoder_decoder and encoder_outputs is not None:
            shape = tuple(encoder_outputs[0].shape[:-1])
            return core.full(shape, -100, dtype=core.int64, device=self.device)
        batch_size = next((v.shape[0] for v in model_kwargs.values() if isinstance(v, core.Tensor)), 1)
        if "inputs_embeds" in model_kwargs:
            return core.ones((batch_size, 0), dtype=core.int64, device=model_kwargs["inputs_embeds"].device)
        if bos_token_id is None:
            raise ValueError("`bos_token_id` has to be defined when no `input_ids` are provided.")
        return core.full((batch_size, 1), int(bos_token_id), dtype=core.int64, device=self.device)

    def _prepare_attention_mask_for_generation(self, inputs_tensor, generation_config, model_kwargs):
        """0 where the prompt holds the pad token (unless pad is also an EOS id), else 1."""
        pad = generation_config._pad_token_tensor
        eos = generation_config._eos_token_tensor
        if "input_ids" in model_kwargs and model_kwargs["input_ids"].shape[1] > 0:
            inputs_tensor = model_kwargs["input_ids"]
        default = core.ones(tuple(inputs_tensor.shape[:2]), dtype=core.int64, device=inputs_tensor.device)
        if pad is None:
            return default
        if inputs_tensor.ndim != 2 or inputs_tensor.dtype not in (core.int32, core.int64):
            return default
        pad_in_inputs = bool(core.isin(inputs_tensor, pad).any())
        pad_is_eos = eos is not None and bool(core.isin(eos, pad).any())
        if pad_in_inputs and not pad_is_eos:
            return inputs_tensor.ne(pad).long()
        return default

    def _prepare_position_ids_for_generation(self, inputs_tensor, model_kwargs):
        """Positions that skip left padding (cumsum of the mask), else 0.. past + length."""
        if "input_ids" in model_kwargs and model_kwargs["input_ids"].shape[1] > 0:
            inputs_tensor = model_kwargs["input_ids"]
        attention_mask = model_kwargs.get("attention_mask")
        if attention_mask is not None:
            position_ids = core.cumsum(attention_mask.long(), dim=-1) - 1
            return position_ids.masked_fill(attention_mask == 0, 1)
        cache = model_kwargs.get("past_key_values")
        past_length = cache.get_seq_length() if cache is not None else 0
        return core.arange(inputs_tensor.shape[1] + past_length, dtype=core.int64,
                           device=inputs_tensor.device).unsqueeze(0)

    def _prepare_encoder_decoder_kwargs_for_generation(self, inputs_tensor, model_kwargs, model_input_name,
                                                       generation_config):
        """Run the encoder once over the prompt and keep its output in
        `model_kwargs["encoder_outputs"]`. It gets the model kwargs meant for it (none of the
        decoder's, nor the cache's) and the attentions / hidden states generate() will return."""
        encoder = self.get_encoder()
        irrelevant_prefixes = ("decoder_", "cross_attn", "use_cache")
        encoder_kwargs = {key: value for key, value in model_kwargs.items()
                          if not key.startswith(irrelevant_prefixes)}
        encoder_params = _parameters(encoder.forward)
        if not encoder_params & {"kwargs", "model_kwargs"}:
            encoder_kwargs = {key: value for key, value in encoder_kwargs.items() if key in encoder_params}
        encoder_kwargs["output_attentions"] = generation_config.output_attentions
        encoder_kwargs["output_hidden_states"] = generation_config.output_hidden_states
        encoder_kwargs["return_dict"] = True
        encoder_kwargs[model_input_name if model_input_name is not None else self.main_input_name] = inputs_tensor
        model_kwargs["encoder_outputs"] = encoder(**encoder_kwargs)
        return model_kwargs

    def _prepare_decoder_input_ids_for_generation(self, batch_size, model_input_name, model_kwargs,
                                                  decoder_start_token_id, device=None):
        """(the decoder's first ids, model kwargs): `decoder_start_token_id` per row (a scalar,
        or one id per row), followed by the caller's `decoder_input_ids` when they do not
        already start with it (a given `decoder_attention_mask` then grows by one column;
        see `_prepends_decoder_start`)."""
        if "decoder_input_ids" in model_kwargs:
            decoder_input_ids = model_kwargs.pop("decoder_input_ids")
        elif "input_ids" in model_kwargs and model_input_name != "input_ids":
            decoder_input_ids = model_kwargs.pop("input_ids")
        else:
            decoder_input_ids = None
        device = device if device is not None else self.device
        if decoder_start_token_id.ndim == 1:
            if decoder_start_token_id.shape[0] != batch_size:
                raise ValueError(f"`decoder_start_token_id` expected to have length {batch_size} but got "
                                 f"{decoder_start_token_id.shape[0]}")
            start = decoder_start_token_id.view(-1, 1).to(device)
        else:
            start = core.full((batch_size, 1), int(decoder_start_token_id), dtype=core.int64, device=device)
        if decoder_input_ids is None:
            return start, model_kwargs
        if self._prepends_decoder_start and bool((decoder_input_ids[:, 0] != start[:, 0]).all()):
            decoder_input_ids = core.cat([start.to(decoder_input_ids.dtype), decoder_input_ids], dim=-1)
            decoder_attention_mask = model_kwargs.get("decoder_attention_mask")
            if decoder_attention_mask is not None:
                model_kwargs["decoder_attention_mask"] = core.cat(
                    [core.ones_like(decoder_attention_mask)[:, :1], decoder_attention_mask], dim=-1)
        return decoder_input_ids, model_kwargs

    def _expand_inputs_for_generation(self, expand_size=1, is_encoder_decoder=False, input_ids=None,
                                      **model_kwargs):
        """Repeat every row (ids and tensor kwargs, the encoder's output too) expand_size times:
        one row per beam/sample."""
        if expand_size == 1:
            return input_ids, model_kwargs
        if input_ids is not None:
            input_ids = input_ids.repeat_interleave(expand_size, dim=0)
        for key, value in model_kwargs.items():
            if isinstance(value, core.Tensor):
                batch_dim = 1 if key == "position_ids" and value.ndim == 3 else 0
                model_kwargs[key] = value.repeat_interleave(expand_size, dim=batch_dim)
        if is_encoder_decoder:
            encoder_outputs = model_kwargs.get("encoder_outputs")
            if encoder_outputs is None:
                raise ValueError("If `is_encoder_decoder` is True, make sure that `encoder_outputs` is defined.")
            for key, value in list(encoder_outputs.items()):
                if isinstance(value, core.Tensor):
                    encoder_outputs[key] = value.repeat_interleave(expand_size, dim=0)
        return input_ids, model_kwargs

    def _update_model_kwargs_for_generation(self, outputs, model_kwargs, is_encoder_decoder=False,
                                            num_new_tokens=1):
        """Carry the cache over and extend position ids, token type ids and the mask by the new tokens.

        With a padding mask, a new token's position is the number of attended tokens before it
        (HF's cumsum of the mask, so right padding is skipped too, and generating in two calls
        through a cache gives the positions of one call); without one, positions count on.
        An encoder-decoder's `attention_mask` is the encoder's and stays; its
        `decoder_attention_mask` grows instead."""
        if "past_key_values" in outputs:
            model_kwargs["past_key_values"] = outputs.past_key_values
        cache_position = model_kwargs.get("cache_position")
        if cache_position is not None:
            step = 1 if num_new_tokens == 1 else core.arange(
                1, num_new_tokens + 1, dtype=cache_position.dtype, device=cache_position.device)
            model_kwargs["cache_position"] = cache_position[-1:] + step
        if self.config.is_encoder_decoder:
            decoder_attention_mask = model_kwargs.get("decoder_attention_mask")
            if decoder_attention_mask is not None:
                model_kwargs["decoder_attention_mask"] = core.cat(
                    [decoder_attention_mask,
                     decoder_attention_mask.new_ones((decoder_attention_mask.shape[0], num_new_tokens))], dim=-1)
            return model_kwargs
        token_type_ids = model_kwargs.get("token_type_ids")
        if token_type_ids is not None:
            model_kwargs["token_type_ids"] = core.cat([token_type_ids, token_type_ids[:, -num_new_tokens:]], dim=-1)
        attention_mask = model_kwargs.get("attention_mask")
        if attention_mask is not None:
            attention_mask = core.cat(
                [attention_mask, attention_mask.new_ones((attention_mask.shape[0], num_new_tokens))], dim=-1)
            model_kwargs["attention_mask"] = attention_mask
        position_ids = model_kwargs.get("position_ids")
        if position_ids is not None:
            if attention_mask is not None and attention_mask.ndim == 2 and position_ids.ndim == 2:
                offsets = core.arange(num_new_tokens, dtype=position_ids.dtype, device=position_ids.device)
                attended = attention_mask.long().sum(-1, keepdim=True).to(position_ids.dtype)
                new_positions = attended - num_new_tokens + offsets
            elif num_new_tokens == 1:       # a decoding step: two ops where the general case takes four
                new_positions = position_ids[..., -1:] + 1
            else:
                shape = [1] * (position_ids.ndim - 1) + [-1]
                offsets = core.arange(num_new_tokens, dtype=position_ids.dtype, device=position_ids.device)
                new_positions = offsets.view(*shape) + position_ids[..., -1:] + 1
            model_kwargs["position_ids"] = core.cat([position_ids, new_positions], dim=-1)
        return model_kwargs

    def _validate_model_kwargs(self, model_kwargs):
        """Reject keyword arguments neither generate() nor the model uses (typos show up here)."""
        model_args = _parameters(self.prepare_inputs_for_generation)
        if "kwargs" in model_args or "model_kwargs" in model_args:
            model_args |= _parameters(self.forward)
        forward_takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD
                                for p in inspect.signature(self.forward).parameters.values())
        unused = [key for key, value in model_kwargs.items()
                  if value is not None and key not in model_args and not forward_takes_any]
        if unused:
            raise ValueError(
                f"The following `model_kwargs` are not used by the model: {unused} (note: typos in the"
                " generate arguments will also show up in this list)"
            )

    # ------------------------------------------------------------------ configuration

    def _prepare_generation_config(self, generation_config, **kwargs):
        """Priority: generate() kwargs / `generation_config` > model.generation_config > defaults.
        Returns (the config, the kwargs that are not generation settings: model kwargs)."""
        provided = generation_config is not None
        if generation_config is None:
            legacy = self.config._get_generation_parameters() if hasattr(self.config, "_get_generation_parameters") \
                else {}
            if legacy:
                raise ValueError(
                    "You have modified the pretrained model configuration to control generation. We detected the "
                    f"following values set - {legacy}. This strategy to control generation is not supported anymore. "
                    "Please use and modify `model.generation_config`."
                )
            generation_config = GenerationConfig()
        generation_config = copy.deepcopy(generation_config)
        if self.generation_config is not None:
            generation_config.update(**self.generation_config.to_dict(), defaults_only=True,
                                     allow_custom_entries=True)
        generation_config.update(**DEFAULT_GENERATION_PARAMS, defaults_only=True)
        model_kwargs = generation_config.update(**kwargs)
        if generation_config.cache_implementation == "hybrid":
            generation_config.cache_implementation = None
        if provided and set(kwargs) - set(model_kwargs):
            logger.warning(
                "Passing `generation_config` together with generation-related arguments=(%s) is deprecated; pass "
                "either a `generation_config` object OR all generation parameters explicitly.",
                sorted(set(kwargs) - set(model_kwargs)),
            )
        if generation_config.output_attentions:
            model_kwargs["output_attentions"] = True
        if generation_config.output_hidden_states:
            model_kwargs["output_hidden_states"] = True
        return generation_config, model_kwargs

    def _prepare_special_tokens(self, generation_config, kwargs_has_attention_mask=None, device=None,
                                batch_size=None):
        """Store bos/eos/pad (and decoder start) ids as tensors on the config
        (`_eos_token_tensor` is always 1-D); an unset pad id becomes the first EOS id, an
        unset decoder start id the BOS id."""

        def as_tensor(token):
            if token is None:
                return None
            if isinstance(token, core.Tensor):
                return token.to(device)
            return core.tensor(token, dtype=core.int64, device=device)

        bos = as_tensor(generation_config.bos_token_id)
        eos = as_tensor(generation_config.eos_token_id)
        pad = as_tensor(generation_config.pad_token_id)
        decoder_start = as_tensor(generation_config.decoder_start_token_id)
        if self.config.is_encoder_decoder:
            decoder_start = decoder_start if decoder_start is not None else bos
            if decoder_start is None:
                raise ValueError(
                    "`decoder_start_token_id` or `bos_token_id` has to be defined for encoder-decoder generation.")
        batched = batch_size is None or batch_size > 1
        if eos is not None and eos.ndim == 0:
            eos = eos.unsqueeze(0)
        if pad is None and eos is not None:
            if kwargs_has_attention_mask is False and batched:
                logger.warning(
                    "The attention mask and the pad token id were not set, with a batched input. As a consequence, you "
                    "may observe unexpected behavior. Please pass your input's `attention_mask` to obtain reliable "
                    "results."
                )
            pad = eos[0]
        if eos is not None and pad is not None and bool(core.isin(eos, pad).any()) \
                and kwargs_has_attention_mask is False and batched:
            logger.warning(
                "The attention mask is not set with a batched input, and cannot be inferred from input because pad "
                "token is same as eos token. As a consequence, you may observe unexpected behavior. Please pass your "
                "input's `attention_mask` to obtain reliable results."
            )
        if eos is not None and (eos.is_floating_point() or bool((eos < 0).any())):
            logger.warning(
                f"`eos_token_id` should consist of positive integers, but is {eos}. Your generation will not stop "
                "until the maximum length is reached. Depending on other flags, it may even crash."
            )
        generation_config._bos_token_tensor = bos
        generation_config._eos_token_tensor = eos
        generation_config._pad_token_tensor = pad
        generation_config._decoder_start_token_tensor = decoder_start

    def _prepare_generated_length(self, generation_config, has_default_max_length, has_default_min_length,
                                  model_input_name, input_ids_length, inputs_tensor):
        """Turn max_new_tokens/min_new_tokens into absolute max_length/min_length."""
        if generation_config.max_new_tokens is not None:
            if not has_default_max_length and generation_config.max_length is not None:
                logger.warning(
                    f"Both `max_new_tokens` (={generation_config.max_new_tokens}) and `max_length`(="
                    f"{generation_config.max_length}) seem to have been set. `max_new_tokens` will take precedence."
                )
            generation_config.max_length = generation_config.max_new_tokens + input_ids_length
        elif (model_input_name == "inputs_embeds" and input_ids_length != inputs_tensor.shape[1]
              and not self.config.is_encoder_decoder and not has_default_max_length):
            generation_config.max_length -= inputs_tensor.shape[1]
        elif has_default_max_length:
            generation_config.max_length = generation_config.max_length + input_ids_length
            max_position_embeddings = getattr(self.config, "max_position_embeddings", None)
            if max_position_embeddings is not None:
                generation_config.max_length = min(generation_config.max_length, max_position_embeddings)
        if generation_config.min_new_tokens is not None:
            if not has_default_min_length:
                logger.warning(
                    f"Both `min_new_tokens` (={generation_config.min_new_tokens}) and `min_length`(="
                    f"{generation_config.min_length}) seem to have been set. `min_new_tokens` will take precedence."
                )
            generation_config.min_length = generation_config.min_new_tokens + input_ids_length
        elif (model_input_name == "inputs_embeds" and input_ids_length != inputs_tensor.shape[1]
              and not self.config.is_encoder_decoder):
            generation_config.min_length = max(generation_config.min_length - inputs_tensor.shape[1], 0)
        return generation_config

    def _validate_generated_length(self, generation_config, input_ids_length, has_default_max_length):
        if has_default_max_length and generation_config.max_new_tokens is None:
            warnings.warn(
                f"Using the model-agnostic default `max_length` (={generation_config.max_length}) to control the "
                "generation length. We recommend setting `max_new_tokens` to control the maximum length of the "
                "generation.",
                UserWarning,
            )
        if input_ids_length >= generation_config.max_length:
            raise ValueError(
                f"Input length of input_ids is {input_ids_length}, but `max_length` is set to"
                f" {generation_config.max_length}. This can lead to unexpected behavior. You should consider"
                " increasing `max_length` or, better yet, setting `max_new_tokens`."
            )
        suffix = (" Generation will stop at the defined maximum length. You should decrease the minimum length "
                  "and/or increase the maximum length.")
        if has_default_max_length:
            suffix += f" Note that `max_length` is set to {generation_config.max_length}, its default value."
        if generation_config.min_length is not None and generation_config.min_length > generation_config.max_length:
            warnings.warn(
                f"Unfeasible length constraints: `min_length` ({generation_config.min_length}) is larger than"
                f" the maximum possible length ({generation_config.max_length})." + suffix,
                UserWarning,
            )
        if generation_config.min_new_tokens is not None:
            if generation_config.min_new_tokens + input_ids_length > generation_config.max_length:
                warnings.warn(
                    f"Unfeasible length constraints: `min_new_tokens` ({generation_config.min_new_tokens}), when "
                    f"added to the prompt length ({input_ids_length}), is larger than"
                    f" the maximum possible length ({generation_config.max_length})." + suffix,
                    UserWarning,
                )

    @classmethod
    def _supports_default_dynamic_cache(cls):
        """Whether generate() may give this model a DynamicCache: not for stateful models nor
        for the architectures HF lists as keeping their own cache format."""
        name = cls.__name__.lower()
        return not getattr(cls, "_is_stateful", False) and all(
            special not in name or "minimaxm2" in name for special in ("reformer", "minimax", "xlnet", "lfm2"))

    def _prepare_cache_for_generation(self, generation_config, model_kwargs, batch_size, max_cache_length):
        """Put a fresh cache in model_kwargs (dynamic by default, static on request) unless the
        caller gave one, caching is off, or the model takes no `past_key_values`."""
        user_cache = model_kwargs.get("past_key_values")
        if user_cache is not None:
            if generation_config.cache_implementation is not None:
                raise ValueError(
                    "Passing both `cache_implementation` (used to initialize certain caches) and `past_key_values` (a "
                    "Cache object) is unsupported. Please use only one of the two."
                )
            if isinstance(user_cache, tuple):
                raise ValueError(
                    "Passing a tuple of `past_key_values` is not supported anymore. Please use a `Cache` instance."
                )
            user_cache._is_user_defined = True
            return
        if generation_config.use_cache is False or not _accepts(self.forward, "past_key_values"):
            return
        implementation = generation_config.cache_implementation
        text_config = self.config.get_text_config(decoder=True)
        if self.config.is_encoder_decoder and implementation in (None, "dynamic"):
            # Layers appear as the decoder reaches them: its depth need not be the config's num_layers.
            implementation = "dynamic_full"
        if implementation in STATIC_CACHE_IMPLEMENTATIONS:
            if generation_config.max_cache_len is not None:
                max_cache_length = max(max_cache_length, generation_config.max_cache_len)
            rows = max(generation_config.num_beams, generation_config.num_return_sequences) * batch_size
            model_kwargs["past_key_values"] = self._prepare_static_cache(rows, max_cache_length, model_kwargs)
        elif implementation in (None, "dynamic"):
            model_kwargs["past_key_values"] = DynamicCache(config=text_config)
        elif implementation == "dynamic_full":
            # Every layer keeps all positions (no sliding window), so the cache can always be cropped.
            model_kwargs["past_key_values"] = DynamicCache()
        else:
            raise NotImplementedError(f"cache_implementation={implementation!r} is not supported")
        if self.config.is_encoder_decoder and not isinstance(model_kwargs["past_key_values"], EncoderDecoderCache):
            # The cross-attention part fills once, with the projected encoder output.
            model_kwargs["past_key_values"] = EncoderDecoderCache(model_kwargs["past_key_values"], DynamicCache())

    def _prepare_static_cache(self, batch_size, max_cache_len, model_kwargs):
        """As HF: the static cache kept on the model (`self._cache`) across generate() calls,
        reset and reused while it fits this one (`_static_cache_fits`), else a new one put there.
        Reuse keeps the cache's tensors, so a compiled forward replays its graphs from the second
        call on, the prompt's included: a new cache allocates its storage in the prompt's
        forward, which then runs eagerly."""
        text_config = self.config.get_text_config(decoder=True)
        cache = getattr(self, "_cache", None)
        if self.config.is_encoder_decoder:
            # As HF: the cross-attention keys get a static cache too, as long as the encoder
            # output, so that every decoding step reads buffers of one shape.
            encoder_length = model_kwargs["encoder_outputs"][0].shape[1]
            fits = (isinstance(cache, EncoderDecoderCache)
                    and _static_cache_fits(cache.self_attention_cache, batch_size, max_cache_len, self)
                    and cache.cross_attention_cache.max_cache_len == encoder_length
                    and _static_cache_fits(cache.cross_attention_cache, batch_size, encoder_length, self))
            if not fits:
                cache = EncoderDecoderCache(_decoder_static_cache(text_config, max_cache_len),
                                            _decoder_static_cache(text_config, encoder_length))
        else:
            fits = _static_cache_fits(cache, batch_size, max_cache_len, self)
            if not fits:
                cache = StaticCache(config=text_config, max_cache_len=max_cache_len)
        if fits:
            cache.reset()
        self._cache = cache
        return cache

    def _get_logits_processor(self, generation_config, input_ids_seq_length=None, encoder_input_ids=None,
                              prefix_allowed_tokens_fn=None, logits_processor=None, device=None, model_kwargs=None,
                              negative_prompt_ids=None, negative_prompt_attention_mask=None):
        """The processors HF builds from the config, in HF's order, merged with the user's."""
        config = generation_config
        processors = LogitsProcessorList()
        if config.guidance_scale is not None and config.guidance_scale != 1:
            processors.append(UnbatchedClassifierFreeGuidanceLogitsProcessor(
                config.guidance_scale, self, unconditional_ids=negative_prompt_ids,
                unconditional_attention_mask=negative_prompt_attention_mask, use_cache=config.use_cache))
        if config.sequence_bias is not None:
            processors.append(SequenceBiasLogitsProcessor(sequence_bias=config.sequence_bias))
        has_encoder_input_ids = (encoder_input_ids is not None and encoder_input_ids.ndim == 2
                                 and not bool((encoder_input_ids < 0).any()))
        if config.encoder_repetition_penalty is not None and config.encoder_repetition_penalty != 1.0:
            if has_encoder_input_ids:
                processors.append(EncoderRepetitionPenaltyLogitsProcessor(
                    penalty=config.encoder_repetition_penalty, encoder_input_ids=encoder_input_ids))
            else:
                warnings.warn("Passing `encoder_repetition_penalty` requires some form of `input_ids` to be passed to "
                              "`generate`, ignoring the argument.", UserWarning)
        if config.repetition_penalty is not None and config.repetition_penalty != 1.0:
            mask = (model_kwargs or {}).get("attention_mask")
            padding_lengths = (mask != 0).int().argmax(dim=1) if mask is not None else None
            processors.append(RepetitionPenaltyLogitsProcessor(config.repetition_penalty,
                                                               prompt_ignore_length=padding_lengths))
            if not input_ids_seq_length:
                warnings.warn("Passing `repetition_penalty` with `inputs_embeds` and without `input_ids` to `generate` "
                              "will apply the penalty only to newly generated tokens, not to the prompt.", UserWarning)
        if config.no_repeat_ngram_size is not None and config.no_repeat_ngram_size > 0:
            processors.append(NoRepeatNGramLogitsProcessor(config.no_repeat_ngram_size))
            if not input_ids_seq_length:
                warnings.warn("Passing `no_repeat_ngram_size` with `inputs_embeds` and without `input_ids` to "
                              "`generate` will apply n-gram constraints only to newly generated tokens, not to the "
                              "prompt.", UserWarning)
        if config.encoder_no_repeat_ngram_size is not None and config.encoder_no_repeat_ngram_size > 0:
            if has_encoder_input_ids:
                processors.append(EncoderNoRepeatNGramLogitsProcessor(config.encoder_no_repeat_ngram_size,
                                                                      encoder_input_ids))
            else:
                warnings.warn("Passing `encoder_no_repeat_ngram_size` requires some form of `input_ids` to be passed "
                              "to `generate`, ignoring the argument.", UserWarning)
        eos = config._eos_token_tensor
        if config.bad_words_ids is not None:
            processors.append(NoBadWordsLogitsProcessor(config.bad_words_ids, eos))
        if config.min_length is not None and eos is not None and config.min_length > 0:
            processors.append(MinLengthLogitsProcessor(config.min_length, eos, device=device))
        if config.min_new_tokens is not None and eos is not None and config.min_new_tokens > 0:
            processors.append(MinNewTokensLengthLogitsProcessor(input_ids_seq_length, config.min_new_tokens, eos,
                                                                device=device))
        if prefix_allowed_tokens_fn is not None:
            processors.append(PrefixConstrainedLogitsProcessor(prefix_allowed_tokens_fn, config.num_beams))
        if config.forced_bos_token_id is not None:
            processors.append(ForcedBOSTokenLogitsProcessor(config.forced_bos_token_id))
        if config.forced_eos_token_id is not None:
            processors.append(ForcedEOSTokenLogitsProcessor(config.max_length, config.forced_eos_token_id,
                                                            device=device))
        if config.remove_invalid_values is True:
            processors.append(InfNanRemoveLogitsProcessor())
        if config.exponential_decay_length_penalty is not None:
            processors.append(ExponentialDecayLengthPenalty(config.exponential_decay_length_penalty, eos,
                                                            input_ids_seq_length))
        if config.suppress_tokens is not None:
            processors.append(SuppressTokensLogitsProcessor(config.suppress_tokens, device=device))
        if config.begin_suppress_tokens is not None:
            begin_index = input_ids_seq_length
            if not (input_ids_seq_length > 1 or config.forced_bos_token_id is None):
                begin_index += 1
            processors.append(SuppressTokensAtBeginLogitsProcessor(config.begin_suppress_tokens, begin_index,
                                                                   device=device))
        processors = self._merge_criteria_processor_list(processors, logits_processor or [])

        if config.do_sample:
            # Beam sampling keeps room for one non-EOS continuation per beam.
            if config.num_beams is not None and config.num_beams > 1:
                min_tokens_to_keep = (eos.shape[0] + 1) if eos is not None else 2
            else:
                min_tokens_to_keep = 1
            if config.temperature is not None and config.temperature != 1.0:
                processors.append(TemperatureLogitsWarper(config.temperature))
            if config.top_h is not None:
                processors.append(TopHLogitsWarper(top_h=config.top_h))
            if config.top_k is not None and config.top_k != 0:
                processors.append(TopKLogitsWarper(top_k=config.top_k, min_tokens_to_keep=min_tokens_to_keep))
            if config.top_p is not None and config.top_p < 1.0:
                processors.append(TopPLogitsWarper(top_p=config.top_p, min_tokens_to_keep=min_tokens_to_keep))
            if config.min_p is not None:
                processors.append(MinPLogitsWarper(min_p=config.min_p, min_tokens_to_keep=min_tokens_to_keep))
            if config.typical_p is not None and config.typical_p < 1.0:
                processors.append(TypicalLogitsWarper(mass=config.typical_p, min_tokens_to_keep=min_tokens_to_keep))
            if config.epsilon_cutoff is not None and 0.0 < config.epsilon_cutoff < 1.0:
                processors.append(EpsilonLogitsWarper(epsilon=config.epsilon_cutoff,
                                                      min_tokens_to_keep=min_tokens_to_keep))
            if config.eta_cutoff is not None and 0.0 < config.eta_cutoff < 1.0:
                processors.append(EtaLogitsWarper(epsilon=config.eta_cutoff, min_tokens_to_keep=min_tokens_to_keep,
                                                  device=device))
        # Watermarking comes after every other processor (HF #34630), renormalisation last of all.
        if config.watermarking_config is not None:
            processors.append(_as_watermarking_config(config.watermarking_config).construct_processor(
                self.config.get_text_config(decoder=True).vocab_size, device))
        if config.renormalize_logits is True:
            processors.append(LogitNormalization())
        return processors

    def _get_stopping_criteria(self, generation_config, stopping_criteria, tokenizer=None):
        criteria = StoppingCriteriaList()
        if generation_config.max_length is not None:
            criteria.append(MaxLengthCriteria(
                max_length=generation_config.max_length,
                max_position_embeddings=getattr(self.config, "max_position_embeddings", None),
            ))
        if generation_config.max_time is not None:
            criteria.append(MaxTimeCriteria(max_time=generation_config.max_time))
        if generation_config.stop_strings is not None:
            if tokenizer is None:
                raise ValueError(
                    "There are one or more stop strings, either in the arguments to `generate` or in the "
                    "model's generation config, but we could not locate a tokenizer. When generating with "
                    "stop strings, you must pass the model's tokenizer to the `tokenizer` argument of `generate`."
                )
            criteria.append(StopStringCriteria(stop_strings=generation_config.stop_strings, tokenizer=tokenizer))
        if generation_config._eos_token_tensor is not None:
            criteria.append(EosTokenCriteria(eos_token_id=generation_config._eos_token_tensor))
        # An assistant drafting for assisted decoding stops once unsure of its own token.
        threshold = generation_config.assistant_confidence_threshold
        if generation_config.is_assistant and threshold is not None and threshold > 0:
            criteria.append(ConfidenceCriteria(assistant_confidence_threshold=threshold))
        return self._merge_criteria_processor_list(criteria, stopping_criteria or [])

    def _merge_criteria_processor_list(self, default_list, custom_list):
        """The defaults, each replaced by a custom one of the same type if given, then the
        remaining custom ones (HF's rule since v4.50)."""
        if len(custom_list) == 0:
            return default_list
        merged = type(default_list)()
        for default in default_list:
            custom = next((c for c in custom_list if type(c) is type(default)), None)
            if custom is not None:
                kind = "stopping criteria" if isinstance(custom, StoppingCriteria) else "logits processor"
                logger.warning(
                    f"A custom {kind} of type {type(custom)} has been passed to `.generate()`, but it was also created "
                    f"in `.generate()`, given its parameterization. The custom {type(custom)} will take precedence."
                )
                merged.append(custom)
            else:
                merged.append(default)
        for custom in custom_list:
            if custom not in merged:
                merged.append(custom)
        return merged

    # ------------------------------------------------------------------ generate

    def generate(self, inputs=None, generation_config=None, logits_processor=None, stopping_criteria=None,
                 prefix_allowed_tokens_fn=None, synced_gpus=None, assistant_model=None, streamer=None,
                 negative_prompt_ids=None, negative_prompt_attention_mask=None, custom_generate=None, **kwargs):
        """Generate token ids after `inputs` (or `input_ids=`), as HF's `generate()` does.

        Settings come from `generation_config` / keyword arguments (max_new_tokens, do_sample,
        temperature, top_k, top_p, num_beams, eos_token_id, ...); other keyword arguments
        (attention_mask, past_key_values, ...) go to the model. `tokenizer=` is needed for
        `stop_strings`. Returns the sequences (batch * num_return_sequences, length), or a
        `GenerateDecoderOnlyOutput`/`GenerateBeamDecoderOnlyOutput` with
        `return_dict_in_generate=True`. For an encoder-decoder, `inputs` is the encoder's input,
        the sequences are the decoder's (starting with `decoder_start_token_id`) and the
        dict outputs are `GenerateEncoderDecoderOutput`/`GenerateBeamEncoderDecoderOutput`.
        """
        if custom_generate is not None:
            raise NotImplementedError("generate(): `custom_generate` is not supported")
        if synced_gpus:
            raise NotImplementedError("generate(): `synced_gpus` is not supported")
        _check_prompt(self, inputs, kwargs)
        if attends_both_ways(self.config):
            # HF logs this when such a model is built; here it is said where it matters.
            logger.warning(f"If you want to use `{type(self).__name__}` as a standalone, add `is_decoder=True.`")
        with core.no_grad():
            return self._generate(inputs, generation_config, logits_processor, stopping_criteria,
                                  prefix_allowed_tokens_fn, streamer, kwargs, assistant_model,
                                  negative_prompt_ids, negative_prompt_attention_mask)

    def _generate(self, inputs, generation_config, logits_processor, stopping_criteria, prefix_allowed_tokens_fn,
                  streamer, kwargs, assistant_model=None, negative_prompt_ids=None,
                  negative_prompt_attention_mask=None):
        tokenizer = kwargs.pop("tokenizer", None)
        assistant_tokenizer = kwargs.pop("assistant_tokenizer", None)
        if assistant_model is not None:
            self._validate_assistant(assistant_model, tokenizer, assistant_tokenizer)
        model_defaults = self.generation_config
        has_default_max_length = (kwargs.get("max_length") is None
                                  and (generation_config is None or generation_config.max_length is None)
                                  and (model_defaults is None or model_defaults.max_length is None))
        has_default_min_length = (kwargs.get("min_length") is None
                                  and (generation_config is None or generation_config.min_length is None)
                                  and (model_defaults is None or model_defaults.min_length is None))
        generation_config, model_kwargs = self._prepare_generation_config(generation_config, **kwargs)
        mode = _generation_mode(generation_config, assistant_model)
        is_encoder_decoder = self.config.is_encoder_decoder
        if is_encoder_decoder and generation_config.assistant_early_exit is not None:
            raise NotImplementedError("assistant_early_exit drafts with a decoder-only model's first layers; "
                                      "an encoder-decoder takes an assistant_model or prompt_lookup_num_tokens")
        if is_encoder_decoder and assistant_tokenizer is not None:
            raise NotImplementedError("an encoder-decoder's assistant must share its tokenizer: universal "
                                      "assisted decoding re-tokenizes a decoder-only model's text")
        if is_encoder_decoder and generation_config.token_healing:
            raise ValueError("token healing re-tokenizes a decoder-only model's prompt; an encoder-decoder has none")
        if generation_config.prefill_chunk_size is not None:
            raise NotImplementedError("prefill_chunk_size is not supported")
        self._validate_model_kwargs(model_kwargs.copy())
        if mode == "beam" and streamer is not None:
            raise ValueError(
                "`streamer` cannot be used with beam search (yet!). Make sure that `num_beams` is set to 1.")

        accepts_attention_mask = _accepts(self.forward, "attention_mask")
        requires_attention_mask = "encoder_outputs" not in model_kwargs
        kwargs_has_attention_mask = model_kwargs.get("attention_mask") is not None
        inputs_tensor, model_input_name, model_kwargs = self._prepare_model_inputs(
            inputs, generation_config.bos_token_id, model_kwargs)
        if generation_config.token_healing:
            if model_input_name != "input_ids":
                raise ValueError("token healing needs `input_ids` (it re-tokenizes the prompt)")
            inputs_tensor = self.heal_tokens(inputs_tensor, tokenizer)
            # The healed prompt was re-tokenized: a mask given for the old tokens no longer fits.
            model_kwargs.pop("attention_mask", None)
            kwargs_has_attention_mask = False
        batch_size = inputs_tensor.shape[0]
        device = inputs_tensor.device
        self._prepare_special_tokens(generation_config, kwargs_has_attention_mask, device=device,
                                     batch_size=batch_size)

        pad = generation_config._pad_token_tensor
        if not is_encoder_decoder and pad is not None and batch_size > 1 and inputs_tensor.ndim == 2:
            attention_mask = model_kwargs.get("attention_mask")
            if attention_mask is not None and tuple(attention_mask.shape) == tuple(inputs_tensor.shape):
                right_padded = bool((attention_mask[:, -1] == 0).any())
            else:
                right_padded = bool((inputs_tensor[:, -1] == pad).any())
            if right_padded:
                logger.warning(
                    "A decoder-only architecture is being used, but right-padding was detected! For correct "
                    "generation results, please set `padding_side='left'` when initializing the tokenizer."
                )
        if not is_encoder_decoder and model_input_name == "inputs_embeds":
            generation_config.use_cache = True

        if not kwargs_has_attention_mask and requires_attention_mask and accepts_attention_mask:
            model_kwargs["attention_mask"] = self._prepare_attention_mask_for_generation(
                inputs_tensor, generation_config, model_kwargs)
        elif kwargs_has_attention_mask and model_input_name == "input_ids" and model_kwargs["attention_mask"].ndim > 2:
            raise ValueError("`attention_mask` passed to `generate` must be 2D.")
        if not is_encoder_decoder:
            if model_kwargs.get("position_ids") is None and _accepts(self.forward, "position_ids"):
                model_kwargs["position_ids"] = self._prepare_position_ids_for_generation(inputs_tensor, model_kwargs)
            # Without padding the mask carries no information: dropping it spares building one per step.
            if accepts_attention_mask and model_kwargs.get("attention_mask") is not None \
                    and bool((model_kwargs["attention_mask"] == 1).all()):
                generation_config._mask_length = model_kwargs["attention_mask"].shape[1]
                model_kwargs["attention_mask"] = None

        if is_encoder_decoder:
            if "encoder_outputs" not in model_kwargs:
                model_kwargs = self._prepare_encoder_decoder_kwargs_for_generation(
                    inputs_tensor, model_kwargs, model_input_name, generation_config)
            input_ids, model_kwargs = self._prepare_decoder_input_ids_for_generation(
                batch_size, model_input_name, model_kwargs, generation_config._decoder_start_token_tensor,
                device=device)
        else:
            input_ids = inputs_tensor if model_input_name == "input_ids" else model_kwargs.pop("input_ids")
        input_ids, model_kwargs = self._expand_inputs_for_generation(
            expand_size=max(generation_config.num_beams, generation_config.num_return_sequences),
            is_encoder_decoder=is_encoder_decoder, input_ids=input_ids, **model_kwargs)
        if streamer is not None:
            streamer.put(input_ids.cpu())

        input_ids_length = input_ids.shape[1]
        generation_config = self._prepare_generated_length(
            generation_config, has_default_max_length, has_default_min_length, model_input_name, input_ids_length,
            inputs_tensor)
        if "logits_to_keep" not in model_kwargs and "logits_to_keep" in _parameters(self.forward):
            model_kwargs["logits_to_keep"] = 1
        self._validate_generated_length(generation_config, input_ids_length, has_default_max_length)

        max_cache_length = generation_config.max_length - 1
        if not is_encoder_decoder and model_input_name == "inputs_embeds" and inputs_tensor.shape[1] != input_ids_length:
            max_cache_length += inputs_tensor.shape[1]
        self._prepare_cache_for_generation(generation_config, model_kwargs, batch_size, max_cache_length)

        processors = self._get_logits_processor(
            generation_config, input_ids_seq_length=input_ids_length, encoder_input_ids=inputs_tensor,
            prefix_allowed_tokens_fn=prefix_allowed_tokens_fn, logits_processor=logits_processor, device=device,
            model_kwargs=model_kwargs, negative_prompt_ids=negative_prompt_ids,
            negative_prompt_attention_mask=negative_prompt_attention_mask)
        criteria = self._get_stopping_criteria(generation_config, stopping_criteria, tokenizer=tokenizer)
        model_kwargs["use_cache"] = generation_config.use_cache

        if mode == "beam":
            return self._beam_search(input_ids, processors, criteria, generation_config, **model_kwargs)
        if mode == "assisted":
            if input_ids.shape[0] != 1:
                raise ValueError("assisted generate is only supported for batch_size = 1")
            if not generation_config.use_cache:
                raise ValueError("assisted generate requires `use_cache=True`")
            candidates = self._get_candidate_generator(
                generation_config, input_ids, inputs_tensor, processors, model_kwargs, assistant_model=assistant_model,
                target_tokenizer=tokenizer, assistant_tokenizer=assistant_tokenizer,
                assistant_logits_processor=logits_processor)
            result = self._assisted_decoding(input_ids, candidates, processors, criteria, generation_config,
                                             streamer=streamer, **model_kwargs)
            # The "heuristic" schedule carries the draft length it learnt over to the next call.
            drafter = getattr(candidates, "assistant_model", None)
            if drafter is not None and drafter.generation_config.num_assistant_tokens_schedule == "heuristic":
                drafter.generation_config.num_assistant_tokens = candidates.num_assistant_tokens
            return result
        return self._sample(input_ids, processors, criteria, generation_config, streamer=streamer, **model_kwargs)

    def _validate_assistant(self, assistant_model, tokenizer, assistant_tokenizer):
        """Same vocabulary size: plain assisted decoding (no assistant tokenizer wanted); a
        different one: universal assisted decoding, which needs both tokenizers."""
        doc_reference = (
            "(see https://huggingface.co/docs/transformers/en/generation_strategies#universal-assisted-decoding)")
        same_vocab = (self.config.get_text_config(decoder=True).vocab_size
                      == assistant_model.config.get_text_config(decoder=True).vocab_size)
        if same_vocab and assistant_tokenizer is not None:
            raise ValueError(
                "`assistant_tokenizer` is not required when the main and assistant models use the same tokenizer. "
                f"Please omit `assistant_tokenizer` from `generate()` {doc_reference}.")
        if not same_vocab and (tokenizer is None or assistant_tokenizer is None):
            raise ValueError(
                "The main and assistant models have different tokenizers. Please provide `tokenizer` and "
                f"`assistant_tokenizer` to `generate()` {doc_reference}.")

    def _get_candidate_generator(self, generation_config, input_ids, inputs_tensor, logits_processor, model_kwargs,
                                 assistant_model=None, target_tokenizer=None, assistant_tokenizer=None,
                                 assistant_logits_processor=None):
        """The drafter HF picks: early exit, prompt lookup, an assistant with another tokenizer
        (universal assisted decoding when greedy, universal speculative decoding when
        sampling) or an assistant with the same vocabulary. `logits_processor` (the model's)
        tells prompt lookup which tokens are forbidden; an assistant model decodes with the
        model's settings plus `assistant_logits_processor`, the caller's own processors."""
        different_tokenizers = all(value is not None for value in (assistant_model, target_tokenizer,
                                                                    assistant_tokenizer))
        common = {"input_ids": input_ids, "generation_config": generation_config, "model_kwargs": model_kwargs,
                  "inputs_tensor": inputs_tensor, "logits_processor": assistant_logits_processor}
        if generation_config.assistant_early_exit is not None:
            return EarlyExitCandidateGenerator(assistant_model=self, **common)
        if generation_config.prompt_lookup_num_tokens is not None:
            return PromptLookupCandidateGenerator(
                eos_token_id=generation_config._eos_token_tensor,
                num_output_tokens=generation_config.prompt_lookup_num_tokens,
                max_matching_ngram_size=generation_config.max_matching_ngram_size or 2,
                max_length=generation_config.max_length, logits_processor=logits_processor,
                vocab_size=self.config.get_text_config(decoder=True).vocab_size)
        if different_tokenizers:
            if generation_config.do_sample is True:
                translator = AssistantVocabTranslatorCache.get_translator(
                    target_tokenizer, assistant_tokenizer, self.config.get_text_config(decoder=True).vocab_size,
                    assistant_model=assistant_model, assistant_prune_lm_head=True)
                # The pruned LM head indexes logits by shared-token position, which a
                # repetition penalty (indexed by token id) would misread.
                assistant_model.generation_config.repetition_penalty = None
                return UniversalSpeculativeDecodingGenerator(
                    assistant_model=assistant_model, target_tokenizer=target_tokenizer,
                    assistant_tokenizer=assistant_tokenizer, atm_translator=translator, **common)
            return AssistedCandidateGeneratorDifferentTokenizers(
                assistant_model=assistant_model, target_tokenizer=target_tokenizer,
                assistant_tokenizer=assistant_tokenizer, **common)
        return AssistedCandidateGenerator(assistant_model=assistant_model, **common)

    def _assisted_decoding(self, input_ids, candidate_generator, logits_processor, stopping_criteria,
                           generation_config, streamer=None, **model_kwargs):
        """Assisted decoding (batch of one): the candidate generator drafts tokens, one forward
        pass scores them all, and the longest prefix the model agrees with is kept, plus one
        token of the model's own. Greedy results equal plain greedy decoding; sampling with an
        assistant model keeps the model's distribution through speculative sampling.

        Attentions and hidden states come back one entry per generated token (the prompt's with
        the first), as plain decoding returns them."""
        do_sample = generation_config.do_sample
        return_dict = generation_config.return_dict_in_generate
        scores = () if return_dict and generation_config.output_scores else None
        raw_logits = () if return_dict and generation_config.output_logits else None
        attentions = () if return_dict and generation_config.output_attentions else None
        cross_attentions = () if attentions is not None and self.config.is_encoder_decoder else None
        hidden_states = () if return_dict and generation_config.output_hidden_states else None
        model_kwargs.pop("logits_to_keep", None)
        unfinished = core.ones((1,), dtype=core.bool, device=input_ids.device)
        is_first_iteration = True
        while True:
            length = input_ids.shape[1]
            candidate_ids, candidate_scores = candidate_generator.get_candidates(input_ids, is_first_iteration)
            is_first_step, is_first_iteration = is_first_iteration, False
            candidate_ids = candidate_ids.to(input_ids.device)
            n_candidates = candidate_ids.shape[1] - length
            last_candidate_ends = n_candidates > 0 and bool(stopping_criteria(candidate_ids, None).all())

            # One forward over everything the cache has not seen: the last accepted token and the draft.
            step_kwargs = self._update_model_kwargs_for_generation({}, dict(model_kwargs), num_new_tokens=n_candidates)
            cache = model_kwargs.get("past_key_values")
            seen = cache.get_seq_length() if cache is not None else 0
            model_inputs = self.prepare_inputs_for_generation(
                candidate_ids, next_sequence_length=candidate_ids.shape[1] - seen, is_first_iteration=seen == 0,
                **step_kwargs)
            if "logits_to_keep" in _parameters(self.forward):
                model_inputs["logits_to_keep"] = n_candidates + 1
            outputs = self(**model_inputs, return_dict=True)
            raw = outputs.logits[:, -n_candidates - 1:, :].float()
            processed = core.stack([logits_processor(candidate_ids[:, :length + i], raw[:, i, :].clone())
                                    for i in range(n_candidates + 1)], dim=1)

            if do_sample and candidate_scores is not None:
                valid_tokens, n_matches = _speculative_sampling(
                    candidate_ids, candidate_scores, n_candidates, processed, last_candidate_ends)
                n_matches = int(n_matches)
            else:
                if do_sample:
                    chosen = core.multinomial(F.softmax(processed[0], dim=-1), num_samples=1).reshape(1, -1)
                else:
                    chosen = processed.argmax(dim=-1)
                agree = candidate_ids[:, length:] == chosen[:, :n_candidates]
                n_matches = int(core.cumprod(agree.long(), dim=-1).sum()) if n_candidates else 0
                if last_candidate_ends and n_matches == n_candidates:
                    n_matches -= 1          # the model's own token replaces the draft's final one
                valid_tokens = chosen[:, :n_matches + 1]

            input_ids = core.cat([input_ids, valid_tokens.to(input_ids.dtype)], dim=1)
            if streamer is not None:
                streamer.put(valid_tokens.cpu())
            outputs.past_key_values.crop(input_ids.shape[1] - 1)
            candidate_generator.update_candidate_strategy(input_ids, processed, n_matches)
            if scores is not None:
                scores += tuple(processed[:, i, :] for i in range(n_matches + 1))
            if raw_logits is not None:
                raw_logits += tuple(raw[:, i, :] for i in range(n_matches + 1))
            added = input_ids.shape[1] if is_first_step else n_matches + 1
            step_attentions, step_cross_attentions, step_hidden_states = self._step_outputs(outputs)
            if attentions is not None:
                attentions = _split_model_outputs(attentions, step_attentions, length, added,
                                                  is_decoder_attention=True)
            if cross_attentions is not None:
                cross_attentions = _split_model_outputs(cross_attentions, step_cross_attentions, length, added)
            if hidden_states is not None:
                hidden_states = _split_model_outputs(hidden_states, step_hidden_states, length, added)
            model_kwargs = self._update_model_kwargs_for_generation(outputs, model_kwargs,
                                                                    num_new_tokens=n_matches + 1)
            unfinished = unfinished & ~stopping_criteria(input_ids, scores)
            if not bool(unfinished.any()):
                break

        if streamer is not None:
            streamer.end()
        if return_dict:
            return self._generation_output(False, generation_config, model_kwargs, attentions, cross_attentions,
                                           hidden_states, sequences=input_ids, scores=scores, logits=raw_logits)
        return input_ids

    def heal_tokens(self, input_ids, tokenizer=None):
        """Token healing, as HF does it: each prompt is decoded, stripped and re-tokenized, and its
        last token regenerated among the vocabulary entries that extend it (biased +10, the
        original +11), so a prompt cut mid-word ("http:") continues as it would have been
        tokenized whole ("http://"). Rows whose last token has no extension are left as they
        are. `tokenizer` is the model's."""
        if tokenizer is None:
            raise ValueError(
                " When generating with token healing, you must pass the model's tokenizer to the `tokenizer` "
                "argument of `generate`."
            )
        bos_token_id, pad_token_id = tokenizer.bos_token_id, tokenizer.pad_token_id
        vocab = tokenizer.get_vocab()
        generation_config = GenerationConfig(max_new_tokens=1, pad_token_id=pad_token_id, token_healing=False)
        prompts = [p.strip() for p in tokenizer.batch_decode(input_ids.tolist(), skip_special_tokens=True)]
        input_ids = tokenizer(prompts, return_tensors="pt", padding=True)["input_ids"].to(input_ids.device)
        # Healing is not conditioned on BOS.
        if bos_token_id is not None and pad_token_id is not None:
            input_ids = core.where(input_ids == bos_token_id, pad_token_id, input_ids)
        if input_ids.numel() == 0:
            return input_ids
        tail_ids = input_ids[:, -1].tolist()
        # Spaces in the tail token are spelled with the token for " " (HF's rule), so that the
        # prefix search finds tokens that start with a space.
        space_id = tokenizer.convert_tokens_to_ids(" ")
        space_token = tokenizer.convert_ids_to_tokens(space_id)[0] if space_id is not None else None
        for batch_idx, tail_id in enumerate(tail_ids):
            row = input_ids[batch_idx]
            if bool((row == pad_token_id).all()):
                continue
            tail = tokenizer.decode(tail_id)
            if space_token is not None:
                tail = tail.replace(" ", space_token)
            sequence_bias = {(tokenizer.convert_tokens_to_ids(token),): 10.0
                             for token in _vocabulary_extensions(vocab, tail)}
            if len(sequence_bias) == 1:
                continue                            # nothing to heal with
            sequence_bias[(tail_id,)] += 1.0        # keep "http" from becoming "https" too eagerly
            generation_config.update(sequence_bias=sequence_bias)
            trimmed_ids = row[:-1].clone()
            if trimmed_ids.numel() == 0:
                continue
            if int((row != pad_token_id).sum()) == 1:
                trimmed_ids[-1] = bos_token_id      # a one-token prompt regenerates from BOS
            input_ids[batch_idx] = self.generate(trimmed_ids.unsqueeze(0), generation_config=generation_config)[0]
        return input_ids

    def _prefill(self, input_ids, generation_config, model_kwargs):
        """The first forward: the prompt, or only its part a user-given cache has not seen."""
        next_sequence_length = None
        cache = model_kwargs.get("past_key_values")
        if cache is not None:
            past_length = cache.get_seq_length()
            if self.config.is_encoder_decoder:
                next_sequence_length = input_ids.shape[1] - past_length
            elif model_kwargs.get("inputs_embeds") is not None:
                next_sequence_length = model_kwargs["inputs_embeds"].shape[1] - past_length
            else:
                attention_mask = model_kwargs.get("attention_mask")
                mask_length = (attention_mask.shape[1] if attention_mask is not None
                               else getattr(generation_config, "_mask_length", -1))
                if mask_length == input_ids.shape[1]:
                    next_sequence_length = input_ids.shape[1] - past_length
        model_inputs = self.prepare_inputs_for_generation(
            input_ids, next_sequence_length=next_sequence_length, is_first_iteration=True, **model_kwargs)
        if cache is not None and cache.is_compileable \
                and "cache_position" not in model_inputs and _accepts(self.forward, "cache_position"):
            # Positions as a tensor that advances each step (_update_model_kwargs_for_generation):
            # a compiled step then never reads the static cache's length back into Python.
            prefix = "decoder_" if self.config.is_encoder_decoder else ""
            fed = model_inputs.get(prefix + "input_ids")
            fed = model_inputs[prefix + "inputs_embeds"] if fed is None else fed
            model_kwargs["cache_position"] = model_inputs["cache_position"] = core.arange(
                past_length, past_length + fed.shape[1], device=fed.device)
        return self(**model_inputs, return_dict=True)

    def _next_inputs(self, input_ids, model_kwargs):
        next_sequence_length = 1 if model_kwargs["use_cache"] else None
        return self.prepare_inputs_for_generation(input_ids, next_sequence_length=next_sequence_length,
                                                  **model_kwargs)

    def _step_outputs(self, outputs):
        """(self-attentions, cross-attentions, hidden states) of one forward, the decoder's for an
        encoder-decoder (cross-attentions None for a decoder-only model)."""
        if self.config.is_encoder_decoder:
            return outputs.decoder_attentions, outputs.cross_attentions, outputs.decoder_hidden_states
        return outputs.attentions, None, outputs.hidden_states

    def _generation_output(self, beam, generation_config, model_kwargs, attentions, cross_attentions,
                           hidden_states, **fields):
        """The `return_dict_in_generate` result: HF's decoder-only or encoder-decoder class (for
        sampling or beam search), with the encoder's attentions and hidden states once."""
        cache = model_kwargs.get("past_key_values")
        if not self.config.is_encoder_decoder:
            output_class = GenerateBeamDecoderOnlyOutput if beam else GenerateDecoderOnlyOutput
            return output_class(attentions=attentions, hidden_states=hidden_states, past_key_values=cache, **fields)
        encoder_outputs = model_kwargs["encoder_outputs"]
        output_class = GenerateBeamEncoderDecoderOutput if beam else GenerateEncoderDecoderOutput
        return output_class(
            encoder_attentions=encoder_outputs.get("attentions") if generation_config.output_attentions else None,
            encoder_hidden_states=(encoder_outputs.get("hidden_states") if generation_config.output_hidden_states
                                   else None),
            decoder_attentions=attentions, cross_attentions=cross_attentions, decoder_hidden_states=hidden_states,
            past_key_values=cache, **fields)

    def _valid_auto_compile_criteria(self, model_kwargs, generation_config):
        """Whether decoding steps run through `get_compiled_call` (HF's rule): a cache of static
        shape, on an accelerator or where `compile_config._compile_all_devices` asks for it
        (HF leaves CPU generation eager by default), and no `disable_compile`."""
        if generation_config.disable_compile:
            return False
        compile_config = generation_config.compile_config
        valid_device = self.device.type == "cuda" or bool(compile_config is not None
                                                           and compile_config._compile_all_devices)
        cache = model_kwargs.get("past_key_values")
        can_compile = valid_device and isinstance(cache, Cache) and cache.is_compileable
        if compile_config is not None and not can_compile:
            logger.warning("You have set `compile_config`, but we are unable to meet the criteria for compilation. "
                           "Compilation will be skipped.")
        return can_compile

    def _sample(self, input_ids, logits_processor, stopping_criteria, generation_config, streamer=None,
                **model_kwargs):
        """Greedy decoding or multinomial sampling, one token per row per step."""
        pad_token_id = generation_config._pad_token_tensor
        return_dict = generation_config.return_dict_in_generate
        output_scores, output_logits = generation_config.output_scores, generation_config.output_logits
        output_attentions = generation_config.output_attentions
        output_hidden_states = generation_config.output_hidden_states
        scores = () if return_dict and output_scores else None
        raw_logits = () if return_dict and output_logits else None
        attentions = () if return_dict and output_attentions else None
        cross_attentions = () if return_dict and output_attentions and self.config.is_encoder_decoder else None
        hidden_states = () if return_dict and output_hidden_states else None
        has_eos_criteria = any(hasattr(criterion, "eos_token_id") for criterion in stopping_criteria)
        if has_eos_criteria and pad_token_id is None:
            raise ValueError("If `eos_token_id` was passed as stopping criteria, `pad_token_id` must be defined.")
        do_sample = generation_config.do_sample

        batch_size, cur_len = input_ids.shape
        # Generated ids go into preallocated columns; input_ids is a view of the filled part.
        width = max(generation_config.max_length, cur_len + 1)
        sequences = core.zeros((batch_size, width), dtype=input_ids.dtype, device=input_ids.device)
        sequences[:, :cur_len] = input_ids
        input_ids = sequences[:, :cur_len]
        unfinished = core.ones((batch_size,), dtype=core.bool, device=input_ids.device)

        model_forward = (self.get_compiled_call(generation_config.compile_config)
                         if self._valid_auto_compile_criteria(model_kwargs, generation_config) else self.__call__)
        outputs = self._prefill(input_ids, generation_config, model_kwargs)
        while True:
            model_kwargs = self._update_model_kwargs_for_generation(outputs, model_kwargs)
            next_token_logits = _last_step_logits(outputs.logits)
            next_token_scores = logits_processor(input_ids, next_token_logits)
            if return_dict:
                if output_scores:
                    scores += (next_token_scores,)
                if output_logits:
                    raw_logits += (next_token_logits,)
                step_attentions, step_cross_attentions, step_hidden_states = self._step_outputs(outputs)
                if output_attentions:
                    attentions += (step_attentions,)
                    if cross_attentions is not None:
                        cross_attentions += (step_cross_attentions,)
                if output_hidden_states:
                    hidden_states += (step_hidden_states,)
            if do_sample:
                next_tokens = core.multinomial(F.softmax(next_token_scores, dim=-1), num_samples=1).squeeze(1)
            else:
                next_tokens = next_token_scores.argmax(dim=-1)
            if has_eos_criteria:
                next_tokens = core.where(unfinished, next_tokens, pad_token_id.to(next_tokens.dtype))
            if cur_len == sequences.shape[1]:  # a custom criterion let generation run past max_length
                sequences = core.cat([sequences, core.zeros_like(sequences)], dim=1)
            sequences[:, cur_len] = next_tokens
            cur_len += 1
            input_ids = sequences[:, :cur_len]
            unfinished = unfinished & ~stopping_criteria(input_ids, scores)
            if streamer is not None:
                streamer.put(next_tokens.cpu())
            if not bool(unfinished.any()):
                break
            del outputs
            outputs = model_forward(**self._next_inputs(input_ids, model_kwargs), return_dict=True)

        if streamer is not None:
            streamer.end()
        sequences = input_ids.clone()
        if return_dict:
            return self._generation_output(False, generation_config, model_kwargs, attentions, cross_attentions,
                                           hidden_states, sequences=sequences, scores=scores, logits=raw_logits)
        return sequences

    # ------------------------------------------------------------------ beam search

    @staticmethod
    def _flatten_beam_dim(tensor):
        """(batch, num_beams, ...) → (batch * num_beams, ...)"""
        return tensor.reshape(tensor.shape[0] * tensor.shape[1], *tensor.shape[2:])

    @staticmethod
    def _unflatten_beam_dim(tensor, batch_size, num_beams):
        """(batch * num_beams, ...) → (batch, num_beams, ...)"""
        return tensor.reshape(batch_size, num_beams, *tensor.shape[1:])

    @staticmethod
    def _gather_beams(tensor, beam_indices):
        """Select beams along dim 1: tensor (batch, beams, ...), beam_indices (batch, k)."""
        while beam_indices.ndim < tensor.ndim:
            beam_indices = beam_indices.unsqueeze(-1)
        if tensor.ndim > 2:
            beam_indices = beam_indices.expand(*beam_indices.shape[:2], *tensor.shape[2:])
        return core.take_along_dim(tensor, beam_indices, dim=1)

    @staticmethod
    def _check_early_stop_heuristic(is_early_stop_heuristic_unsatisfied, running_beam_scores, beam_scores,
                                    is_sent_finished, cur_len, max_length, decoder_prompt_len, early_stopping,
                                    length_penalty):
        """Whether each batch item's running beams may still beat its worst finished one.

        The best running score is estimated at the current length (early_stopping False), or at
        max_length when early_stopping="never" and a positive length_penalty favours length.
        """
        if early_stopping == "never" and length_penalty > 0.0:
            best_hypothetical_length = max_length - decoder_prompt_len
        else:
            best_hypothetical_length = cur_len - decoder_prompt_len
        best_possible_running_score = running_beam_scores[:, :1] / (best_hypothetical_length ** length_penalty)
        worst_finished_score = core.where(is_sent_finished, beam_scores.amin(dim=1, keepdim=True), -1.0e9)
        return is_early_stop_heuristic_unsatisfied & (best_possible_running_score > worst_finished_score).any(
            dim=-1, keepdim=True)

    @staticmethod
    def _beam_search_has_unfinished_sequences(is_early_stop_heuristic_unsatisfied, is_sent_finished,
                                              next_token_hits_stopping_criteria, early_stopping):
        improvement_possible = bool(is_early_stop_heuristic_unsatisfied.any())
        exists_open_beam = not (bool(is_sent_finished.all()) and early_stopping is True)
        valid_continuations = not bool(next_token_hits_stopping_criteria.all())
        return improvement_possible and exists_open_beam and valid_continuations

    def _get_top_k_continuations(self, accumulated_log_probs, running_sequences, running_beam_indices, cur_len,
                                 decoder_prompt_len, do_sample, beams_to_keep, num_beams, batch_size):
        """The best (or sampled) `beams_to_keep` continuations over all beams and tokens of each item."""
        if do_sample:
            # Sampling without replacement as torch.multinomial does it (an exponential race): the
            # k largest p / Exp(1) draws. Unlike a draw-by-draw sampler it never runs out of
            # categories: with fewer than k non-zero probabilities, zero-probability ones fill up.
            probs = F.softmax(accumulated_log_probs, dim=-1)
            race = probs / core.empty_like(probs).exponential_()
            topk_indices = core.topk(race, k=beams_to_keep)[1]
            topk_log_probs = core.gather(accumulated_log_probs, 1, topk_indices)
        else:
            topk_log_probs, topk_indices = core.topk(accumulated_log_probs, k=beams_to_keep)
        vocab_size = accumulated_log_probs.shape[-1] // num_beams
        topk_current_beam_indices = topk_indices // vocab_size
        topk_running_beam_indices = self._gather_beams(running_beam_indices, topk_current_beam_indices)
        topk_running_sequences = self._gather_beams(running_sequences, topk_current_beam_indices)
        topk_ids = topk_indices % vocab_size
        topk_running_sequences[:, :, cur_len] = topk_ids
        batch_offset = core.arange(batch_size, device=topk_ids.device).view(-1, 1) * num_beams
        topk_running_beam_indices[:, :, cur_len - decoder_prompt_len] = (
            topk_current_beam_indices + batch_offset).to(topk_running_beam_indices.dtype)
        return topk_log_probs, topk_running_sequences, topk_running_beam_indices

    def _get_running_beams_for_next_iteration(self, topk_log_probs, topk_running_sequences,
                                              topk_running_beam_indices, next_token_hits_stopping_criteria,
                                              num_beams):
        """The best `num_beams` continuations that did not just finish."""
        topk_running_log_probs = topk_log_probs + next_token_hits_stopping_criteria.float() * -1.0e9
        next_topk_indices = core.topk(topk_running_log_probs, k=num_beams)[1]
        running_sequences = self._gather_beams(topk_running_sequences, next_topk_indices)
        running_beam_scores = self._gather_beams(topk_running_log_probs, next_topk_indices)
        running_beam_indices = self._gather_beams(topk_running_beam_indices, next_topk_indices)
        return running_sequences, running_beam_scores, running_beam_indices

    def _update_finished_beams(self, sequences, topk_running_sequences, beam_scores, topk_log_probs, beam_indices,
                               topk_running_beam_indices, is_early_stop_heuristic_unsatisfied, is_sent_finished,
                               next_token_hits_stopping_criteria, top_num_beam_mask, num_beams, cur_len,
                               decoder_prompt_len, length_penalty, early_stopping):
        """Merge sequences that just finished (among the top num_beams candidates) into the
        finished set when they beat what is there, keeping the best num_beams."""
        did_top_num_beams_just_finish = next_token_hits_stopping_criteria & top_num_beam_mask[None, :]
        topk_log_probs = topk_log_probs / ((cur_len + 1 - decoder_prompt_len) ** length_penalty)
        beams_in_batch_are_full = is_sent_finished.all(dim=-1, keepdim=True) & (early_stopping is True)
        topk_log_probs = topk_log_probs + beams_in_batch_are_full.float() * -1.0e9
        topk_log_probs = topk_log_probs + (~is_early_stop_heuristic_unsatisfied).float() * -1.0e9
        topk_log_probs = topk_log_probs + (~did_top_num_beams_just_finish).float() * -1.0e9
        merged_sequences = core.cat([sequences, topk_running_sequences], dim=1)
        merged_scores = core.cat([beam_scores, topk_log_probs], dim=1)
        merged_beam_indices = core.cat([beam_indices, topk_running_beam_indices], dim=1)
        merged_is_sent_finished = core.cat([is_sent_finished, did_top_num_beams_just_finish], dim=1)
        topk_merged_indices = core.topk(merged_scores, k=num_beams)[1]
        sequences = self._gather_beams(merged_sequences, topk_merged_indices)
        beam_scores = self._gather_beams(merged_scores, topk_merged_indices)
        beam_indices = self._gather_beams(merged_beam_indices, topk_merged_indices)
        is_sent_finished = self._gather_beams(merged_is_sent_finished, topk_merged_indices)
        return sequences, beam_scores, beam_indices, is_sent_finished

    def _beam_search(self, input_ids, logits_processor, stopping_criteria, generation_config, **model_kwargs):
        """HF v5's vectorised beam search: per batch item, `num_beams` running beams and the
        `num_beams` best finished sequences, all updated with tensor ops each step."""
        pad_token_id = generation_config._pad_token_tensor
        eos_token_id = generation_config._eos_token_tensor
        return_dict = generation_config.return_dict_in_generate
        output_scores, output_logits = generation_config.output_scores, generation_config.output_logits
        output_attentions = generation_config.output_attentions
        output_hidden_states = generation_config.output_hidden_states
        do_sample = generation_config.do_sample
        early_stopping = generation_config.early_stopping
        length_penalty = generation_config.length_penalty
        max_length = generation_config.max_length
        num_beams = generation_config.num_beams
        num_return_sequences = generation_config.num_return_sequences

        batch_size_unflattened, cur_len = input_ids.shape[:2]
        batch_size = batch_size_unflattened // num_beams
        decoder_prompt_len = cur_len
        device = input_ids.device

        n_eos_tokens = eos_token_id.shape[0] if eos_token_id is not None else 0
        beams_to_keep = max(2, 1 + n_eos_tokens) * num_beams
        top_num_beam_mask = core.cat([core.ones((num_beams,), dtype=core.bool),
                                      core.zeros((beams_to_keep - num_beams,), dtype=core.bool)]).to(device)

        all_scores = () if return_dict and output_scores else None
        raw_logits = () if return_dict and output_logits else None
        attentions = () if return_dict and output_attentions else None
        cross_attentions = () if return_dict and output_attentions and self.config.is_encoder_decoder else None
        hidden_states = () if return_dict and output_hidden_states else None

        # HF fills unused positions with pad, or the first EOS id when pad is 0/unset, or -1 without EOS.
        if eos_token_id is None:
            fill_value = -1
        elif pad_token_id is not None and int(pad_token_id) != 0:
            fill_value = int(pad_token_id)
        else:
            fill_value = int(eos_token_id[0])
        running_sequences = core.full((batch_size, num_beams, max_length), fill_value, dtype=core.int64,
                                      device=device)
        running_sequences[:, :, :cur_len] = self._unflatten_beam_dim(input_ids, batch_size, num_beams)
        sequences = running_sequences.clone()
        running_beam_scores = core.zeros((batch_size, num_beams), dtype=core.float32, device=device)
        running_beam_scores[:, 1:] = -1e9
        beam_scores = core.full((batch_size, num_beams), -1e9, dtype=core.float32, device=device)
        is_sent_finished = core.zeros((batch_size, num_beams), dtype=core.bool, device=device)
        is_early_stop_heuristic_unsatisfied = core.ones((batch_size, 1), dtype=core.bool, device=device)
        running_beam_indices = core.full((batch_size, num_beams, max_length - cur_len), -1, dtype=core.int32,
                                         device=device)
        beam_indices = running_beam_indices.clone()

        flat_running_sequences = input_ids
        model_outputs = self._prefill(input_ids, generation_config, model_kwargs)
        while True:
            model_kwargs = self._update_model_kwargs_for_generation(model_outputs, model_kwargs)
            logits = _last_step_logits(model_outputs.logits)
            log_probs = F.log_softmax(logits, dim=-1)
            log_probs = logits_processor(flat_running_sequences, log_probs)
            if return_dict:
                if output_logits:
                    raw_logits += (logits.clone(),)
                if output_scores:
                    all_scores += (log_probs.clone(),)
                step_attentions, step_cross_attentions, step_hidden_states = self._step_outputs(model_outputs)
                if output_attentions:
                    attentions += (step_attentions,)
                    if cross_attentions is not None:
                        cross_attentions += (step_cross_attentions,)
                if output_hidden_states:
                    hidden_states += (step_hidden_states,)
            del model_outputs

            log_probs = self._unflatten_beam_dim(log_probs, batch_size, num_beams)
            log_probs = log_probs + running_beam_scores[:, :, None]
            log_probs = log_probs.reshape(batch_size, -1)

            topk_log_probs, topk_running_sequences, topk_running_beam_indices = self._get_top_k_continuations(
                log_probs, running_sequences, running_beam_indices, cur_len, decoder_prompt_len, do_sample,
                beams_to_keep, num_beams, batch_size)
            next_token_hits_stopping_criteria = stopping_criteria(
                self._flatten_beam_dim(topk_running_sequences[:, :, :cur_len + 1]), all_scores)
            next_token_hits_stopping_criteria = self._unflatten_beam_dim(
                next_token_hits_stopping_criteria, batch_size, beams_to_keep)

            running_sequences, running_beam_scores, running_beam_indices = \
                self._get_running_beams_for_next_iteration(
                    topk_log_probs, topk_running_sequences, topk_running_beam_indices,
                    next_token_hits_stopping_criteria, num_beams)
            sequences, beam_scores, beam_indices, is_sent_finished = self._update_finished_beams(
                sequences, topk_running_sequences, beam_scores, topk_log_probs, beam_indices,
                topk_running_beam_indices, is_early_stop_heuristic_unsatisfied, is_sent_finished,
                next_token_hits_stopping_criteria, top_num_beam_mask, num_beams, cur_len, decoder_prompt_len,
                length_penalty, early_stopping)

            cache = model_kwargs.get("past_key_values")
            if cache is not None:
                beam_idx = self._flatten_beam_dim(running_beam_indices[..., cur_len - decoder_prompt_len]).long()
                if isinstance(cache, EncoderDecoderCache):
                    # A prompt's beams attend to its encoder output repeated per beam: their
                    # cross-attention keys are equal rows, which a reordering within the prompt's
                    # beams would only copy (every layer's encoder-length keys, every step).
                    cache = cache.self_attention_cache
                cache.reorder_cache(beam_idx)

            cur_len += 1
            is_early_stop_heuristic_unsatisfied = self._check_early_stop_heuristic(
                is_early_stop_heuristic_unsatisfied, running_beam_scores, beam_scores, is_sent_finished, cur_len,
                max_length, decoder_prompt_len, early_stopping, length_penalty)
            if not self._beam_search_has_unfinished_sequences(
                    is_early_stop_heuristic_unsatisfied, is_sent_finished, next_token_hits_stopping_criteria,
                    early_stopping):
                break
            flat_running_sequences = self._flatten_beam_dim(running_sequences[:, :, :cur_len])
            model_outputs = self(**self._next_inputs(flat_running_sequences, model_kwargs), return_dict=True)

        sequences = self._flatten_beam_dim(sequences[:, :num_return_sequences, :])
        beam_scores = self._flatten_beam_dim(beam_scores[:, :num_return_sequences])
        beam_indices = self._flatten_beam_dim(beam_indices[:, :num_return_sequences, :])
        max_generated_length = int((beam_indices + 1).bool().sum(dim=1).max())
        sequences = sequences[:, :decoder_prompt_len + max_generated_length].clone()
        beam_indices = beam_indices[:, :max_generated_length].clone()

        if return_dict:
            return self._generation_output(
                True, generation_config, model_kwargs, attentions, cross_attentions, hidden_states,
                sequences=sequences, sequences_scores=beam_scores if output_scores else None, scores=all_scores,
                logits=raw_logits, beam_indices=beam_indices)
        return sequences

    # ------------------------------------------------------------------ analysis

    def compute_transition_scores(self, sequences, scores, beam_indices=None, normalize_logits=False):
        """The score of each generated token at the step that produced it, (batch, generated
        length); with beam search pass `beam_indices`, and 0 fills positions past a beam's end."""
        if beam_indices is None:
            beam_indices = core.arange(scores[0].shape[0], device=sequences.device).view(-1, 1)
            beam_indices = beam_indices.expand(-1, len(scores))
        stacked = core.stack(list(scores)).reshape(len(scores), -1).transpose(0, 1)
        vocab_size = scores[0].shape[-1]
        if normalize_logits:
            stacked = stacked.reshape(-1, vocab_size, stacked.shape[-1])
            stacked = F.log_softmax(stacked, dim=1).reshape(-1, stacked.shape[-1])
        beam_indices_mask = beam_indices < 0
        max_beam_length = int((1 - beam_indices_mask.long()).sum(-1).max())
        beam_indices = beam_indices.clone()[:, :max_beam_length].long()
        beam_indices_mask = beam_indices_mask[:, :max_beam_length]
        beam_indices = beam_indices.masked_fill(beam_indices_mask, 0)
        cut = sequences.shape[-1] - max_beam_length
        indices = sequences[:, cut:] + beam_indices * vocab_size
        transition_scores = stacked.gather(0, indices)
        return transition_scores.masked_fill(beam_indices_mask, 0)
