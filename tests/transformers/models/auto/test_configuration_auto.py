"""AutoConfig: model_type dispatch, lazy mapping, registration, errors."""
import json
import os
import tempfile
import unittest

from mindnlp.transformers import CONFIG_MAPPING, AutoConfig, BertConfig, PretrainedConfig, XLMRobertaConfig

from ...test_configuration_common import FIXTURES


def _directory_naming_no_model_type():
    """A temporary directory whose path contains no model type: the name lookup matches any part
    of the path, as transformers' does, and a random name such as /tmp/tmpq3opt_x1 holds "opt"."""
    while True:
        directory = tempfile.TemporaryDirectory()
        if not any(model_type in directory.name for model_type in CONFIG_MAPPING):
            return directory
        directory.cleanup()


class AutoConfigTest(unittest.TestCase):
    def test_every_fixture_folder_loads_as_its_class(self):
        for model_type in ("bert", "roberta", "xlm-roberta", "distilbert", "gpt2", "llama", "mistral", "qwen2", "gemma"):
            with self.subTest(model_type):
                folder = os.path.join(FIXTURES, "hf_saved", model_type)
                config = AutoConfig.from_pretrained(folder)
                self.assertIs(type(config), CONFIG_MAPPING[model_type])
                self.assertEqual(config.name_or_path, folder)

    def test_for_model(self):
        config = AutoConfig.for_model("xlm-roberta", vocab_size=10)
        self.assertIsInstance(config, XLMRobertaConfig)
        self.assertEqual(config.vocab_size, 10)
        with self.assertRaisesRegex(ValueError, "known model types: albert, bart"):
            AutoConfig.for_model("bort")

    def test_unknown_model_type_in_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "config.json"), "w") as f:
                json.dump({"model_type": "t5000"}, f)
            with self.assertRaisesRegex(ValueError, "t5000.*gpt2"):
                AutoConfig.from_pretrained(tmp)

    def test_missing_model_type_uses_the_name(self):
        with _directory_naming_no_model_type() as tmp:
            folder = os.path.join(tmp, "my-roberta-copy")
            os.makedirs(folder)
            with open(os.path.join(folder, "config.json"), "w") as f:
                json.dump({"vocab_size": 12}, f)
            config = AutoConfig.from_pretrained(folder)
            self.assertEqual((config.model_type, config.vocab_size), ("roberta", 12))
            os.rename(folder, os.path.join(tmp, "anonymous"))
            with self.assertRaisesRegex(ValueError, "no model_type"):
                AutoConfig.from_pretrained(os.path.join(tmp, "anonymous"))

    def test_overrides_and_unused(self):
        folder = os.path.join(FIXTURES, "hf_saved", "bert")
        config, unused = AutoConfig.from_pretrained(folder, hidden_dropout_prob=0.0, bar=1, return_unused_kwargs=True)
        self.assertEqual((config.hidden_dropout_prob, unused), (0.0, {"bar": 1}))

    def test_register(self):
        class TinyConfig(PretrainedConfig):
            model_type = "tiny-test"
            width: int = 3

        AutoConfig.register("tiny-test", TinyConfig)
        self.assertIn("tiny-test", CONFIG_MAPPING)
        self.assertEqual(AutoConfig.for_model("tiny-test", width=5).width, 5)
        with self.assertRaisesRegex(ValueError, "built-in"):
            AutoConfig.register("bert", BertConfig)
        with self.assertRaisesRegex(ValueError, "model_type"):
            AutoConfig.register("other-name", TinyConfig)
        with self.assertRaises(TypeError):
            AutoConfig.register("x", dict)

    def test_not_instantiable(self):
        with self.assertRaises(OSError):
            AutoConfig()

    def test_mapping_is_lazy(self):
        # A fresh mapping imports nothing until a model_type is looked up, then only that one.
        from mindnlp.transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES, _LazyConfigMapping

        mapping = _LazyConfigMapping(CONFIG_MAPPING_NAMES)
        self.assertEqual(mapping._loaded, {})
        self.assertEqual(len(mapping), len(CONFIG_MAPPING_NAMES))
        self.assertIs(mapping["gpt2"], CONFIG_MAPPING["gpt2"])
        self.assertEqual(list(mapping._loaded), ["gpt2"])
        with self.assertRaises(KeyError):
            mapping["bort"]
