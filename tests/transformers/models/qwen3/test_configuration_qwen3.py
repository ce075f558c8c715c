"""Qwen3Config: the common config checks, and the fields it adds to Qwen2's."""
import unittest

from mindnlp.transformers import Qwen3Config

from ...test_configuration_common import ConfigTester


class Qwen3ConfigTest(unittest.TestCase):
    def setUp(self):
        self.config_tester = ConfigTester(self, config_class=Qwen3Config, vocab_size=99, hidden_size=32,
                                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                          intermediate_size=37)

    def test_config(self):
        self.config_tester.run_common_tests()

    def test_defaults_are_qwen3_8b(self):
        config = Qwen3Config()
        self.assertEqual((config.model_type, config.head_dim, config.attention_bias), ("qwen3", 128, False))
        self.assertIsNone(config.sliding_window)
        self.assertEqual(set(config.layer_types), {"full_attention"})
