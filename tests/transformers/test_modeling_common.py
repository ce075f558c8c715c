"""The model checks transformers' own tests/test_modeling_common.py does not already make against
mindnlp (those run in CI through the HF-tests gate): low-precision save/load, the save/load
with untied weights that HF's version reads through torch, loading into or from a base model,
missing keys, mismatched shapes being initialised, the forward signature, eager against sdpa,
initialisation ranges, resizing without mean resizing, tied weights.

A model test file defines `<Name>ModelTester` (tiny configs and inputs) and a
`<Name>ModelTest(ModelTesterMixin, unittest.TestCase)` listing `all_model_classes`; the mixin
runs each check on every class. Helper names (`ids_tensor`, `floats_tensor`,
`random_attention_mask`, `_config_zero_init`) are HF's.
"""
import copy
import inspect
import os
import random
import tempfile

import numpy as np

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers.configuration_utils import PretrainedConfig
from mindnlp.transformers.models.auto import modeling_auto
from mindnlp.transformers.testing_utils import torch_device

global_rng = random.Random()


def ids_tensor(shape, vocab_size, rng=None, name=None):
    """Random int64 token ids in [0, vocab_size) of the given shape."""
    rng = rng or global_rng
    total = int(np.prod(shape))
    values = [rng.randint(0, vocab_size - 1) for _ in range(total)]
    return core.tensor(values, dtype=core.long, device=torch_device).view(tuple(shape)).contiguous()


def random_attention_mask(shape, rng=None, name=None):
    """Random 0/1 mask whose last position is always attended (no fully masked row)."""
    mask = ids_tensor(shape, vocab_size=2, rng=rng)
    mask[:, -1] = 1
    return mask


def floats_tensor(shape, scale=1.0, rng=None, name=None):
    """Random float32 values in [0, scale) of the given shape."""
    rng = rng or global_rng
    total = int(np.prod(shape))
    values = [rng.random() * scale for _ in range(total)]
    return core.tensor(values, dtype=core.float32, device=torch_device).view(tuple(shape)).contiguous()


def _config_zero_init(config):
    """A copy of config whose init ranges/stds are ~0: weights then initialise to their means (0 or 1)."""
    configs_no_init = copy.deepcopy(config)
    for key in list(configs_no_init.__dict__):
        value = getattr(configs_no_init, key)
        if "_range" in key or "_std" in key or "initializer_factor" in key or "layer_scale" in key:
            setattr(configs_no_init, key, 1e-10)
        elif isinstance(value, PretrainedConfig):
            setattr(configs_no_init, key, _config_zero_init(value))
    return configs_no_init


def _names(mapping_names):
    return set(mapping_names.values())


MODEL_NAMES = _names(modeling_auto.MODEL_MAPPING_NAMES)
MULTIPLE_CHOICE_NAMES = _names(modeling_auto.MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES)
QUESTION_ANSWERING_NAMES = _names(modeling_auto.MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES)
SEQUENCE_LABEL_NAMES = (_names(modeling_auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES)
                        | _names(modeling_auto.MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING_NAMES))
