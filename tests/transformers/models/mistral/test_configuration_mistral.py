"""MistralConfig: the common config checks and parity with transformers' fixtures."""
import unittest

from mindnlp.transformers import MistralConfig

from ...test_configuration_common import ConfigFixtureParity, ConfigTester


class MistralConfigTest(unittest.TestCase):
    def setUp(self):
        self.config_tester = ConfigTester(self, config_class=MistralConfig, **dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=37))

    def test_config(self):
        self.config_tester.run_common_tests()

    def test_parity_with_transformers(self):
        ConfigFixtureParity(self, "mistral").run_all()
