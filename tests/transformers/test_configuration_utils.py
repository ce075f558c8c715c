"""PretrainedConfig behaviour: aliases, labels, dtype spellings, overrides, errors, atomic saves."""
import json
import os
import tempfile
import unittest

from mindnlp import core
from mindnlp.transformers import (
    BertConfig,
    DistilBertConfig,
    GPT2Config,
    LlamaConfig,
    MistralConfig,
    MixtralConfig,
    MPNetConfig,
    Olmo2Config,
    PretrainedConfig,
    PreTrainedConfig,
    Qwen2Config,
)

from .test_configuration_common import FIXTURES, jsonable, load_fixture


class PretrainedConfigTest(unittest.TestCase):
    def test_v5_alias_is_same_class(self):
        self.assertIs(PreTrainedConfig, PretrainedConfig)

    def test_attribute_map_get_set_and_init(self):
        config = GPT2Config(hidden_size=64, num_hidden_layers=3)
        self.assertEqual((config.n_embd, config.n_layer), (64, 3))
        config.num_attention_heads = 8
        self.assertEqual(config.n_head, 8)
        self.assertEqual(config.max_position_embeddings, config.n_positions)
        self.assertNotIn("hidden_size", config.to_dict())
        self.assertEqual(DistilBertConfig(hidden_size=48).dim, 48)

    def test_alias_assignment_is_type_checked(self):
        # Stricter than transformers, which checks only the canonical name.
        with self.assertRaisesRegex(TypeError, "n_embd"):
            GPT2Config(hidden_size=1.5)

    def test_unknown_attribute_error(self):
        with self.assertRaisesRegex(AttributeError, "no_such_thing"):
            BertConfig().no_such_thing

    def test_labels(self):
        config = BertConfig()
        self.assertEqual(config.num_labels, 2)
        self.assertEqual(config.id2label, {0: "LABEL_0", 1: "LABEL_1"})
        config = BertConfig(id2label={"0": "neg", "1": "pos", "2": "neutral"}, label2id={"neg": 0, "pos": 1, "neutral": 2})
        self.assertEqual(config.num_labels, 3)
        self.assertEqual(list(config.id2label), [0, 1, 2])
        config.num_labels = 3  # unchanged count keeps the names
        self.assertEqual(config.id2label[2], "neutral")
        with self.assertRaisesRegex(ValueError, "num_labels > 1"):
            BertConfig(problem_type="single_label_classification", num_labels=1)
        with self.assertRaisesRegex(TypeError, "problem_type"):
            BertConfig(problem_type="ranking")

    def test_dtype_spellings(self):
        self.assertIs(BertConfig(torch_dtype="bfloat16").dtype, core.bfloat16)
        self.assertIs(BertConfig(dtype="float16", torch_dtype="bfloat16").dtype, core.float16)
        config = BertConfig()
        config.torch_dtype = "float16"
        self.assertEqual((config.dtype, config.torch_dtype), ("float16", "float16"))
        self.assertNotIn("torch_dtype", config.to_dict())

        class FakeCoreDtype:
            def __str__(self):
                return "mindnlp.core.bfloat16"

        config.dtype = FakeCoreDtype()
        self.assertEqual(config.to_dict()["dtype"], "bfloat16")

    def test_output_flags_and_attention_implementation(self):
        config = BertConfig(output_hidden_states=True, output_attentions=True, return_dict=False)
        self.assertTrue(config.output_attentions)
        self.assertFalse(config.use_return_dict)
        self.assertEqual(config._attn_implementation, "eager")
        self.assertEqual(BertConfig(attn_implementation="sdpa")._attn_implementation, "sdpa")
        with self.assertRaisesRegex(ValueError, "eager"):
            BertConfig(attn_implementation="sdpa", output_attentions=True)
        with self.assertRaisesRegex(ValueError, "attn_implementation"):
            BertConfig(attn_implementation="flash_attention_9")
        self.assertNotIn("_attn_implementation_internal", BertConfig(attn_implementation="sdpa").to_dict())

    def test_unknown_keys_kept_and_generation_keys_dropped(self):
        config = BertConfig(my_key=3, max_length=40, num_beams=4)
        self.assertEqual(config.my_key, 3)
        self.assertFalse(hasattr(config, "num_beams"))
        self.assertEqual(config.to_diff_dict()["my_key"], 3)

    def test_save_refuses_generation_parameters(self):
        config = BertConfig()
        config.temperature = 0.5
        with tempfile.TemporaryDirectory() as tmp, self.assertRaisesRegex(ValueError, "temperature"):
            config.save_pretrained(tmp)

    def test_from_pretrained_overrides_and_unused_kwargs(self):
        with tempfile.TemporaryDirectory() as tmp:
            BertConfig(hidden_size=32, num_attention_heads=4).save_pretrained(tmp)
            config, unused = BertConfig.from_pretrained(
                tmp, output_attentions=True, hidden_dropout_prob=0.3, foo=False, return_unused_kwargs=True
            )
            self.assertEqual(unused, {"foo": False})
            self.assertTrue(config.output_attentions)
            self.assertEqual(config.hidden_dropout_prob, 0.3)
            self.assertEqual(config.hidden_size, 32)
            config = BertConfig.from_pretrained(os.path.join(tmp, "config.json"), num_labels=4, dtype="auto")
            self.assertEqual(config.num_labels, 4)
            self.assertIsNone(config.dtype)

    def test_transformers_version_written(self):
        written = json.loads(BertConfig().to_json_string())
        self.assertEqual(written["transformers_version"], load_fixture("provenance.json")["transformers"])
        self.assertEqual(written["model_type"], "bert")

    def test_missing_and_bad_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(OSError, "config.json"):
                BertConfig.from_pretrained(tmp)
            with open(os.path.join(tmp, "config.json"), "w") as f:
                f.write('{"hidden_size": 32,')
            with self.assertRaisesRegex(OSError, "not valid JSON"):
                BertConfig.from_pretrained(tmp)
            with open(os.path.join(tmp, "config.json"), "w") as f:
                f.write("[1, 2]")
            with self.assertRaisesRegex(OSError, "JSON object"):
                BertConfig.from_pretrained(tmp)

    def test_save_is_atomic_and_into_a_folder(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = BertConfig().save_pretrained(os.path.join(tmp, "new", "folder"))
            self.assertTrue(os.path.isfile(path))
            self.assertEqual(os.listdir(os.path.dirname(path)), ["config.json"])
            with self.assertRaisesRegex(OSError, "directory"):
                BertConfig().save_pretrained(path)

    def test_special_floats_round_trip(self):
        config = BertConfig(my_threshold=float("inf"))
        text = config.to_json_string()
        self.assertIn('"__float__": "Infinity"', text)
        with tempfile.TemporaryDirectory() as tmp:
            config.save_pretrained(tmp)
            self.assertEqual(BertConfig.from_pretrained(tmp).my_threshold, float("inf"))

    def test_eq_repr_update(self):
        a, b = BertConfig(hidden_size=64), BertConfig(hidden_size=64)
        self.assertEqual(a, b)
        b.update({"hidden_size": 32, "new_field": 1})
        self.assertNotEqual(a, b)
        self.assertEqual(b.new_field, 1)
        self.assertTrue(repr(a).startswith("BertConfig {"))
        a.update_from_string("hidden_size=16,hidden_dropout_prob=0.5,is_decoder=true,hidden_act=relu")
        self.assertEqual((a.hidden_size, a.hidden_dropout_prob, a.is_decoder, a.hidden_act), (16, 0.5, True, "relu"))
        with self.assertRaisesRegex(ValueError, "not an attribute"):
            a.update_from_string("nope=1")

    def test_type_errors_name_the_field(self):
        with self.assertRaisesRegex(TypeError, "vocab_size"):
            BertConfig(vocab_size="big")
        config = BertConfig()
        with self.assertRaisesRegex(TypeError, "num_hidden_layers"):
            config.num_hidden_layers = 2.0

    def test_get_text_config(self):
        config = BertConfig()
        self.assertIs(config.get_text_config(), config)
        outer = PretrainedConfig(text_config=LlamaConfig(hidden_size=32, num_attention_heads=4))
        self.assertIs(outer.get_text_config(decoder=True), outer.text_config)
        self.assertEqual(outer.to_dict()["text_config"]["model_type"], "llama")

    def test_v4_llama31_config_json(self):
        folder = os.path.join(FIXTURES, "hf_saved", "v4_llama31")
        config = LlamaConfig.from_pretrained(folder)
        expected = load_fixture("v4_llama31.json")["to_dict"]
        ours = jsonable(config.to_dict())
        self.assertEqual(ours.pop("_name_or_path"), "")
        expected.pop("_name_or_path")
        self.assertEqual(ours, expected)
        self.assertFalse(hasattr(config, "max_length"))
        self.assertEqual(config.rope_parameters["rope_type"], "llama3")
        self.assertEqual(config.rope_scaling, config.rope_parameters)

    def test_qwen2_sliding_window_layout(self):
        config = Qwen2Config(num_hidden_layers=4, use_sliding_window=True, sliding_window=8, max_window_layers=2)
        self.assertEqual(config.layer_types, ["full_attention"] * 2 + ["sliding_attention"] * 2)
        self.assertIsNone(Qwen2Config().sliding_window)

    def test_family_config_inherits_and_drops_fields(self):
        # MPNetConfig is RoBERTa's config with other defaults, one field more and five it lacks.
        import inspect

        parameters = inspect.signature(MPNetConfig.__init__).parameters
        self.assertEqual(parameters["vocab_size"].default, 30527)
        self.assertEqual(parameters["pad_token_id"].default, 1)
        self.assertIn("relative_attention_num_buckets", parameters)
        self.assertNotIn("type_vocab_size", parameters)
        config = MPNetConfig()
        self.assertFalse(hasattr(config, "type_vocab_size"))
        self.assertNotIn("type_vocab_size", config.to_dict())
        with self.assertRaisesRegex(AttributeError, "type_vocab_size"):
            config.type_vocab_size
        # a config.json that carries the key keeps it, as it keeps any key it does not know
        self.assertEqual(MPNetConfig(type_vocab_size=1).to_dict()["type_vocab_size"], 1)

    def test_derived_defaults_follow_the_family(self):
        # Llama's None head_dim and num_key_value_heads are derived; Mistral inherits both,
        # Mixtral only the key/value heads (its head_dim stays None, as HF saves it), and OLMo 2,
        # which has no head_dim field, only the key/value heads.
        self.assertEqual((LlamaConfig(hidden_size=64, num_attention_heads=4).head_dim,
                          LlamaConfig(num_attention_heads=4).num_key_value_heads), (16, 4))
        self.assertEqual(MistralConfig(hidden_size=64, num_attention_heads=4).head_dim, 16)
        mixtral = MixtralConfig(num_attention_heads=4, num_key_value_heads=None)
        self.assertEqual((mixtral.head_dim, mixtral.num_key_value_heads), (None, 4))
        olmo2 = Olmo2Config(num_attention_heads=4)
        self.assertEqual(olmo2.num_key_value_heads, 4)
        self.assertNotIn("head_dim", olmo2.to_dict())
        # Llama's own shape checks are not Mistral's: an explicit head_dim need not divide hidden_size
        self.assertEqual(MistralConfig(hidden_size=30, num_attention_heads=4, head_dim=8).head_dim, 8)
        with self.assertRaisesRegex(ValueError, "multiple of num_attention_heads"):
            LlamaConfig(hidden_size=30, num_attention_heads=4)


class ValidationParityTest(unittest.TestCase):
    def test_accepts_and_rejects_what_transformers_does(self):
        from mindnlp.transformers import CONFIG_MAPPING

        for label, case in load_fixture("validation.json").items():
            with self.subTest(label):
                try:
                    CONFIG_MAPPING[case["model_type"]](**case["kwargs"])
                    raised = False
                except (TypeError, ValueError, KeyError):
                    raised = True
                self.assertEqual(raised, case["raises"])
