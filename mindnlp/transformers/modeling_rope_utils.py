# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Rotary position embedding (RoPE) parameters: standardisation, validation, inverse frequencies.

A config describes its RoPE in one dict, `config.rope_parameters`, as Hugging Face transformers
v5 does: `{"rope_type": "default" | "linear" | "dynamic" | "yarn" | "longrope" | "llama3", "rope_theta": ...,
plus the keys that type needs}`. Checkpoints written by transformers v4 keep `rope_theta` at the
top level and the scaling in `rope_scaling` (sometimes spelled `{"type": ...}`); configs fold
both into `rope_parameters` when they are built, so model code reads one place only.

A config whose attention differs by layer (`layer_types`) may instead hold one such dict per
layer type, e.g. `{"full_attention": {...}, "sliding_attention": {...}}`.

The inverse-frequency functions are plain NumPy so that they run before any tensor exists and
on any backend: each returns `(inv_freq, attention_factor)`, a float32 array of length
`rotary_dim // 2` and the factor by which cos/sin are multiplied.
"""
import logging
import math

import numpy as np

logger = logging.getLogger(__name__)

DEFAULT_THETA = 10_000.0

# RoPE types whose scaling is defined relative to the context length the model was pretrained on.
_TYPES_WITH_ORIGINAL_LENGTH = ("llama3", "yarn", "longrope")


def nested_rope_parameter_keys(config, rope_parameters):
    """Layer types that `rope_parameters` is keyed by; empty when it is one flat dict."""
    layer_types = getattr(config, "layer_types", None) or ()
    return [key for key in rope_parameters if key in layer_types]


def _per_layer_dicts(config, rope_parameters):
    """The flat parameter dicts inside `rope_parameters`, by layer type (None for a flat dict)."""
    nested = nested_rope_parameter_keys(config, rope_parameters)
    if nested:
        return {key: rope_parameters[key] for key in nested}
    return {None: rope_parameters}


def convert_rope_params_to_dict(config, kwargs):
    """Fold v4-style `rope_scaling` / `rope_theta` / `partial_rotary_factor` kwargs into
    `config.rope_parameters`, standardise it, and return the kwargs that remain.

    Priority, as in transformers: values already inside the rope dict, then the loose kwargs,
    then attributes of the config, then the defaults.
    """
    kwargs = dict(kwargs)
    rope_scaling = kwargs.pop("rope_scaling", None)
    rope_parameters = rope_scaling or config.rope_parameters or {}
    # Copy so that a dict passed by the caller (or shared with another config) is never edited.
    rope_parameters = {
        key: dict(value) if isinstance(value, dict) else value for key, value in rope_parameters.items()
    }
    rope_theta = kwargs.pop("rope_theta", getattr(config, "rope_theta", DEFAULT_THETA))
    partial_rotary_factor = kwargs.pop("partial_rotary_factor", getattr(config, "partial_rotary_factor", None))
    for params in _per_layer_dicts(config, rope_parameters).values():
        if params is None:
            continue
        params.setdefault("rope_theta", rope_theta)
        if partial_rotary_factor is not None:
            params.setdefault("partial_rotary_factor", partial_rotary_factor)
    config.rope_parameters = rope_parameters
    standardize_rope_params(config)
    return kwargs


def standardize_rope_params(config):
    """Fill in `rope_type` (from the v4 key `type` when present) and, for the types that need it,
    `original_max_position_embeddings` (defaulting to `max_position_embeddings`)."""
    rope_parameters = getattr(config, "rope_parameters", None) or {}
    if not (rope_parameters or getattr(config, "rope_theta", None)):
        logger.warning("standardize_rope_params was called but the config has no RoPE parameters")
        return
    for layer_type, params in _per_layer_dicts(config, rope_parameters).items():
        if params is None:  # a layer type without RoPE
            continue
        params.setdefault("rope_type", params.get("type", "default"))
        params.setdefault("rope_theta", getattr(config, "rope_theta", None))
        if params["rope_type"] in _TYPES_WITH_ORIGINAL_LENGTH:
            if layer_type is None and hasattr(config, "original_max_position_embeddings"):
                # Phi-3 style configs keep the pretraining length outside the rope dict; it wins.
                params["original_max_position_embeddings"] = config.original_max_position_embeddings
            else:
                params.setdefault("original_max_position_embeddings", config.max_position_embeddings)
    config.rope_parameters = rope_parameters


def _check_keys(rope_type, params, required, optional=()):
    """Raise on a missing required key; warn on keys that this RoPE type does not read."""
    received = set(params)
    if "type" in received:  # v4 spelling of rope_type, kept in the dict for round trips
        received.discard("type")
    missing = set(required) - received
    if missing:
        raise KeyError(f"rope_parameters for rope_type={rope_type!r} is missing required keys: {sorted(missing)}")
    unused = received - set(required) - set(optional) - {"partial_rotary_factor"}
    if unused:
        logger.warning("rope_parameters for rope_type=%r has keys it does not use: %s", rope_type, sorted(unused))


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _warn_if_bad_factor(params):
    factor = params["factor"]
    if not _is_number(factor) or factor < 1.0:
        logger.warning("rope_parameters' factor must be a number >= 1, got %r", factor)


def _validate_default(config, params):
    _check_keys("default", params, {"rope_type"}, {"rope_theta"})


def _validate_linear(config, params):
    _check_keys("linear", params, {"rope_type", "factor"}, {"rope_theta"})
    _warn_if_bad_factor(params)


def _validate_dynamic(config, params):
    _check_keys("dynamic", params, {"rope_type", "factor"}, {"rope_theta"})
    _warn_if_bad_factor(params)


def _validate_yarn(config, params):
    optional = {"rope_theta", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"}
    _check_keys("yarn", params, {"rope_type", "factor", "original_max_position_embeddings"}, optional)
    _warn_if_bad_factor(params)
    attention_factor = params.get("attention_factor")
    if attention_factor is not None and (not isinstance(attention_factor, float) or attention_factor < 0):
        logger.warning("rope_parameters' attention_factor must be a float > 0, got %r", attention_factor)
    for key in ("beta_fast", "beta_slow"):
        if params.get(key) is not None and not _is_number(params[key]):
            logger.warning("rope_parameters' %s must be a number, got %r", key, params[key])
    if (params.get("beta_fast") or 32) < (params.get("beta_slow") or 1):
        logger.warning(
            "rope_parameters' beta_fast must be greater than beta_slow, got beta_fast=%r and beta_slow=%r",
            params.get("beta_fast"),
            params.get("beta_slow"),
        )
    implicit_factor = config.max_position_embeddings / params["original_max_position_embeddings"]
    if implicit_factor not in (params["factor"], 1):
        logger.warning(
            "rope_parameters' factor (%r) differs from max_position_embeddings / "
            "original_max_position_embeddings (%r); YaRN uses the explicit factor",
            params["factor"],
            implicit_factor,
        )


def _validate_llama3(config, params):
    required = {
        "rope_type",
        "factor",
        "original_max_position_embeddings",
        "low_freq_factor",
        "high_freq_factor",
        "rope_theta",
    }
    _check_keys("llama3", params, required)
    _warn_if_bad_factor(params)
    low, high = params["low_freq_factor"], params["high_freq_factor"]
    if not _is_number(low) or not _is_number(high):
        logger.warning("rope_parameters' low_freq_factor and high_freq_factor must be numbers, got %r and %r", low, high)
    elif high <= low:
        logger.warning(
            "rope_parameters' high_freq_factor must be greater than low_freq_factor, got %r and %r", high, low
        )
    original = params["original_max_position_embeddings"]
    if not isinstance(original, int) or isinstance(original, bool):
        logger.warning("rope_parameters' original_max_position_embeddings must be an int, got %r", original)
    elif original >= config.max_position_embeddings:
        logger.warning(
            "rope_parameters' original_max_position_embeddings (%r) should be less than max_position_embeddings (%r)",
            original,
            config.max_position_embeddings,
        )


def _validate_longrope(config, params):
    required = {"rope_type", "short_factor", "long_factor", "rope_theta", "original_max_position_embeddings"}
    _check_keys("longrope", params, required, {"attention_factor", "factor"})
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    half = int(head_dim * params.get("partial_rotary_factor", 1.0)) // 2
    for key in ("short_factor", "long_factor"):
        factors = params[key]
        if not isinstance(factors, list) or not all(_is_number(x) for x in factors):
            logger.warning("rope_parameters' %s must be a list of numbers, got %r", key, factors)
        elif len(factors) != half:
            logger.warning("rope_parameters' %s must have length %d, got %d", key, half, len(factors))
    if params.get("factor") is not None:
        _warn_if_bad_factor(params)
    attention_factor = params.get("attention_factor")
    if attention_factor is not None and (not isinstance(attention_factor, float) or attention_factor < 0):
        logger.warning("rope_parameters' attention_factor must be a float > 0, got %r", attention_factor)


_VALIDATORS = {
    "default": _validate_default,
    "linear": _validate_linear,
    "dynamic": _validate_dynamic,
    "yarn": _validate_yarn,
    "llama3": _validate_llama3,
    "longrope": _validate_longrope,
}


def validate_rope(config):
    """Check `config.rope_parameters`: required keys per type, value ranges, an even rotary dim.

    Missing keys and unsupported types raise; doubtful values (a factor below 1, a pretraining
    length longer than the model's) only warn, as transformers does, because released
    checkpoints carry them.
    """
    rope_parameters = getattr(config, "rope_parameters", None)
    if not rope_parameters:
        return
    head_dim = getattr(config, "head_dim", None)
    for layer_type, params in _per_layer_dicts(config, rope_parameters).items():
        if params is None:
            continue
        rope_type = params.get("rope_type", params.get("type", "default"))
        params["rope_type"] = rope_type
        if rope_type not in _VALIDATORS:
            raise ValueError(f"rope_type {rope_type!r} is not supported; supported types: {sorted(_VALIDATORS)}")
        _VALIDATORS[rope_type](config, params)
        # Tiny test configs use head_dim <= 4, which transformers also lets through.
        partial_rotary_factor = params.get("partial_rotary_factor", 1.0)
        if head_dim is not None and head_dim > 4 and head_dim % 2 and int(head_dim * partial_rotary_factor) == head_dim:
            where = f" for {layer_type}" if layer_type else ""
            raise ValueError(
                f"RoPE needs an even rotary dimension, got head_dim={head_dim} with "
                f"partial_rotary_factor={partial_rotary_factor}{where}"
            )


def _params_and_dim(config, layer_type):
    """The flat rope dict for `layer_type` and the rotary dimension it applies to.

    The config's rope dict is standardised first (as HF does in every initialiser), so that a
    dict edited after construction gains the defaults its rope type needs."""
    standardize_rope_params(config)
    params = config.rope_parameters[layer_type] if layer_type is not None else config.rope_parameters
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    return params, dim


def _base_inv_freq(base, dim):
    """1 / base^(2i/dim) for i < dim/2, in float32 as the reference computes it."""
    exponents = np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)
    return (np.float32(1.0) / (np.float32(base) ** exponents)).astype(np.float32)


def compute_default_rope_parameters(config, seq_len=None, layer_type=None):
    """The original RoPE frequencies."""
    params, dim = _params_and_dim(config, layer_type)
    return _base_inv_freq(params["rope_theta"], dim), 1.0


def compute_linear_scaling_rope_parameters(config, seq_len=None, layer_type=None):
    """Position interpolation: every frequency divided by `factor` (dividing the frequencies is
    the same as dividing the positions, since the angle is their product)."""
    params, dim = _params_and_dim(config, layer_type)
    inv_freq = _base_inv_freq(params["rope_theta"], dim) / np.float32(params["factor"])
    return inv_freq.astype(np.float32), 1.0


def compute_dynamic_ntk_parameters(config, seq_len=None, layer_type=None):
    """Dynamic NTK scaling: the base grows with the sequence length once it exceeds
    `max_position_embeddings`; below that the frequencies equal the default ones."""
    params, dim = _params_and_dim(config, layer_type)
    factor = params["factor"]
    seq_len = config.max_position_embeddings if seq_len is None else max(int(seq_len), config.max_position_embeddings)
    base = params["rope_theta"] * (
        (factor * seq_len / config.max_position_embeddings) - (factor - 1)
    ) ** (dim / (dim - 2))
    return _base_inv_freq(base, dim), 1.0


def _yarn_mscale(scale, mscale=1.0):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_softmax_scale(rope_parameters):
    """The factor by which DeepSeek's attention scales q·k/sqrt(d) twice (mscale², as its
    YaRN checkpoints expect): mscale(factor, `mscale_all_dim`) under a scaled rope that sets
    `mscale_all_dim`, else 1."""
    mscale_all_dim = rope_parameters.get("mscale_all_dim")
    if rope_parameters.get("rope_type", "default") == "default" or not mscale_all_dim:
        return 1.0
    return _yarn_mscale(rope_parameters["factor"], mscale_all_dim)


def compute_yarn_parameters(config, seq_len=None, layer_type=None):
    """YaRN (arxiv 2309.00071): interpolate low frequencies, keep high ones, blend linearly in
    between; cos/sin are scaled by `attention_factor` (derived from `factor` when absent)."""
    params, dim = _params_and_dim(config, layer_type)
    base = params["rope_theta"]
    factor = params["factor"]
    original = params["original_max_position_embeddings"]
    if factor is None:
        # DeepSeek-V3 style: the factor is the ratio of the extended to the pretraining length.
        factor = config.max_position_embeddings / original
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            attention_factor = float(_yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim))
        else:
            attention_factor = _yarn_mscale(factor)
    beta_fast = params.get("beta_fast") or 32
    beta_slow = params.get("beta_slow") or 1

    def correction_dim(num_rotations):
        """The dimension whose wavelength makes `num_rotations` turns over the pretraining length."""
        return (dim * math.log(original / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if params.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # avoid a zero-width ramp

    pos_freqs = np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))
    inv_freq_extrapolation = np.float32(1.0) / pos_freqs
    inv_freq_interpolation = np.float32(1.0) / (np.float32(factor) * pos_freqs)
    ramp = np.clip((np.arange(dim // 2, dtype=np.float32) - np.float32(low)) / np.float32(high - low), 0, 1)
    extrapolation_weight = np.float32(1.0) - ramp
    inv_freq = inv_freq_interpolation * (1 - extrapolation_weight) + inv_freq_extrapolation * extrapolation_weight
    return inv_freq.astype(np.float32), attention_factor


def compute_llama3_parameters(config, seq_len=None, layer_type=None):
    """Llama 3.1 scaling: long wavelengths divided by `factor`, short ones kept, and a smooth
    blend for wavelengths between `original/high_freq_factor` and `original/low_freq_factor`."""
    params, dim = _params_and_dim(config, layer_type)
    inv_freq = _base_inv_freq(params["rope_theta"], dim)
    factor = np.float32(params["factor"])
    low_freq_factor = params["low_freq_factor"]
    high_freq_factor = params["high_freq_factor"]
    old_context_len = params["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor

    wavelen = np.float32(2 * math.pi) / inv_freq
    scaled = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (np.float32(old_context_len) / wavelen - np.float32(low_freq_factor)) / np.float32(
        high_freq_factor - low_freq_factor
    )
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(is_medium, smoothed, scaled).astype(np.float32), 1.0


def compute_longrope_parameters(config, seq_len=None, layer_type=None):
    """LongRoPE (Phi-3): each frequency divided by its own factor, `short_factor` within the
    pretraining length and `long_factor` beyond it (`seq_len` decides); cos/sin are scaled by
    sqrt(1 + ln(factor) / ln(original length)) unless `attention_factor` is given, where
    `factor` defaults to max_position_embeddings / original_max_position_embeddings."""
    params, dim = _params_and_dim(config, layer_type)
    original = params["original_max_position_embeddings"]
    factor = params.get("factor")
    if factor is None:
        factor = config.max_position_embeddings / original
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    ext_factors = np.asarray(params["long_factor"] if seq_len and seq_len > original else params["short_factor"],
                             dtype=np.float32)
    exponents = np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)
    inv_freq = np.float32(1.0) / (ext_factors * np.float32(params["rope_theta"]) ** exponents)
    return inv_freq.astype(np.float32), attention_factor


ROPE_INIT_FUNCTIONS = {
    "default": compute_default_rope_parameters,
    "linear": compute_linear_scaling_rope_parameters,
    "dynamic": compute_dynamic_ntk_parameters,
    "yarn": compute_yarn_parameters,
    "llama3": compute_llama3_parameters,
    "longrope": compute_longrope_parameters,
}


def rope_init(config, seq_len=None, layer_type=None):
    """`(inv_freq, attention_factor)` for the config's RoPE type (per `layer_type` when nested).

    `seq_len` matters only to "dynamic", which model code calls again when a sequence grows
    past `max_position_embeddings`, and to "longrope", whose factors change past the
    pretraining length.
    """
    params = config.rope_parameters[layer_type] if layer_type is not None else config.rope_parameters
    rope_type = params["rope_type"]
    if rope_type not in ROPE_INIT_FUNCTIONS:
        raise ValueError(f"rope_type {rope_type!r} is not supported; supported types: {sorted(ROPE_INIT_FUNCTIONS)}")
    return ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len, layer_type=layer_type)
