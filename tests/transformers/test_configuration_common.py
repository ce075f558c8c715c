"""`ConfigTester`: the checks every model config must pass, as in transformers' test suite, plus
the parity checks against the fixtures transformers produced (tests/fixtures/configs).

A model's test file builds `ConfigTester(self, config_class=XConfig, hidden_size=37, ...)` and
calls `run_common_tests()`; `ConfigFixtureParity(self, "model_type").run_all()` compares with
transformers' own output.
"""
import copy
import json
import os
import tempfile

from mindnlp import core

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "configs")

# Values for the fields every config has; none equals its default, so a dropped one is caught.
config_common_kwargs = {
    "return_dict": False,
    "output_hidden_states": True,
    "output_attentions": True,
    "dtype": "float16",
    "chunk_size_feed_forward": 5,
    "architectures": ["BertModel"],
    "id2label": {0: "label"},
    "label2id": {"label": "0"},
    "problem_type": "regression",
    "is_encoder_decoder": True,
}


def load_fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


def jsonable(obj):
    """`obj` as it reads back from JSON: int keys become strings, tuples lists."""
    return json.loads(json.dumps(obj))


class ConfigTester:
    def __init__(self, parent, config_class=None, has_text_modality=True, common_properties=None, **kwargs):
        self.parent = parent
        self.config_class = config_class
        self.has_text_modality = has_text_modality
        self.inputs_dict = kwargs
        self.common_properties = common_properties

    def create_and_test_config_common_properties(self):
        config = self.config_class(**self.inputs_dict)
        common_properties = list(self.common_properties or ["hidden_size", "num_attention_heads", "num_hidden_layers"])
        if self.has_text_modality:
            common_properties.append("vocab_size")
        for name in common_properties:
            self.parent.assertTrue(hasattr(config, name), msg=f"{name} does not exist")
        # Small positive values: 0 would break validation of sizes that divide each other.
        for value, name in enumerate(common_properties, start=1):
            setattr(config, name, value)
            self.parent.assertEqual(getattr(config, name), value, msg=f"setting {name}")
        for value, name in enumerate(common_properties, start=1):
            if name == "hidden_size" and "num_attention_heads" in common_properties:
                built = self.config_class(hidden_size=value * 4, num_attention_heads=4)
                self.parent.assertEqual(built.hidden_size, value * 4)
                continue
            built = self.config_class(**{name: value})
            self.parent.assertEqual(getattr(built, name), value, msg=f"{name} as an init argument")

    def create_and_test_config_to_json_string(self):
        config = self.config_class(**self.inputs_dict)
        obj = json.loads(config.to_json_string())
        for key, value in self.inputs_dict.items():
            self.parent.assertEqual(obj[config.attribute_map.get(key, key)], jsonable(value), msg=key)

    def create_and_test_config_to_json_file(self):
        config_first = self.config_class(**self.inputs_dict)
        with tempfile.TemporaryDirectory() as tmpdirname:
            json_file_path = os.path.join(tmpdirname, "config.json")
            config_first.to_json_file(json_file_path)
            config_second = self.config_class.from_json_file(json_file_path)
        self.parent.assertEqual(config_second.to_dict(), config_first.to_dict())

    def create_and_test_config_from_and_save_pretrained(self):
        config_first = self.config_class(**self.inputs_dict)
        with tempfile.TemporaryDirectory() as tmpdirname:
            config_first.save_pretrained(tmpdirname)
            self.parent.assertEqual(os.listdir(tmpdirname), ["config.json"])  # no temporary file left behind
            config_second = self.config_class.from_pretrained(tmpdirname)
        self.parent.assertEqual(config_second.to_dict(), config_first.to_dict())
        with self.parent.assertRaises(OSError):
            self.config_class.from_pretrained(f".{tmpdirname}")

    def create_and_test_config_from_and_save_pretrained_subfolder(self):
        config_first = self.config_class(**self.inputs_dict)
        with tempfile.TemporaryDirectory() as tmpdirname:
            config_first.save_pretrained(os.path.join(tmpdirname, "test"))
            config_second = self.config_class.from_pretrained(tmpdirname, subfolder="test")
        self.parent.assertEqual(config_second.to_dict(), config_first.to_dict())

    def create_and_test_config_with_num_labels(self):
        config = self.config_class(**self.inputs_dict, num_labels=5)
        self.parent.assertEqual(len(config.id2label), 5)
        self.parent.assertEqual(len(config.label2id), 5)
        config.num_labels = 3
        self.parent.assertEqual(len(config.id2label), 3)
        self.parent.assertEqual(len(config.label2id), 3)

    def check_config_can_be_init_without_params(self):
        self.parent.assertIsNotNone(self.config_class())

    def check_config_arguments_init(self):
        config = self.config_class(**copy.deepcopy(config_common_kwargs))
        wrong = [
            (key, getattr(config, key), value)
            for key, value in config_common_kwargs.items()
            if key != "dtype" and getattr(config, key) != value
        ]
        self.parent.assertEqual(wrong, [], msg="common keyword arguments not set as given")
        # a dtype name becomes the dtype object, as from_pretrained's dtype argument is
        self.parent.assertIs(config.dtype, core.float16)
        self.parent.assertIs(config.torch_dtype, core.float16)

    def create_and_test_unknown_keys_round_trip(self):
        config = self.config_class(**self.inputs_dict, my_new_key={"a": [1, 2]})
        with tempfile.TemporaryDirectory() as tmpdirname:
            config.save_pretrained(tmpdirname)
            loaded = self.config_class.from_pretrained(tmpdirname)
        self.parent.assertEqual(loaded.my_new_key, {"a": [1, 2]})
        self.parent.assertEqual(loaded, config.__class__.from_dict(json.loads(config.to_json_string())))

    def run_common_tests(self):
        self.create_and_test_config_common_properties()
        self.create_and_test_config_to_json_string()
        self.create_and_test_config_to_json_file()
        self.create_and_test_config_from_and_save_pretrained()
        self.create_and_test_config_from_and_save_pretrained_subfolder()
        self.create_and_test_config_with_num_labels()
        self.check_config_can_be_init_without_params()
        self.check_config_arguments_init()
        self.create_and_test_unknown_keys_round_trip()


