"""`GenerationTesterMixin`: the generation checks every generative model runs that transformers'
own tests/generation/test_utils.py does not already make against mindnlp (those files run in CI
through the HF-tests gate: greedy, sampling and beam outputs, caches, inputs_embeds, left
padding). What stays here: `min_new_tokens`, the static cache, `logits_to_keep` where HF's file
does not reach, and eager against sdpa generations.

A model test class mixes it in next to `ModelTesterMixin` (whose `all_generative_model_classes`
lists the classes that can generate) and has a `model_tester` with
`prepare_config_and_inputs_for_common()` and `seq_length`.
"""
import inspect
import tempfile

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers.cache_utils import Cache, StaticCache
from mindnlp.transformers.testing_utils import torch_device


def _numpy(tensor):
    return tensor.detach().float().cpu().numpy()


def _kept_positions_per_layer(config):
    """For each decoder layer, how many past positions its cache keeps between forward calls:
    None (all of them) for full attention, `sliding_window - 1` for a sliding-window layer (a
    query attends to itself and that many earlier positions, so older ones are dropped, as in
    HF v5's DynamicSlidingWindowLayer). Read from the config, so the cache is checked against
    what the model declares rather than against itself."""
    window = getattr(config, "sliding_window", None)
    layer_types = getattr(config, "layer_types", None)
    if layer_types is None:
        kind = "sliding_attention" if window is not None else "full_attention"
        layer_types = [kind] * config.num_hidden_layers
    return [window - 1 if kind == "sliding_attention" else None for kind in layer_types]


def _cached_length(kept, seen):
    """Positions a layer's cache holds after `seen` positions went through it."""
    return seen if kept is None else min(kept, seen)


