"""GPT2Config: the common config checks and parity with transformers' fixtures."""
import unittest

from mindnlp.transformers import GPT2Config

from ...test_configuration_common import ConfigFixtureParity, ConfigTester


class GPT2ConfigTest(unittest.TestCase):
    def setUp(self):
        self.config_tester = ConfigTester(self, config_class=GPT2Config, **dict(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64))

    def test_config(self):
        self.config_tester.run_common_tests()

    def test_parity_with_transformers(self):
        ConfigFixtureParity(self, "gpt2").run_all()
