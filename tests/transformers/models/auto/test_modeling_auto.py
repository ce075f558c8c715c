"""The auto-model mappings and `get_values`, under the import paths HF test files use."""
import unittest

from mindnlp import transformers
from mindnlp.transformers.models import auto
from mindnlp.transformers.models.auto import MODEL_FOR_PRETRAINING_MAPPING, get_values, modeling_auto


class AutoModelMappingTest(unittest.TestCase):
    def test_package_exports_the_mappings(self):
        for name in ("MODEL_MAPPING", "MODEL_FOR_PRETRAINING_MAPPING", "MODEL_FOR_CAUSAL_LM_MAPPING",
                     "MODEL_FOR_MASKED_LM_MAPPING", "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING"):
            with self.subTest(name):
                self.assertIs(getattr(transformers, name), getattr(modeling_auto, name))
                self.assertIs(getattr(auto, name), getattr(modeling_auto, name))
        self.assertIs(auto.AutoModel, transformers.AutoModel)

    def test_get_values_lists_pretraining_heads(self):
        values = get_values(MODEL_FOR_PRETRAINING_MAPPING)
        self.assertIn(transformers.BertForPreTraining, values)
        self.assertNotIn(transformers.BertModel, values)

    def test_get_values_flattens_tuples(self):
        class _Mapping:
            def values(self):
                return [("a", "b"), "c"]

        self.assertEqual(get_values(_Mapping()), ["a", "b", "c"])