class GenerationTesterMixin:
    input_name = "input_ids"
    model_tester = None
    max_new_tokens = 3

    # ------------------------------------------------------------------ inputs and settings

    def prepare_config_and_inputs_for_generate(self, batch_size=2):
        """The common config and inputs cut to `batch_size` rows, without the inputs generate()
        sets itself, and with no EOS id so every call runs to its length limit (the length checks
        depend on it); the pad id falls back to the EOS id, as generate() would do."""
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        ignored = ("head_mask", "decoder_head_mask", "cross_attn_head_mask", "decoder_input_ids",
                   "decoder_attention_mask", "use_cache", "labels")
        inputs_dict = {key: value[:batch_size] if isinstance(value, core.Tensor) else value
                       for key, value in inputs_dict.items() if key not in ignored}
        text_config = config.get_text_config(decoder=True)
        if text_config.eos_token_id is not None and text_config.pad_token_id is None:
            eos = text_config.eos_token_id
            text_config.pad_token_id = eos if isinstance(eos, int) else eos[0]
        text_config.eos_token_id = None
        text_config.forced_eos_token_id = None
        return config, inputs_dict

    def _get_logits_processor_kwargs(self, do_sample=False, config=None):
        """Processors every generation check runs through (and, for sampling, the warpers).
        `config` is HF's hook for banning multimodal models' image tokens; text models ignore it."""
        kwargs = {"bad_words_ids": [[1, 0]], "repetition_penalty": 1.2, "remove_invalid_values": True}
        if do_sample:
            kwargs.update(top_k=10, top_p=0.7, temperature=0.7)
        return kwargs

    def _get_beam_kwargs(self, num_return_sequences=1):
        return {"early_stopping": False, "length_penalty": 2.0, "num_beams": 2,
                "num_return_sequences": num_return_sequences}

    def _generate(self, model, inputs_dict, do_sample, output_scores, output_logits, output_attentions,
                  output_hidden_states, return_dict_in_generate, use_cache, **kwargs):
        return model.generate(
            do_sample=do_sample, max_new_tokens=self.max_new_tokens, output_scores=output_scores,
            output_logits=output_logits, output_attentions=output_attentions,
            output_hidden_states=output_hidden_states, return_dict_in_generate=return_dict_in_generate,
            use_cache=use_cache, **kwargs, **self._get_logits_processor_kwargs(do_sample, model.config),
            **inputs_dict)

    def _all_outputs(self):
        """The flags of the dict-output checks: everything a generation step can return."""
        return {"output_scores": True, "output_logits": True, "output_hidden_states": True,
                "output_attentions": self.has_attentions, "return_dict_in_generate": True}

    # ------------------------------------------------------------------ greedy search

    # ------------------------------------------------------------------ sampling

    # ------------------------------------------------------------------ beam search

    # ------------------------------------------------------------------ lengths and prompts

    @pytest.mark.generate
    def test_generate_min_new_tokens_delays_eos(self):
        """`min_new_tokens` bans EOS until that many tokens are out, then generation stops at it;
        `max_new_tokens` bounds the rest. EOS is set to the tokens greedy search picks first, so
        without the minimum every row would stop after one token."""
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            model = model_class(config).to(torch_device).eval()
            prompt_length = inputs_dict["input_ids"].shape[-1]
            first = model.generate(do_sample=False, max_new_tokens=1, **inputs_dict)[:, prompt_length]
            eos = sorted({int(token) for token in first})
            pad = config.pad_token_id

            stopped = model.generate(do_sample=False, max_new_tokens=5, eos_token_id=eos, pad_token_id=pad,
                                     **inputs_dict)
            self.assertEqual(stopped.shape[-1], prompt_length + 1)

            min_new_tokens = 3
            output = model.generate(do_sample=False, max_new_tokens=5, min_new_tokens=min_new_tokens,
                                    eos_token_id=eos, pad_token_id=pad, **inputs_dict)
            generated = output[:, prompt_length:].cpu().numpy()
            self.assertGreaterEqual(generated.shape[1], min_new_tokens)
            self.assertLessEqual(generated.shape[1], 5)
            self.assertFalse(np.isin(generated[:, :min_new_tokens], eos).any())
            for row in generated:
                hits = np.flatnonzero(np.isin(row, eos))
                if hits.size:  # a finished row is padded after its EOS
                    self.assertTrue((row[hits[0] + 1:] == pad).all())

    # ------------------------------------------------------------------ the cache

    @pytest.mark.generate
    def test_generate_with_static_cache(self):
        """`cache_implementation="static"` preallocates a StaticCache for prompt + new tokens - 1
        positions (the last token is never fed back) and generates what the dynamic cache does."""
        max_new_tokens = 20
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if config.is_encoder_decoder:
                self.skipTest(reason="This model is encoder-decoder and has Encoder-Decoder Cache")
            config.is_decoder = True
            main_input = inputs_dict[model_class.main_input_name]
            batch_size, seq_length = main_input.shape[0], main_input.shape[-1]
            max_cache_len = seq_length + max_new_tokens - 1
            text_config = config.get_text_config(decoder=True)
            for dtype in (core.float32, core.float16):
                model = model_class(config).to(torch_device).to(dtype).eval()
                generation_kwargs = {"max_new_tokens": max_new_tokens, "return_dict_in_generate": True,
                                     "output_scores": True, "use_cache": True}
                static = model.generate(**generation_kwargs, **inputs_dict, cache_implementation="static")
                self.assertIsInstance(static.past_key_values, StaticCache)
                self._check_static_cache_capacity(static.past_key_values, max_cache_len, text_config)
                self._check_past_key_values_for_generate(batch_size, static.past_key_values, max_cache_len,
                                                         text_config)
                dynamic = model.generate(**generation_kwargs, **inputs_dict)
                self._check_similar_generate_outputs(dynamic, static)

    # ------------------------------------------------------------------ inputs_embeds

    @pytest.mark.generate
    def test_generate_from_inputs_embeds_with_static_cache(self):
        """From `inputs_embeds` with a static cache: the cache holds the embedded prompt plus the new
        tokens but the last, so max_new_tokens counts new tokens only."""
        max_new_tokens = 10
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if config.is_encoder_decoder:
                self.skipTest(reason="This model is encoder-decoder and has Encoder-Decoder Cache")
            config.is_decoder = True
            model = model_class(config).to(torch_device).eval()
            if "inputs_embeds" not in inspect.signature(model.prepare_inputs_for_generation).parameters:
                self.skipTest(reason="This model does not support `inputs_embeds` in generation")
            input_ids = inputs_dict.pop("input_ids")
            model.generation_config.eos_token_id = -1  # run to max_new_tokens
            inputs_embeds = model.get_input_embeddings()(input_ids)
            outputs = model.generate(inputs_embeds=inputs_embeds, max_new_tokens=max_new_tokens,
                                     cache_implementation="static", return_dict_in_generate=True, **inputs_dict)
            self.assertEqual(tuple(outputs.sequences.shape), (input_ids.shape[0], max_new_tokens))
            max_cache_len = max_new_tokens + inputs_embeds.shape[1] - 1
            text_config = config.get_text_config(decoder=True)
            self.assertIsInstance(outputs.past_key_values, StaticCache)
            self._check_static_cache_capacity(outputs.past_key_values, max_cache_len, text_config)
            self._check_past_key_values_for_generate(input_ids.shape[0], outputs.past_key_values, max_cache_len,
                                                     text_config)

    # ------------------------------------------------------------------ model integration

    @pytest.mark.generate
    def test_generate_methods_with_logits_to_keep(self):
        """generate() computes only the last position's logits (logits_to_keep=1); keeping all
        of them (0) picks the same tokens."""
        for model_class in self.all_generative_model_classes:
            if "logits_to_keep" not in inspect.signature(model_class.forward).parameters:
                self.skipTest(reason="This model does not support `logits_to_keep` argument.")
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            config.use_cache = True
            config.is_decoder = True
            model = model_class(config).to(torch_device).eval()
            generation_kwargs = {"max_new_tokens": 10, "do_sample": False}
            with_all_logits = model.generate(**generation_kwargs, **inputs_dict, logits_to_keep=0)
            without_all_logits = model.generate(**inputs_dict, **generation_kwargs)
            self.assertEqual(with_all_logits.tolist(), without_all_logits.tolist())

    @pytest.mark.generate
    def test_eager_matches_sdpa_generate(self):
        """Greedy generation (30 tokens, through the cache) is the same with the eager and the
        SDPA attention implementations, loaded from one checkpoint."""
        max_new_tokens = 30
        for model_class in self.all_generative_model_classes:
            if not getattr(model_class, "_supports_sdpa", False):
                self.skipTest(f"{model_class.__name__} does not support `attn_implementation=sdpa`")
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            main_input = inputs_dict[model_class.main_input_name]
            if hasattr(config, "max_position_embeddings"):
                config.max_position_embeddings = max_new_tokens + main_input.shape[1] + 1
            generate_kwargs = {"max_new_tokens": max_new_tokens, "do_sample": False, "return_dict_in_generate": True,
                               "output_scores": True, "use_cache": True}
            with tempfile.TemporaryDirectory() as tmpdirname:
                model_class(config).save_pretrained(tmpdirname)
                results = []
                for implementation in ("eager", "sdpa"):
                    model = model_class.from_pretrained(tmpdirname, attn_implementation=implementation,
                                                        device_map=torch_device).eval()
                    self.assertEqual(model.config._attn_implementation, implementation)
                    results.append(model.generate(**inputs_dict, **generate_kwargs))
            self._check_similar_generate_outputs(*results, atol=1e-4, rtol=1e-4)

    # ------------------------------------------------------------------ output checks

    def _check_similar_generate_outputs(self, output_1, output_2, atol=1e-5, rtol=1e-5):
        """Two generate() results agree: the same sequences, or sequences that first differ at a
        step where both runs scored the candidates alike (a near tie decided by rounding)."""
        self.assertEqual(tuple(output_1.sequences.shape), tuple(output_2.sequences.shape))
        prompt_length = output_1.sequences.shape[1] - len(output_1.scores)
        matches = output_1.sequences.cpu().numpy() == output_2.sequences.cpu().numpy()
        for row in range(matches.shape[0]):
            if matches[row].all():
                continue
            step = int(np.argmin(matches[row])) - prompt_length
            self.assertGreaterEqual(step, 0, "the prompts differ")
            np.testing.assert_allclose(_numpy(output_1.scores[step][row]), _numpy(output_2.scores[step][row]),
                                       rtol=rtol, atol=atol)

    def _check_generate_outputs(self, output, config, use_cache=False, num_return_sequences=1, num_beams=1):
        input_batch_size = output.sequences.shape[0] // num_return_sequences
        internal_batch_size = input_batch_size * (num_beams if num_beams > 1 else num_return_sequences)
        prompt_length = getattr(self.model_tester, "seq_length", None)
        prompt_length = getattr(self.model_tester, "encoder_seq_length", prompt_length)
        prompt_length = getattr(self.model_tester, "text_seq_length", prompt_length)
        config = config.get_text_config(decoder=True)
        output_length = output.sequences.shape[-1]
        past_key_values = getattr(output, "past_key_values", None)

        self._check_scores(internal_batch_size, output.scores, output_length - prompt_length, config)
        self._check_logits(internal_batch_size, output.logits, config)
        if self.has_attentions:
            self._check_attentions_for_generate(internal_batch_size, output.attentions, prompt_length, output_length,
                                                config, past_key_values)
        self._check_hidden_states_for_generate(internal_batch_size, output.hidden_states, prompt_length,
                                               output_length, config, use_cache=use_cache)
        if num_beams > 1:
            self.assertEqual(tuple(output.beam_indices.shape), (output.sequences.shape[0], output_length - prompt_length))
            self.assertEqual(tuple(output.sequences_scores.shape), (output.sequences.shape[0],))
        if use_cache:
            # The last token is never fed back, so the cache holds one position fewer than the output.
            self._check_past_key_values_for_generate(internal_batch_size, past_key_values, output_length - 1, config)
        else:
            self.assertIsNone(past_key_values)

    def _check_scores(self, batch_size, scores, generated_length, config):
        vocab_size = config.get_text_config(decoder=True).vocab_size
        self.assertIsInstance(scores, tuple)
        self.assertEqual(len(scores), generated_length)
        self.assertListEqual([tuple(s.shape) for s in scores], [(batch_size, vocab_size)] * len(scores))

    def _check_logits(self, batch_size, logits, config):
        vocab_size = config.get_text_config(decoder=True).vocab_size
        self.assertIsInstance(logits, tuple)
        self.assertListEqual([step.shape[0] for step in logits], [batch_size] * len(logits))
        vocab_diff = vocab_size - logits[0].shape[-1]
        self.assertIn(vocab_diff, (0, 1))
        self.assertListEqual([vocab_size - step.shape[-1] for step in logits], [vocab_diff] * len(logits))

    def _check_attentions_for_generate(self, batch_size, attentions, prompt_length, output_length, config,
                                       past_key_values):
        """One tuple of per-layer attention weights per generated token. The first step sees the
        whole prompt; with the cache each later step feeds one token, which attends to the
        positions its layer kept (all of them, or the last `sliding_window - 1`) and itself."""
        self.assertIsInstance(attentions, tuple)
        self.assertListEqual([isinstance(step, tuple) for step in attentions], [True] * len(attentions))
        self.assertEqual(len(attentions), output_length - prompt_length)
        use_cache = past_key_values is not None
        kept = _kept_positions_per_layer(config)
        for generated_length, step_attentions in enumerate(attentions):
            total_length = prompt_length + generated_length
            model_input_length = 1 if use_cache and generated_length > 0 else total_length
            past_length = total_length - model_input_length
            expected = [(batch_size, config.num_attention_heads, model_input_length,
                         (_cached_length(layer_kept, past_length) if use_cache else past_length) + model_input_length)
                        for layer_kept in kept]
            self.assertListEqual([tuple(a.shape) for a in step_attentions], expected)

    def _check_hidden_states_for_generate(self, batch_size, hidden_states, prompt_length, output_length, config,
                                          use_cache=False):
        """One tuple (embeddings + each layer) per generated token, over the positions fed in."""
        self.assertIsInstance(hidden_states, tuple)
        self.assertListEqual([isinstance(step, tuple) for step in hidden_states], [True] * len(hidden_states))
        self.assertEqual(len(hidden_states), output_length - prompt_length)
        for generated_length, step_hidden_states in enumerate(hidden_states):
            model_input_length = 1 if use_cache and generated_length > 0 else prompt_length + generated_length
            expected = (batch_size, model_input_length, config.hidden_size)
            self.assertListEqual([tuple(h.shape) for h in step_hidden_states],
                                 [expected] * (config.num_hidden_layers + 1))

    def _check_past_key_values_for_generate(self, batch_size, past_key_values, seq_length, config):
        """A Cache with (batch, kv heads, cached length, head dim) keys and values per layer, after
        `seq_length` positions went through it. A StaticCache (`seq_length` its max_cache_len)
        returns whole buffers: a sliding-window layer's holds its window, itself included."""
        self.assertIsInstance(past_key_values, Cache)
        num_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        kept = _kept_positions_per_layer(config)
        if isinstance(past_key_values, StaticCache):
            kept = [None if layer_kept is None else layer_kept + 1 for layer_kept in kept]
        self.assertEqual(len(past_key_values.layers), len(kept))
        for layer, layer_kept in zip(past_key_values.layers, kept):
            expected = (batch_size, num_heads, _cached_length(layer_kept, seq_length), head_dim)
            self.assertEqual(tuple(layer.keys.shape), expected)
            self.assertEqual(tuple(layer.values.shape), expected)

    def _check_static_cache_capacity(self, cache, max_cache_len, config):
        """Full-attention layers of a static cache were allocated for exactly `max_cache_len`
        positions (sliding-window layers keep their window instead)."""
        for layer, layer_kept in zip(cache.layers, _kept_positions_per_layer(config)):
            if layer_kept is None:
                self.assertEqual(layer.get_max_length(), max_cache_len)
                self.assertEqual(layer.capacity, max_cache_len)
