"""DistilBertConfig: the common config checks and parity with transformers' fixtures."""
import unittest

from mindnlp.transformers import DistilBertConfig

from ...test_configuration_common import ConfigFixtureParity, ConfigTester


class DistilBertConfigTest(unittest.TestCase):
    def setUp(self):
        self.config_tester = ConfigTester(self, config_class=DistilBertConfig, **dict(vocab_size=99, dim=32, n_layers=2, n_heads=4, hidden_dim=37))

    def test_config(self):
        self.config_tester.run_common_tests()

    def test_parity_with_transformers(self):
        ConfigFixtureParity(self, "distilbert").run_all()
