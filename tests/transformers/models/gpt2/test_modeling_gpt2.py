"""GPT-2 tests in HF's structure: GPT2ModelTester + the common and causal-LM checks, plus what is
GPT-2's own (Conv1D layout, attention scaling options, positions from the padding mask, the
double-heads model)."""
import math
import os
import tempfile
import unittest
from typing import ClassVar

import numpy as np

from mindnlp import core
from mindnlp.core.serialization import save_safetensors
from mindnlp.transformers import (
    GPT2Config,
    GPT2DoubleHeadsModel,
    GPT2ForQuestionAnswering,
    GPT2ForSequenceClassification,
    GPT2ForTokenClassification,
    GPT2LMHeadModel,
    GPT2Model,
)
from mindnlp.transformers.cache_utils import EncoderDecoderCache
from mindnlp.transformers.pytorch_utils import Conv1D
from mindnlp.transformers.testing_utils import torch_device

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor


class GPT2ModelTester(CausalLMModelTester):
    config_class = GPT2Config
    base_model_class = GPT2Model
    causal_lm_class = GPT2LMHeadModel
    sequence_classification_class = GPT2ForSequenceClassification
    token_classification_class = GPT2ForTokenClassification
    question_answering_class = GPT2ForQuestionAnswering

    def __init__(self, parent, **kwargs):
        kwargs.setdefault("hidden_act", "gelu_new")
        super().__init__(parent, **kwargs)

    def get_config(self):
        """GPT-2 names its sizes n_embd / n_layer / n_head / n_inner / n_positions; it has no
        grouped-query attention."""
        return GPT2Config(
            vocab_size=self.vocab_size, n_embd=self.hidden_size, n_layer=self.num_hidden_layers,
            n_head=self.num_attention_heads, n_inner=self.intermediate_size, activation_function=self.hidden_act,
            n_positions=self.max_position_embeddings, initializer_range=self.initializer_range,
            num_labels=self.num_labels, pad_token_id=self.pad_token_id, bos_token_id=self.bos_token_id,
            eos_token_id=self.eos_token_id, **self.config_overrides)


