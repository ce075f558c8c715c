"""GenerationConfig: fields and dicts equal to transformers', validation, loading and saving."""
import json
import os
import tempfile
import unittest

from mindnlp.transformers import CONFIG_MAPPING, GenerationConfig, GPT2Config
from mindnlp.transformers.generation import DEFAULT_GENERATION_PARAMS

from .test_configuration_common import FIXTURES, jsonable, load_fixture


class GenerationConfigTest(unittest.TestCase):
    fixture = load_fixture("generation.json")

    def test_dicts_match_transformers(self):
        for label, case in self.fixture["cases"].items():
            with self.subTest(label):
                config = GenerationConfig(**case["kwargs"])
                self.assertEqual(jsonable(config.to_dict()), case["to_dict"])
                self.assertEqual(jsonable(config.to_diff_dict()), case["to_diff_dict"])

    def test_from_model_config_matches_transformers(self):
        for model_type, expected in self.fixture["from_model_config"].items():
            with self.subTest(model_type):
                config = GenerationConfig.from_model_config(CONFIG_MAPPING[model_type]())
                self.assertEqual(jsonable(config.to_dict()), expected)

    def test_invalid_settings_raise_like_transformers(self):
        cases = {
            "max_new_tokens_zero": {"max_new_tokens": 0},
            "greedy_many_sequences": {"num_return_sequences": 2},
            "more_sequences_than_beams": {"num_beams": 2, "num_return_sequences": 3},
            "bad_early_stopping": {"early_stopping": "sometimes"},
            "bad_cache_implementation": {"cache_implementation": "magic"},
            "forced_and_suppressed": {"forced_eos_token_id": 2, "suppress_tokens": [2, 3]},
            "generate_argument": {"streamer": object()},
        }
        self.assertEqual(set(cases), set(self.fixture["invalid"]))
        for label, kwargs in cases.items():
            with self.subTest(label):
                self.assertTrue(self.fixture["invalid"][label]["raises"])
                with self.assertRaises(ValueError):
                    GenerationConfig(**kwargs)

    def test_ignored_settings_warn_or_raise_when_strict(self):
        with self.assertLogs("mindnlp.transformers.generation.configuration_utils", level="WARNING") as logs:
            config = GenerationConfig(temperature=0.5)
        self.assertIn("temperature", logs.output[0])
        with self.assertRaisesRegex(ValueError, "temperature"):
            config.validate(strict=True)
        GenerationConfig(do_sample=True, temperature=0.5).validate(strict=True)

    def test_loads_file_saved_by_transformers(self):
        config = GenerationConfig.from_pretrained(os.path.join(FIXTURES, "hf_saved", "generation"))
        self.assertEqual(jsonable(config.to_dict()), self.fixture["cases"]["sampling"]["to_dict"])

    def test_saves_file_transformers_loaded(self):
        self.assertTrue(self.fixture["hf_loaded_mindnlp_save_equal"])
        kwargs = self.fixture["cases"]["sampling"]["kwargs"]
        with tempfile.TemporaryDirectory() as tmp:
            path = GenerationConfig(**kwargs).save_pretrained(tmp)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(f.read(), self.fixture["mindnlp_saved_generation_config_json"])

    def test_save_refuses_an_edited_invalid_config(self):
        with tempfile.TemporaryDirectory() as tmp:
            GenerationConfig(do_sample=True, top_p=0.8).save_pretrained(tmp)
            loaded = GenerationConfig.from_pretrained(tmp)
            loaded.save_pretrained(tmp)  # unedited: saved as it came
            loaded.do_sample = False
            with self.assertRaisesRegex(ValueError, "top_p"):
                loaded.save_pretrained(tmp)

    def test_from_pretrained_kwargs_and_missing_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(OSError, "generation_config.json"):
                GenerationConfig.from_pretrained(tmp)
            GenerationConfig(max_new_tokens=5).save_pretrained(tmp)
            config, unused = GenerationConfig.from_pretrained(tmp, top_k=1, foo=False, return_unused_kwargs=True)
            # As in transformers, an unknown keyword becomes a custom setting rather than coming back.
            self.assertEqual((config.top_k, config.max_new_tokens, config.foo, unused), (1, 5, False, {}))

    def test_update_returns_unused(self):
        config = GenerationConfig(max_new_tokens=8)
        unused = config.update(max_new_tokens=3, do_sample=True, nonsense=1)
        self.assertEqual((config.max_new_tokens, config.do_sample, unused), (3, True, {"nonsense": 1}))
        config.update(defaults_only=True, **DEFAULT_GENERATION_PARAMS)
        self.assertEqual((config.max_new_tokens, config.max_length, config.top_k), (3, 20, 50))
        config.update(allow_custom_entries=True, nonsense=1)
        self.assertEqual(config.nonsense, 1)

    def test_eq_hash_repr(self):
        self.assertEqual(GenerationConfig(top_k=3), GenerationConfig(top_k=3))
        self.assertNotEqual(GenerationConfig(top_k=3), GenerationConfig(top_k=4))
        self.assertEqual(hash(GenerationConfig()), hash(GenerationConfig()))
        self.assertTrue(repr(GenerationConfig()).startswith("GenerationConfig {"))

    def test_model_config_tokens(self):
        config = GenerationConfig.from_model_config(GPT2Config(eos_token_id=7))
        self.assertEqual((config.bos_token_id, config.eos_token_id), (50256, 7))
        self.assertEqual(json.loads(config.to_json_string())["_from_model_config"], True)