class ConfigFixtureParity:
    """Compare a config class with what transformers recorded for the same model type."""

    def __init__(self, parent, model_type):
        from mindnlp import transformers

        self.parent = parent
        self.fixture = load_fixture(f"{model_type}.json")
        self.config_class = getattr(transformers, self.fixture["class_name"])
        self.saved_folder = os.path.join(FIXTURES, "hf_saved", model_type)

    def assert_same_dict(self, ours, theirs, what):
        ours = jsonable(ours)
        differing = {key: (ours.get(key), theirs.get(key)) for key in set(ours) | set(theirs) if ours.get(key) != theirs.get(key)}
        self.parent.assertEqual(differing, {}, msg=f"{what}: (mindnlp, transformers) values differ")

    def check_default_dicts(self):
        config = self.config_class()
        self.assert_same_dict(config.to_dict(), self.fixture["default_to_dict"], "default to_dict")
        self.assert_same_dict(config.to_diff_dict(), self.fixture["default_to_diff_dict"], "default to_diff_dict")

    def check_override_dicts(self):
        config = self.config_class(**copy.deepcopy(self.fixture["overrides"]))
        self.assert_same_dict(config.to_dict(), self.fixture["overrides_to_dict"], "overrides to_dict")
        self.assert_same_dict(config.to_diff_dict(), self.fixture["overrides_to_diff_dict"], "overrides to_diff_dict")

    def check_loads_file_saved_by_transformers(self):
        config = self.config_class.from_pretrained(self.saved_folder)
        expected = dict(self.fixture["overrides_to_dict"])
        self.assert_same_dict(config.to_dict(), expected, "config.json saved by transformers")

    def check_saves_file_transformers_loaded(self):
        # The fixture script loaded this exact file with transformers and found the same to_dict.
        self.parent.assertEqual(self.fixture["hf_loaded_mindnlp_save_differences"], [])
        self.parent.assertEqual(self.fixture["hf_loaded_mindnlp_save_class"], self.config_class.__name__)
        config = self.config_class(**copy.deepcopy(self.fixture["overrides"]))
        with tempfile.TemporaryDirectory() as tmpdirname:
            config.save_pretrained(tmpdirname)
            with open(os.path.join(tmpdirname, "config.json"), encoding="utf-8") as f:
                written = f.read()
        self.parent.assertEqual(written, self.fixture["mindnlp_saved_config_json"])

    def run_all(self):
        self.check_default_dicts()
        self.check_override_dicts()
        self.check_loads_file_saved_by_transformers()
        self.check_saves_file_transformers_loaded()