class GPT2ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = GPT2ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": GPT2Model,
        "question-answering": GPT2ForQuestionAnswering,
        "text-classification": GPT2ForSequenceClassification,
        "text-generation": GPT2LMHeadModel,
        "token-classification": GPT2ForTokenClassification,
        "zero-shot": GPT2ForSequenceClassification,
    }

    def test_config_head_dim_and_grouped_query_attention(self):
        """GPT-2 has neither head_dim nor key/value heads in its config: its fused projections are
        Conv1D layers of shape (in, out), with c_attn producing query, key and value at once."""
        config = self.model_tester.get_config()
        model = self.model_tester.model(GPT2LMHeadModel, config)
        block = model.transformer.h[0]
        hidden, inner = config.n_embd, config.n_inner
        shapes = {name: tuple(p.shape) for name, p in block.named_parameters()}
        self.assertEqual(shapes["attn.c_attn.weight"], (hidden, 3 * hidden))
        self.assertEqual(shapes["attn.c_attn.bias"], (3 * hidden,))
        self.assertEqual(shapes["attn.c_proj.weight"], (hidden, hidden))
        self.assertEqual(shapes["mlp.c_fc.weight"], (hidden, inner))
        self.assertEqual(shapes["mlp.c_proj.weight"], (inner, hidden))
        with core.no_grad():
            out = model(ids_tensor([2, 5], config.vocab_size), use_cache=True)
        keys = out.past_key_values[0][0]
        self.assertEqual(tuple(keys.shape), (2, config.n_head, 5, hidden // config.n_head))

    def test_conv1d_is_x_times_weight_plus_bias(self):
        layer = Conv1D(5, 3).to(torch_device)
        x = core.randn(2, 4, 3, device=torch_device)
        with core.no_grad():
            got = layer(x).cpu().numpy()
        want = x.cpu().numpy() @ layer.weight.detach().cpu().numpy() + layer.bias.detach().cpu().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        self.assertEqual(tuple(layer.weight.shape), (3, 5))

    def test_positions_from_padding_mask_without_position_ids(self):
        """With a padded mask and no position_ids, each row counts positions from its first real
        token, so a left-padded batch equals each row alone (and equals passing the ids)."""
        model = self._lm()
        lengths = [6, 2, 4]
        ids, mask = self._left_padded_batch(lengths)
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        with core.no_grad():
            implicit = model(ids, attention_mask=mask).logits.cpu().numpy()
            explicit = model(ids, attention_mask=mask, position_ids=positions).logits.cpu().numpy()
            for row, n in enumerate(lengths):
                alone = model(ids[row:row + 1, ids.shape[1] - n:]).logits.cpu().numpy()[0]
                np.testing.assert_allclose(implicit[row, -n:], alone, atol=1e-5)
        valid = mask.cpu().numpy().astype(bool)
        np.testing.assert_allclose(implicit[valid], explicit[valid], atol=1e-6)

    def test_attention_scaling_options(self):
        """scale_attn_weights=False drops 1/sqrt(head_dim); scale_attn_by_inverse_layer_idx adds
        1/(layer + 1); reorder_and_upcast_attn computes the same scores in float32 (eager)."""
        config = self.model_tester.get_config()
        head_dim = config.n_embd // config.n_head
        unscaled = GPT2Model(GPT2Config(**dict(config.to_dict(), scale_attn_weights=False)))
        self.assertEqual(unscaled.h[1].attn.scaling, 1.0)
        inverse = GPT2Model(GPT2Config(**dict(config.to_dict(), scale_attn_by_inverse_layer_idx=True)))
        self.assertAlmostEqual(inverse.h[1].attn.scaling, head_dim ** -0.5 / 2)
        plain = self._lm()
        upcast = self._lm(reorder_and_upcast_attn=True)
        upcast.load_state_dict(plain.state_dict())
        ids, mask = self._left_padded_batch([5, 3])
        plain.config._attn_implementation = upcast.config._attn_implementation = "eager"
        with core.no_grad():
            want = plain(ids, attention_mask=mask).logits.cpu().numpy()
            got = upcast(ids, attention_mask=mask).logits.cpu().numpy()
        valid = mask.cpu().numpy().astype(bool)
        np.testing.assert_allclose(got[valid], want[valid], atol=1e-5)

    def test_residual_projections_are_initialised_with_depth_scaled_std(self):
        config = self.model_tester.get_config()
        config.n_embd, config.n_inner, config.n_layer, config.initializer_range = 64, 256, 8, 0.2
        model = GPT2Model(config)
        expected = 0.2 / math.sqrt(2 * config.n_layer)
        c_proj = np.concatenate([np.ravel(layer.mlp.c_proj.weight.detach().cpu().numpy()) for layer in model.h])
        c_fc = np.concatenate([np.ravel(layer.mlp.c_fc.weight.detach().cpu().numpy()) for layer in model.h])
        self.assertAlmostEqual(float(c_proj.std()), expected, delta=0.05 * expected)
        self.assertAlmostEqual(float(c_fc.std()), 0.2, delta=0.01)
        self.assertTrue(np.all(model.h[0].attn.c_attn.bias.detach().cpu().numpy() == 0))

    def test_checkpoint_with_legacy_attention_bias_buffers_loads_silently(self):
        """HF checkpoints of the original GPT-2 carry `attn.bias` causal-mask buffers and no prefix."""
        model = self._lm()
        state = {k[len("transformer."):]: v for k, v in model.state_dict().items() if k.startswith("transformer.")}
        state["h.0.attn.bias"] = core.ones(1, 1, 8, 8)
        state["h.0.attn.masked_bias"] = core.tensor(-1e4)
        with tempfile.TemporaryDirectory() as folder:
            model.config.save_pretrained(folder)
            save_safetensors(state, os.path.join(folder, "model.safetensors"))
            loaded, info = GPT2LMHeadModel.from_pretrained(folder, output_loading_info=True)
        self.assertEqual(info["unexpected_keys"], set())
        self.assertEqual(info["missing_keys"], set())
        self.assertIs(loaded.lm_head.weight, loaded.transformer.wte.weight)

    def test_token_type_ids_are_embedded_with_the_token_embeddings(self):
        model = GPT2Model(self.model_tester.get_config()).to(torch_device).eval()
        ids = ids_tensor([2, 5], self.model_tester.vocab_size)
        types = ids_tensor([2, 5], 3)
        with core.no_grad():
            got = model(ids, token_type_ids=types).last_hidden_state.cpu().numpy()
            embeds = model.wte(ids) + model.wte(types)
            want = model(inputs_embeds=embeds).last_hidden_state.cpu().numpy()
        np.testing.assert_allclose(got, want, atol=1e-6)

    def test_double_heads_model(self):
        """LM logits per choice, one multiple-choice logit per choice read at mc_token_ids, and both
        losses trainable."""
        config = self.model_tester.get_config()
        model = GPT2DoubleHeadsModel(config).to(torch_device).train()
        self.assertEqual(config.num_labels, 1)
        batch, choices, length = 2, 3, 6
        ids = ids_tensor([batch, choices, length], config.vocab_size)
        mc_token_ids = core.tensor([[5, 2, 4], [1, 5, 3]], device=torch_device)
        out = model(ids, mc_token_ids=mc_token_ids, labels=ids, mc_labels=core.tensor([0, 2], device=torch_device))
        self.assertEqual(tuple(out.logits.shape), (batch, choices, length, config.vocab_size))
        self.assertEqual(tuple(out.mc_logits.shape), (batch, choices))
        (out.loss + out.mc_loss).backward()
        self.assertIsNotNone(model.multiple_choice_head.summary.weight.grad)
        self.assertIsNotNone(model.transformer.h[0].attn.c_attn.weight.grad)
        model.eval()
        with core.no_grad():
            hidden = model.transformer(ids).last_hidden_state
            mc = model(ids, mc_token_ids=mc_token_ids).mc_logits.cpu().numpy()
            picked = hidden[core.arange(batch, device=torch_device)[:, None],
                            core.arange(choices, device=torch_device)[None, :], mc_token_ids]
            want = model.multiple_choice_head.summary(picked).squeeze(-1).cpu().numpy()
        np.testing.assert_allclose(mc, want, atol=1e-6)

    def test_cross_attention_reads_encoder_states(self):
        """With add_cross_attention, encoder states change the output and a padded encoder
        position is ignored."""
        config = self.model_tester.get_config()
        config.add_cross_attention = True
        model = GPT2Model(config).to(torch_device).eval()
        self.assertEqual(tuple(model.h[0].crossattention.c_attn.weight.shape), (config.n_embd, 2 * config.n_embd))
        ids = ids_tensor([2, 5], config.vocab_size)
        encoder = core.randn(2, 4, config.n_embd, device=torch_device)
        changed = encoder.clone()
        changed[:, -1] = 10.0
        encoder_mask = core.tensor([[1, 1, 1, 0], [1, 1, 1, 0]], device=torch_device)
        with core.no_grad():
            a = model(ids, encoder_hidden_states=encoder, encoder_attention_mask=encoder_mask).last_hidden_state
            b = model(ids, encoder_hidden_states=changed, encoder_attention_mask=encoder_mask).last_hidden_state
            c = model(ids, encoder_hidden_states=changed).last_hidden_state
        np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), atol=1e-6)
        self.assertGreater(float(np.abs(c.cpu().numpy() - a.cpu().numpy()).max()), 1e-4)

    def test_cross_attention_keys_are_computed_once_and_cached(self):
        """With a cache, the encoder's keys/values go to an EncoderDecoderCache at the first step
        and are read back after: decoding step by step equals one full forward."""
        config = self.model_tester.get_config()
        config.add_cross_attention = True
        model = GPT2LMHeadModel(config).to(torch_device).eval()
        ids = ids_tensor([2, 7], config.vocab_size)
        encoder = core.randn(2, 4, config.n_embd, device=torch_device)
        projections = []
        handles = [block.crossattention.c_attn.register_forward_hook(lambda *args: projections.append(1))
                   for block in model.transformer.h]
        try:
            with core.no_grad():
                full = model(ids, encoder_hidden_states=encoder, use_cache=False).logits
                projections.clear()
                out = model(ids[:, :4], encoder_hidden_states=encoder, use_cache=True)
                cache = out.past_key_values
                steps = [model(ids[:, i:i + 1], encoder_hidden_states=encoder, past_key_values=cache).logits
                         for i in range(4, 7)]
        finally:
            for handle in handles:
                handle.remove()
        self.assertIsInstance(cache, EncoderDecoderCache)
        self.assertEqual(len(projections), config.n_layer)          # once per layer, not once per step
        self.assertEqual(cache.cross_attention_cache.get_seq_length(), 4)
        self.assertEqual(cache.self_attention_cache.get_seq_length(), 7)
        for i, step in zip(range(4, 7), steps):
            np.testing.assert_allclose(step[:, 0].cpu().numpy(), full[:, i].cpu().numpy(), atol=1e-5)


if __name__ == "__main__":
    unittest.main()
