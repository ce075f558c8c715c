"""`GenerationTesterMixin`: the generation checks every generative model runs, in the shape of
HF transformers v5's tests/generation/test_utils.py, so HF model test files port by changing
imports only.

A model test class mixes it in next to `ModelTesterMixin` (whose `all_generative_model_classes`
lists the classes that can generate) and has a `model_tester` with
`prepare_config_and_inputs_for_common()` and `seq_length`. The checks cover what mindnlp's
`generate()` implements: greedy search, multinomial sampling, beam search and beam sampling,
each with and without `return_dict_in_generate` and its per-step outputs (scores, logits,
attentions, hidden states, the cache), the cache on and off, generation from `inputs_embeds`
and without a prompt, continuing from a returned cache, left padding, the static cache,
`logits_to_keep`, and `min_new_tokens` / `max_new_tokens`. HF's strategies that left
transformers' core in v5 (contrastive search, constrained and group beam search, DoLa) and
HF's compilation tests have no counterpart here; assisted decoding and prompt lookup are
tested in test_assisted_decoding.py.
"""
import inspect
import tempfile

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.nn import functional as F
from mindnlp.transformers.cache_utils import Cache, StaticCache
from mindnlp.transformers.generation import (
    GenerateBeamDecoderOnlyOutput,
    GenerateDecoderOnlyOutput,
)
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

    def _greedy_generate(self, model, inputs_dict, output_scores=False, output_logits=False,
                         output_attentions=False, output_hidden_states=False, return_dict_in_generate=False,
                         use_cache=True):
        return self._generate(model, inputs_dict, False, output_scores, output_logits, output_attentions,
                              output_hidden_states, return_dict_in_generate, use_cache, num_beams=1)

    def _sample_generate(self, model, inputs_dict, num_return_sequences, output_scores=False, output_logits=False,
                         output_attentions=False, output_hidden_states=False, return_dict_in_generate=False,
                         use_cache=True):
        core.manual_seed(0)
        return self._generate(model, inputs_dict, True, output_scores, output_logits, output_attentions,
                              output_hidden_states, return_dict_in_generate, use_cache, num_beams=1,
                              num_return_sequences=num_return_sequences)

    def _beam_search_generate(self, model, inputs_dict, beam_kwargs, output_scores=False, output_logits=False,
                              output_attentions=False, output_hidden_states=False, return_dict_in_generate=False,
                              use_cache=True):
        return self._generate(model, inputs_dict, False, output_scores, output_logits, output_attentions,
                              output_hidden_states, return_dict_in_generate, use_cache, **beam_kwargs)

    def _beam_sample_generate(self, model, inputs_dict, beam_kwargs, output_scores=False, output_logits=False,
                              output_attentions=False, output_hidden_states=False, return_dict_in_generate=False,
                              use_cache=True):
        core.manual_seed(0)
        return self._generate(model, inputs_dict, True, output_scores, output_logits, output_attentions,
                              output_hidden_states, return_dict_in_generate, use_cache, **beam_kwargs)

    def _all_outputs(self):
        """The flags of the dict-output checks: everything a generation step can return."""
        return {"output_scores": True, "output_logits": True, "output_hidden_states": True,
                "output_attentions": self.has_attentions, "return_dict_in_generate": True}

    # ------------------------------------------------------------------ greedy search

    @pytest.mark.generate
    def test_greedy_generate(self):
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            model = model_class(config).to(torch_device).eval()
            output = self._greedy_generate(model, inputs_dict)
            self.assertEqual(output.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])

    @pytest.mark.generate
    def test_greedy_generate_dict_outputs(self):
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if self.has_attentions:
                config._attn_implementation = "eager"  # attention weights need the eager path
            model = model_class(config).to(torch_device).eval()
            output = self._greedy_generate(model, inputs_dict, use_cache=False, **self._all_outputs())
            self.assertEqual(output.sequences.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])
            self.assertIsInstance(output, GenerateDecoderOnlyOutput)
            self._check_generate_outputs(output, model.config)

    @pytest.mark.generate
    def test_greedy_generate_dict_outputs_use_cache(self):
        """The per-step outputs with the cache on; and decoding through the cache picks the tokens
        (with the scores) of decoding without it."""
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if not hasattr(config, "use_cache"):
                self.skipTest(reason=f"{model_class.__name__} doesn't support caching")
            config.is_decoder = True
            if self.has_attentions:
                config._attn_implementation = "eager"
            model = model_class(config).to(torch_device).eval()
            output = self._greedy_generate(model, inputs_dict, use_cache=True, **self._all_outputs())
            self.assertEqual(output.sequences.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])
            self._check_generate_outputs(output, model.config, use_cache=True)

            without_cache = self._greedy_generate(model, inputs_dict, use_cache=False, output_scores=True,
                                                  return_dict_in_generate=True)
            self._check_same_generation(output, without_cache)

    # ------------------------------------------------------------------ sampling

    @pytest.mark.generate
    def test_sample_generate(self):
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            model = model_class(config).to(torch_device).eval()
            output = self._sample_generate(model, inputs_dict, num_return_sequences=1)
            self.assertEqual(output.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])

    @pytest.mark.generate
    def test_sample_generate_dict_output(self):
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if self.has_attentions:
                config._attn_implementation = "eager"
            model = model_class(config).to(torch_device).eval()
            output = self._sample_generate(model, inputs_dict, num_return_sequences=2, use_cache=False,
                                           **self._all_outputs())
            self.assertEqual(output.sequences.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])
            self.assertIsInstance(output, GenerateDecoderOnlyOutput)
            self._check_generate_outputs(output, model.config, num_return_sequences=2)

    # ------------------------------------------------------------------ beam search

    def _check_beam_generate(self, generate):
        """`generate` (beam search or beam sampling) gives prompt + max_new_tokens ids."""
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            model = model_class(config).to(torch_device).eval()
            output = generate(model, inputs_dict, self._get_beam_kwargs())
            self.assertEqual(output.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])

    def _check_beam_generate_dict_output(self, generate):
        """`generate` (beam search or beam sampling) without the cache returns a beam output
        whose per-step scores, logits, attentions and hidden states have HF's shapes."""
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if self.has_attentions:
                config._attn_implementation = "eager"
            model = model_class(config).to(torch_device).eval()
            beam_kwargs = self._get_beam_kwargs()
            output = generate(model, inputs_dict, beam_kwargs, use_cache=False, **self._all_outputs())
            self.assertEqual(output.sequences.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])
            self.assertIsInstance(output, GenerateBeamDecoderOnlyOutput)
            self._check_generate_outputs(output, model.config, num_return_sequences=beam_kwargs["num_return_sequences"],
                                         num_beams=beam_kwargs["num_beams"])

    @pytest.mark.generate
    def test_beam_search_generate(self):
        self._check_beam_generate(self._beam_search_generate)

    @pytest.mark.generate
    def test_beam_search_generate_dict_output(self):
        self._check_beam_generate_dict_output(self._beam_search_generate)

    @pytest.mark.generate
    def test_beam_search_generate_dict_outputs_use_cache(self):
        """As above with the cache on, which beam search reorders every step; with two returned
        sequences the result (tokens, step scores, final scores) equals beam search without the cache."""
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if not hasattr(config, "use_cache"):
                self.skipTest(reason=f"{model_class.__name__} doesn't support caching")
            config.is_decoder = True
            if self.has_attentions:
                config._attn_implementation = "eager"
            model = model_class(config).to(torch_device).eval()
            beam_kwargs = self._get_beam_kwargs()
            output = self._beam_search_generate(model, inputs_dict, beam_kwargs, use_cache=True,
                                                **self._all_outputs())
            self.assertEqual(output.sequences.shape[-1], self.max_new_tokens + inputs_dict["input_ids"].shape[-1])
            self._check_generate_outputs(output, model.config, use_cache=True,
                                         num_return_sequences=beam_kwargs["num_return_sequences"],
                                         num_beams=beam_kwargs["num_beams"])

            beam_kwargs = self._get_beam_kwargs(num_return_sequences=2)
            with_cache, without_cache = (
                self._beam_search_generate(model, inputs_dict, beam_kwargs, use_cache=use_cache, output_scores=True,
                                           return_dict_in_generate=True)
                for use_cache in (True, False))
            self._check_same_generation(with_cache, without_cache)
            same_rows = (with_cache.sequences.numpy() == without_cache.sequences.numpy()).all(axis=1)
            np.testing.assert_allclose(_numpy(with_cache.sequences_scores)[same_rows],
                                       _numpy(without_cache.sequences_scores)[same_rows], rtol=1e-5, atol=1e-5)

    @pytest.mark.generate
    def test_beam_sample_generate(self):
        self._check_beam_generate(self._beam_sample_generate)

    @pytest.mark.generate
    def test_beam_sample_generate_dict_output(self):
        self._check_beam_generate_dict_output(self._beam_sample_generate)

    # ------------------------------------------------------------------ lengths and prompts

    @pytest.mark.generate
    def test_generate_without_input_ids(self):
        """Without a prompt, generation starts from one BOS token."""
        config, _ = self.prepare_config_and_inputs_for_generate()
        if config.bos_token_id is None:
            self.skipTest(reason="bos_token_id is None")
        if config.bos_token_id == config.pad_token_id:
            config.pad_token_id = None  # otherwise the BOS prompt would be masked as padding
        for model_class in self.all_generative_model_classes:
            model = model_class(config).to(torch_device).eval()
            output = model.generate(do_sample=False, max_new_tokens=self.max_new_tokens, remove_invalid_values=True)
            self.assertEqual(tuple(output.shape), (1, 1 + self.max_new_tokens))
            self.assertEqual(int(output[0, 0]), config.bos_token_id)

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
            generated = output[:, prompt_length:].numpy()
            self.assertGreaterEqual(generated.shape[1], min_new_tokens)
            self.assertLessEqual(generated.shape[1], 5)
            self.assertFalse(np.isin(generated[:, :min_new_tokens], eos).any())
            for row in generated:
                hits = np.flatnonzero(np.isin(row, eos))
                if hits.size:  # a finished row is padded after its EOS
                    self.assertTrue((row[hits[0] + 1:] == pad).all())

    @pytest.mark.generate
    def test_left_padding_compatibility(self):
        """Left padding (masked, with positions that skip it) leaves the next-token logits unchanged."""
        decoder_only_classes = []
        for model_class in self.all_generative_model_classes:
            config, _ = self.prepare_config_and_inputs_for_generate()
            if not config.is_encoder_decoder:
                decoder_only_classes.append(model_class)
        if not decoder_only_classes:
            self.skipTest(reason="No decoder-only architecture available for this model.")

        def model_kwargs_for(input_ids, attention_mask, signature):
            kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if "position_ids" in signature:
                kwargs["position_ids"] = (core.cumsum(attention_mask, dim=-1) - 1).masked_fill(attention_mask == 0, 1)
            return kwargs

        for model_class in decoder_only_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            input_ids = inputs_dict["input_ids"]
            attention_mask = inputs_dict.get("attention_mask")
            if attention_mask is None:
                attention_mask = core.ones_like(input_ids)
            model = model_class(config).to(torch_device).eval()
            signature = inspect.signature(model.forward).parameters
            model.generation_config.use_cache = False
            with core.no_grad():
                unpadded = model(**model_kwargs_for(input_ids, attention_mask, signature)).logits[:, -1, :]
                pad_token_id = config.get_text_config().pad_token_id
                pad_token_id = 0 if pad_token_id is None else pad_token_id
                padding = core.full((input_ids.shape[0], 32), pad_token_id, dtype=input_ids.dtype)
                padded_ids = core.cat([padding, input_ids], dim=1)
                padded_mask = core.cat([core.zeros_like(padding), attention_mask], dim=1)
                padded = model(**model_kwargs_for(padded_ids, padded_mask, signature)).logits[:, -1, :]
            np.testing.assert_allclose(_numpy(padded), _numpy(unpadded), rtol=1e-5, atol=1e-5)

    # ------------------------------------------------------------------ the cache

    @pytest.mark.generate
    def test_past_key_values_format(self):
        """A forward with use_cache returns a Cache holding, per layer, (batch, kv heads, length,
        head dim) keys and values."""
        for model_class in self.all_generative_model_classes:
            config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
            if not hasattr(config, "use_cache"):
                self.skipTest(reason=f"{model_class.__name__} doesn't support caching")
            model = model_class(config).to(torch_device).eval()
            inputs.setdefault("use_cache", True)
            with core.no_grad():
                outputs = model(**inputs)
            if "past_key_values" not in outputs:
                self.skipTest(reason="This model doesn't return `past_key_values`")
            text_config = config.get_text_config(decoder=True)
            cache = outputs["past_key_values"]
            self.assertEqual(len(cache), text_config.num_hidden_layers)
            batch_size, seq_length = inputs["input_ids"].shape
            self._check_past_key_values_for_generate(batch_size, cache, seq_length, text_config)

    @pytest.mark.generate
    def test_generate_continue_from_past_key_values(self):
        """Generating 3 tokens, then 1 more from the returned cache, equals generating 4 at once:
        the same tokens, scores and cache."""
        for model_class in self.all_generative_model_classes:
            config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
            if not hasattr(config, "use_cache"):
                self.skipTest(reason=f"{model_class.__name__} doesn't support caching")
            inputs.pop("token_type_ids", None)
            model = model_class(config).to(torch_device).eval()
            with core.no_grad():
                if "past_key_values" not in model(**inputs, use_cache=True):
                    self.skipTest(reason="This model doesn't return `past_key_values`")
            # EOS -1 never comes, so every call runs to its length (stopping at EOS would break the split).
            generate_kwargs = {"pad_token_id": -1, "eos_token_id": -1, "forced_eos_token_id": None, "use_cache": True,
                               "do_sample": False, "return_dict_in_generate": True, "output_scores": True}

            outputs = model.generate(**inputs, **generate_kwargs, max_new_tokens=4)

            outputs_cached = model.generate(**inputs, **generate_kwargs, max_new_tokens=3)
            inputs["past_key_values"] = outputs_cached.past_key_values
            new_length = outputs_cached.sequences.shape[-1]
            inputs["input_ids"] = outputs_cached.sequences
            if inputs.get("attention_mask") is not None:
                mask = inputs["attention_mask"]
                inputs["attention_mask"] = F.pad(mask, (0, new_length - mask.shape[1]), mode="constant", value=1)
            first_scores = outputs_cached.scores
            outputs_cached = model.generate(**inputs, **generate_kwargs, max_new_tokens=1)
            outputs_cached.scores = first_scores + outputs_cached.scores

            self._check_same_generation(outputs, outputs_cached)
            self._check_caches_are_equal(outputs.past_key_values, outputs_cached.past_key_values)

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
    def test_generate_from_inputs_embeds(self):
        """Greedy and beam search from `inputs_embeds` (with or without the ids next to them)
        generate what they generate from the ids."""
        for name, num_beams in (("greedy", 1), ("beam search", 2)):
            for model_class in self.all_generative_model_classes:
                with self.subTest(name, model_class=model_class.__name__):
                    config, inputs_dict = self.prepare_config_and_inputs_for_generate()
                    if config.is_encoder_decoder:
                        continue
                    config.is_decoder = True
                    model = model_class(config).to(torch_device).eval()
                    if "inputs_embeds" not in inspect.signature(model.prepare_inputs_for_generation).parameters:
                        continue
                    input_ids = inputs_dict.pop("input_ids")
                    generation_kwargs = {"return_dict_in_generate": True, "output_scores": True,
                                         "num_beams": num_beams, "do_sample": False, "max_new_tokens": 5,
                                         "min_new_tokens": 5}
                    from_ids = model.generate(input_ids, **generation_kwargs, **inputs_dict)
                    self.assertEqual(tuple(from_ids.sequences.shape), (input_ids.shape[0], input_ids.shape[1] + 5))

                    inputs_embeds = model.get_input_embeddings()(input_ids)
                    from_embeds = model.generate(input_ids, inputs_embeds=inputs_embeds, **generation_kwargs,
                                                 **inputs_dict)
                    self._check_similar_generate_outputs(from_ids, from_embeds)

                    without_ids = model.generate(inputs_embeds=inputs_embeds, **generation_kwargs, **inputs_dict)
                    from_embeds.sequences = from_embeds.sequences[:, inputs_embeds.shape[1]:]
                    self._check_similar_generate_outputs(without_ids, from_embeds)

    @pytest.mark.generate
    def test_generate_from_random_inputs_embeds(self):
        """Other `inputs_embeds` (with the same ids next to them) change every step's scores: the
        model reads the embeddings, not the ids."""
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            if config.is_encoder_decoder:
                continue
            config.is_decoder = True
            model = model_class(config).to(torch_device).eval()
            if "inputs_embeds" not in inspect.signature(model.prepare_inputs_for_generation).parameters:
                continue
            if model_class.main_input_name != "input_ids":
                self.skipTest("This model's main input is not text")
            input_ids = inputs_dict.pop("input_ids")
            inputs_embeds = model.get_input_embeddings()(input_ids)
            generation_kwargs = {"return_dict_in_generate": True, "output_scores": True, "do_sample": False,
                                 "max_new_tokens": 5, "min_new_tokens": 5}
            from_embeds = model.generate(input_ids, inputs_embeds=inputs_embeds, **generation_kwargs, **inputs_dict)
            random_embeds = core.rand_like(inputs_embeds)
            from_random = model.generate(input_ids, inputs_embeds=random_embeds, **generation_kwargs, **inputs_dict)
            for step in range(len(from_random.scores)):
                self.assertFalse(np.allclose(_numpy(from_embeds.scores[step]), _numpy(from_random.scores[step])))

            without_ids = model.generate(inputs_embeds=inputs_embeds, **generation_kwargs, **inputs_dict)
            self.assertEqual(from_embeds.sequences[:, inputs_embeds.shape[1]:].tolist(), without_ids.sequences.tolist())

    @pytest.mark.generate
    def test_generate_continue_from_inputs_embeds(self):
        """From `inputs_embeds`: 3 tokens, then 1 more from the returned cache with the embeddings
        of everything so far, equal 4 tokens at once (tokens and cache)."""
        for model_class in self.all_generative_model_classes:
            config, inputs_dict = self.prepare_config_and_inputs_for_generate()
            inputs_dict.pop("token_type_ids", None)
            if config.is_encoder_decoder:
                self.skipTest(reason="This model is encoder-decoder")
            config.is_decoder = True
            model = model_class(config).to(torch_device).eval()
            if "inputs_embeds" not in inspect.signature(model.prepare_inputs_for_generation).parameters:
                self.skipTest(reason="This model does not support `inputs_embeds` in generation")
            with core.no_grad():
                if "past_key_values" not in model(**inputs_dict, use_cache=True):
                    self.skipTest(reason="This model doesn't return `past_key_values`")
            input_ids = inputs_dict.pop("input_ids")
            model.generation_config.pad_token_id = model.generation_config.eos_token_id = -1
            model.generation_config.forced_eos_token_id = None
            model.generation_config.use_cache = True
            generation_kwargs = {"return_dict_in_generate": True, "do_sample": False}

            embed = model.get_input_embeddings()
            inputs_embeds = embed(input_ids)
            outputs = model.generate(inputs_embeds=inputs_embeds, max_new_tokens=4, **generation_kwargs)

            initial = model.generate(inputs_embeds=inputs_embeds, max_new_tokens=3, **generation_kwargs)
            continued_embeds = core.cat([inputs_embeds, embed(initial.sequences)], dim=1)
            cached = model.generate(inputs_embeds=continued_embeds, max_new_tokens=1,
                                    past_key_values=initial.past_key_values, **generation_kwargs)

            combined = core.cat([initial.sequences, cached.sequences], dim=1)
            self.assertListEqual(outputs.sequences.tolist(), combined.tolist())
            self._check_caches_are_equal(outputs.past_key_values, cached.past_key_values)

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
    def test_prepare_inputs_for_generation_kwargs_forwards(self, **extra_kwargs):
        """Keyword arguments prepare_inputs_for_generation does not know go on to the model."""
        for model_class in self.all_generative_model_classes:
            config, _ = self.prepare_config_and_inputs_for_generate()
            model = model_class(config).to(torch_device).eval()
            input_args = {"input_ids": core.tensor([[1, 2, 3], [4, 5, 6]]),
                          "position_ids": core.tensor([[0, 1, 2], [0, 1, 2]])}
            arbitrary_kwargs = {"output_attentions": True, "output_hidden_states": True, "custom_arg": "test_value",
                                "numeric_arg": 42}
            model_inputs = model.prepare_inputs_for_generation(**input_args, **arbitrary_kwargs, **extra_kwargs)
            self.assertIn("input_ids", model_inputs)
            for key, value in arbitrary_kwargs.items():
                self.assertIn(key, model_inputs)
                self.assertEqual(model_inputs[key], value)

    @pytest.mark.generate
    def test_inherits_generation_mixin(self):
        """Each generative class lists GenerationMixin among its own bases (not only through
        PreTrainedModel), as HF v5 requires."""
        for model_class in self.all_generative_model_classes:
            self.assertIn("GenerationMixin", str(model_class.__bases__))

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
                    model = model_class.from_pretrained(tmpdirname, attn_implementation=implementation).eval()
                    self.assertEqual(model.config._attn_implementation, implementation)
                    results.append(model.generate(**inputs_dict, **generate_kwargs))
            self._check_similar_generate_outputs(*results, atol=1e-4, rtol=1e-4)

    # ------------------------------------------------------------------ output checks

    def _check_similar_generate_outputs(self, output_1, output_2, atol=1e-5, rtol=1e-5):
        """Two generate() results agree: the same sequences, or sequences that first differ at a
        step where both runs scored the candidates alike (a near tie decided by rounding)."""
        self.assertEqual(tuple(output_1.sequences.shape), tuple(output_2.sequences.shape))
        prompt_length = output_1.sequences.shape[1] - len(output_1.scores)
        matches = output_1.sequences.numpy() == output_2.sequences.numpy()
        for row in range(matches.shape[0]):
            if matches[row].all():
                continue
            step = int(np.argmin(matches[row])) - prompt_length
            self.assertGreaterEqual(step, 0, "the prompts differ")
            np.testing.assert_allclose(_numpy(output_1.scores[step][row]), _numpy(output_2.scores[step][row]),
                                       rtol=rtol, atol=atol)

    def _check_same_generation(self, output_1, output_2, atol=1e-5, rtol=1e-5):
        """Stricter than `_check_similar_generate_outputs`, for two runs of one computation: every
        step's scores agree up to the first step where the sequences part (if they do)."""
        self._check_similar_generate_outputs(output_1, output_2, atol=atol, rtol=rtol)
        prompt_length = output_1.sequences.shape[1] - len(output_1.scores)
        matches = (output_1.sequences.numpy() == output_2.sequences.numpy()).all(axis=0)
        agreeing_steps = len(output_1.scores) if matches.all() else int(np.argmin(matches)) - prompt_length
        for step in range(agreeing_steps):
            np.testing.assert_allclose(_numpy(output_1.scores[step]), _numpy(output_2.scores[step]), rtol=rtol,
                                       atol=atol)

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
        `seq_length` positions went through it."""
        self.assertIsInstance(past_key_values, Cache)
        num_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        kept = _kept_positions_per_layer(config)
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

    def _check_caches_are_equal(self, cache_1, cache_2):
        self.assertIsInstance(cache_1, Cache)
        self.assertIsInstance(cache_2, Cache)
        self.assertEqual(len(cache_1), len(cache_2))
        for layer_1, layer_2 in zip(cache_1.layers, cache_2.layers):
            np.testing.assert_allclose(_numpy(layer_1.keys), _numpy(layer_2.keys), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(_numpy(layer_1.values), _numpy(layer_2.values), rtol=1e-5, atol=1e-5)

