"""RoPE parameters: v4 -> v5 folding, validation, and inverse frequencies equal to transformers'."""
import unittest

import numpy as np

from mindnlp.transformers import GemmaConfig, LlamaConfig, MistralConfig
from mindnlp.transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS, rope_init

from .test_configuration_common import load_fixture


class RopeParametersTest(unittest.TestCase):
    def test_default_parameters(self):
        self.assertEqual(LlamaConfig().rope_parameters, {"rope_type": "default", "rope_theta": 10000.0})
        self.assertEqual(MistralConfig(rope_theta=1e6).rope_parameters["rope_theta"], 1e6)

    def test_v4_rope_scaling_is_folded_in(self):
        config = GemmaConfig(rope_scaling={"type": "linear", "factor": 2.0}, rope_theta=5e5)
        self.assertEqual(
            config.rope_parameters, {"type": "linear", "factor": 2.0, "rope_type": "linear", "rope_theta": 5e5}
        )
        self.assertFalse(hasattr(config, "rope_theta"))

    def test_original_length_defaults_to_max_positions(self):
        config = LlamaConfig(max_position_embeddings=4096, rope_parameters={"rope_type": "yarn", "factor": 2.0})
        self.assertEqual(config.rope_parameters["original_max_position_embeddings"], 4096)

    def test_callers_dict_is_not_modified(self):
        rope = {"rope_type": "linear", "factor": 2.0}
        LlamaConfig(rope_scaling=rope)
        self.assertEqual(rope, {"rope_type": "linear", "factor": 2.0})

    def test_setting_rope_scaling_after_init(self):
        config = LlamaConfig()
        config.rope_scaling = {"type": "dynamic", "factor": 3.0, "rope_theta": 10000.0}
        self.assertEqual(config.rope_parameters["rope_type"], "dynamic")

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "not supported.*llama3"):
            LlamaConfig(rope_parameters={"rope_type": "longrope-ish", "rope_theta": 1e4})
        with self.assertRaisesRegex(KeyError, "factor"):
            LlamaConfig(rope_scaling={"rope_type": "dynamic"})
        with self.assertRaisesRegex(ValueError, "even rotary dimension"):
            LlamaConfig(hidden_size=28, num_attention_heads=4)  # head_dim 7

    def test_inv_freq_matches_transformers(self):
        cases = load_fixture("rope.json")
        self.assertEqual({case["rope_parameters"]["rope_type"] for case in cases.values()}, set(ROPE_INIT_FUNCTIONS))
        for label, case in cases.items():
            with self.subTest(label):
                config = LlamaConfig(**case["config"])
                self.assertEqual(config.rope_parameters, case["rope_parameters"])
                inv_freq, attention_factor = rope_init(config, seq_len=case["seq_len"])
                self.assertEqual(inv_freq.dtype, np.float32)
                np.testing.assert_allclose(inv_freq, np.array(case["inv_freq"], dtype=np.float32), rtol=1e-6, atol=0)
                self.assertAlmostEqual(attention_factor, case["attention_factor"], places=12)

    def test_dynamic_below_max_length_equals_default(self):
        config = LlamaConfig(rope_scaling={"rope_type": "dynamic", "factor": 4.0})
        plain = LlamaConfig()
        np.testing.assert_array_equal(rope_init(config, seq_len=10)[0], rope_init(plain)[0])
        self.assertTrue(np.all(rope_init(config, seq_len=4 * 2048)[0] <= rope_init(plain)[0]))