TOKEN_LABEL_NAMES = (_names(modeling_auto.MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES)
                     | _names(modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
                     | _names(modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES)
                     | _names(modeling_auto.MODEL_FOR_PRETRAINING_MAPPING_NAMES))


def _as_numpy(tensor):
    array = tensor.detach().float().cpu().numpy().copy()
    array[np.isnan(array)] = 0
    return array


def _flat_tensors(obj):
    """Every tensor in a (nested) output, in order."""
    if isinstance(obj, core.Tensor):
        return [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _flat_tensors(item)]
    return []


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()
    fx_compatible = False
    test_torchscript = False
    test_pruning = False
    test_head_masking = False
    test_resize_embeddings = True
    test_resize_position_embeddings = False
    test_missing_keys = True
    test_mismatched_shapes = True
    is_encoder_decoder = False
    has_attentions = True
    test_model_parallel = False
    # Models whose parameter count a test config must keep below this (HF's limit).
    max_test_model_parameters = 1_000_000

    @property
    def all_generative_model_classes(self):
        """The classes of `all_model_classes` that can generate (HF's rule: GenerationMixin is
        among their bases). A test class may still list them itself."""
        return tuple(model_class for model_class in self.all_model_classes if model_class.can_generate())

    # ------------------------------------------------------------------ helpers

    def _prepare_for_class(self, inputs_dict, model_class, return_labels=False):
        """Inputs for model_class: multiple-choice heads get a choices axis; with return_labels,
        the labels each head's loss expects (zeros, or ones for multiple choice)."""
        inputs_dict = dict(inputs_dict)
        name = model_class.__name__
        batch_size = self.model_tester.batch_size
        if name in MULTIPLE_CHOICE_NAMES:
            num_choices = self.model_tester.num_choices
            inputs_dict = {
                k: v.unsqueeze(1).expand(-1, num_choices, -1).contiguous()
                if isinstance(v, core.Tensor) and v.ndim > 1 else v
                for k, v in inputs_dict.items()
            }
        if return_labels:
            if name in MULTIPLE_CHOICE_NAMES:
                inputs_dict["labels"] = core.ones(batch_size, dtype=core.long, device=torch_device)
            elif name in QUESTION_ANSWERING_NAMES:
                inputs_dict["start_positions"] = core.zeros(batch_size, dtype=core.long, device=torch_device)
                inputs_dict["end_positions"] = core.zeros(batch_size, dtype=core.long, device=torch_device)
            elif name in SEQUENCE_LABEL_NAMES:
                inputs_dict["labels"] = core.zeros(batch_size, dtype=core.long, device=torch_device)
            elif name in TOKEN_LABEL_NAMES:
                inputs_dict["labels"] = core.zeros((batch_size, self.model_tester.seq_length), dtype=core.long,
                                                   device=torch_device)
        return inputs_dict

    def _model(self, model_class, config, train=False):
        model = model_class(config).to(torch_device)
        return model.train() if train else model.eval()

    def _first_output(self, model, inputs):
        with core.no_grad():
            return _as_numpy(model(**inputs)[0])

    def _assert_close(self, a, b, atol=1e-5, msg=None):
        self.assertLessEqual(float(np.max(np.abs(a - b))) if a.size else 0.0, atol, msg)

    def _tied_pairs(self, model):
        return model._tied_mapping().items()

    # ------------------------------------------------------------------ saving and loading

    def test_save_load_low_precision(self):
        """A float16 model saves float16 tensors; dtype="auto" restores float16, dtype=float32 upcasts."""
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = self._model(model_class, config).to(core.float16)
            with tempfile.TemporaryDirectory() as folder:
                model.save_pretrained(folder)
                saved = load_safetensors(os.path.join(folder, "model.safetensors"))
                for key, value in saved.items():
                    if value.is_floating_point():
                        self.assertEqual(value.dtype, core.float16, key)
                half = model_class.from_pretrained(folder, dtype="auto", device_map=torch_device)
                self.assertEqual(half.dtype, core.float16)
                full = model_class.from_pretrained(folder, dtype=core.float32)
                self.assertEqual(full.dtype, core.float32)
                for (name, a), b in zip(model.state_dict().items(), full.state_dict().values()):
                    if a.is_floating_point():
                        np.testing.assert_array_equal(a.float().cpu().numpy(), b.cpu().numpy(), err_msg=name)
                inputs = self._prepare_for_class(inputs_dict, model_class)
                self._assert_close(self._first_output(model, inputs), self._first_output(half, inputs), atol=0)

    def test_load_save_without_tied_weights(self):
        """With tie_word_embeddings=False, both copies are saved and loaded as separate parameters."""
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        config = copy.deepcopy(config)
        config.tie_word_embeddings = False
        for model_class in self.all_model_classes:
            model = model_class(config)
            with tempfile.TemporaryDirectory() as folder:
                model.save_pretrained(folder)
                reloaded, info = model_class.from_pretrained(folder, output_loading_info=True)
            self.assertEqual(info["missing_keys"], set(), model_class.__name__)
            reloaded_state = reloaded.state_dict()
            # The model's own names: the file may hold another layout (MoE experts one per expert).
            for key, value in model.state_dict().items():
                np.testing.assert_array_equal(value.numpy(), reloaded_state[key].numpy(), err_msg=key)
            embeddings, output = reloaded.get_input_embeddings(), reloaded.get_output_embeddings()
            if output is not None:
                self.assertIsNot(embeddings.weight, output.weight)

    def test_save_load_fast_init_from_base(self):
        """Base model weights saved, head model loads them (prefix added); head weights are initialised."""
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        base_class = self._base_class()
        for model_class in self.all_model_classes:
            if model_class is base_class:
                continue
            base = base_class(config)
            with tempfile.TemporaryDirectory() as folder:
                base.save_pretrained(folder)
                model, info = model_class.from_pretrained(folder, output_loading_info=True)
            prefix = model_class.base_model_prefix
            base_state = base.state_dict()
            model_state = model.state_dict()
            # only base weights the head model has no use for (e.g. a pooler it drops) are unexpected
            unused = {k for k in base_state if f"{prefix}.{k}" not in model_state}
            self.assertEqual(set(info["unexpected_keys"]), unused, model_class.__name__)
            for key, value in base_state.items():
                if f"{prefix}.{key}" in model_state:
                    np.testing.assert_array_equal(model_state[f"{prefix}.{key}"].numpy(), value.numpy(),
                                                  err_msg=f"{model_class.__name__}: {key}")
            head_keys = {k for k in model_state if not k.startswith(prefix + ".")}
            tied_targets = {t for t, _ in self._tied_pairs(model)}
            for key in info["missing_keys"]:
                self.assertIn(key, head_keys | {f"{prefix}.{k}" for k in base_state}, key)
            self.assertEqual(set(info["missing_keys"]), head_keys - tied_targets - self._buffer_names(model),
                             model_class.__name__)

    def test_save_load_fast_init_to_base(self):
        """Head model weights saved, base model loads the encoder part (prefix stripped)."""
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        base_class = self._base_class()
        for model_class in self.all_model_classes:
            if model_class is base_class:
                continue
            model = model_class(config)
            with tempfile.TemporaryDirectory() as folder:
                model.save_pretrained(folder)
                base, info = base_class.from_pretrained(folder, output_loading_info=True)
            prefix = model_class.base_model_prefix
            model_state = model.state_dict()
            base_state = base.state_dict()
            loaded = [k for k in base_state if f"{prefix}.{k}" in model_state]
            self.assertTrue(loaded)
            for key in loaded:
                np.testing.assert_array_equal(base_state[key].numpy(), model_state[f"{prefix}.{key}"].numpy(),
                                              err_msg=f"{model_class.__name__}: {key}")
            self.assertEqual(set(info["missing_keys"]), set(base_state) - set(loaded) - self._buffer_names(base))

    def _base_class(self):
        for model_class in self.all_model_classes:
            if model_class.__name__ in MODEL_NAMES:
                return model_class
        self.skipTest("no base model class among all_model_classes")

    @staticmethod
    def _buffer_names(model):
        return {name for name, _ in model.named_buffers()}

    def test_correct_missing_keys(self):
        """A head model loaded from its base model's checkpoint reports exactly the head as missing."""
        if not self.test_missing_keys:
            self.skipTest("test_missing_keys is off")
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(config)
            base_model_prefix = model.base_model_prefix
            if not hasattr(model, base_model_prefix):
                continue
            with tempfile.TemporaryDirectory() as folder:
                getattr(model, base_model_prefix).save_pretrained(folder)
                _, info = model_class.from_pretrained(folder, output_loading_info=True)
            head_params = {name for name, _ in model.named_parameters(remove_duplicate=False)
                           if not name.startswith(base_model_prefix)}
            tied_targets = {t for t, _ in self._tied_pairs(model)}
            self.assertGreater(len(info["missing_keys"]) + len(tied_targets & head_params), 0)
            self.assertEqual(set(info["missing_keys"]), head_params - tied_targets)

    def test_mismatched_shapes_have_properly_initialized_weights(self):
        """Weights re-created because of a shape mismatch get the model's init (mean 0/1), not leftovers."""
        if not self.test_mismatched_shapes:
            self.skipTest("test_mismatched_shapes is off")
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        configs_no_init = _config_zero_init(config)
        for model_class in self.all_model_classes:
            if model_class.__name__ not in _names(modeling_auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES):
                continue
            model = model_class(configs_no_init)
            with tempfile.TemporaryDirectory() as folder:
                model.save_pretrained(folder)
                new_model, info = model_class.from_pretrained(folder, num_labels=42, ignore_mismatched_sizes=True,
                                                              output_loading_info=True)
            mismatched = {key for key, _, _ in info["mismatched_keys"]}
            self.assertTrue(mismatched)
            for name, param in new_model.named_parameters():
                if name in mismatched:
                    mean = round(float(param.detach().float().mean()) * 1e9) / 1e9
                    self.assertIn(mean, (0.0, 1.0), f"{name} seems not properly initialized")

    # ------------------------------------------------------------------ outputs

    def test_forward_signature(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(config)
            arg_names = list(inspect.signature(model.forward).parameters)
            if self.is_encoder_decoder:
                expected = ["input_ids", "attention_mask", "decoder_input_ids", "decoder_attention_mask"]
            else:
                expected = [model.main_input_name]
            self.assertListEqual(arg_names[: len(expected)], expected)

    def test_eager_matches_sdpa(self):
        """The fused sdpa kernel gives the eager path's outputs (eval, float32)."""
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            if not model_class._supports_sdpa:
                continue
            inputs = self._prepare_for_class(inputs_dict, model_class)
            eager_config, sdpa_config = copy.deepcopy(config), copy.deepcopy(config)
            eager_config._attn_implementation, sdpa_config._attn_implementation = "eager", "sdpa"
            eager = self._model(model_class, eager_config)
            sdpa = model_class(sdpa_config).to(torch_device).eval()
            sdpa.load_state_dict(eager.state_dict())
            with core.no_grad():
                want = _flat_tensors(eager(**inputs, output_hidden_states=True))
                got = _flat_tensors(sdpa(**inputs, output_hidden_states=True))
            self.assertEqual(len(want), len(got))
            for a, b in zip(want, got):
                self._assert_close(_as_numpy(a), _as_numpy(b), atol=1e-5, msg=model_class.__name__)

    # ------------------------------------------------------------------ training and initialisation

    def test_initialization(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        configs_no_init = _config_zero_init(config)
        for model_class in self.all_model_classes:
            model = model_class(configs_no_init)
            for name, param in model.named_parameters():
                if param.requires_grad:
                    mean = round(float(param.detach().float().mean()) * 1e9) / 1e9
                    self.assertIn(mean, (0.0, 1.0),
                                  f"Parameter {name} of model {model_class.__name__} seems not properly initialized")

    # ------------------------------------------------------------------ embeddings

    def test_resize_tokens_embeddings_without_mean_resizing(self):
        if not self.test_resize_embeddings:
            self.skipTest("test_resize_embeddings is off")
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        configs_no_init = _config_zero_init(config)
        for model_class in self.all_model_classes:
            model = model_class(copy.deepcopy(configs_no_init))
            vocab_size = configs_no_init.vocab_size
            weight = model.resize_token_embeddings(vocab_size + 10, mean_resizing=False).weight.detach().numpy()
            # with a ~0 init range, added rows get the initialisation (zeros), not the old mean
            np.testing.assert_allclose(weight[vocab_size:], 0.0, atol=1e-8)

    def test_tie_model_weights(self):
        """Tied output embeddings share the input embedding's Parameter, also after resizing; the
        state dict still lists both names and parameters() yields the shared one once."""
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(copy.deepcopy(config))
            output = model.get_output_embeddings()
            if output is None or not config.tie_word_embeddings:
                continue
            self.assertIs(output.weight, model.get_input_embeddings().weight)
            params = list(model.parameters())
            self.assertEqual(len(params), len({id(p) for p in params}))
            state = model.state_dict()
            for target, source in self._tied_pairs(model):
                self.assertIn(target, state)
                self.assertIn(source, state)
            model.resize_token_embeddings(config.vocab_size + 10)
            self.assertIs(model.get_output_embeddings().weight, model.get_input_embeddings().weight)
            self.assertEqual(model.get_output_embeddings().weight.shape[0], config.vocab_size + 10)
            with core.no_grad():
                model.get_input_embeddings().weight[0, 0] = 7.0
            self.assertEqual(float(model.get_output_embeddings().weight[0, 0]), 7.0)
