"""Parity of what routing adds to a decoder's outputs, against HF transformers' recorded values.

The MoE cases of tests/fixtures/decoders (made by make_decoder_fixtures.py) hold, for the
right-padded batch run with labels and `output_router_logits`, HF's router logits per MoE
layer, its load-balancing loss and the LM loss that includes it; and the aux loss of the
first prompt alone, where no attention mask leaves tokens out. A family whose HF model has
no load-balancing loss (DeepSeek-V3) has the router logits and the LM loss only, and tests
them with `RouterParityMixin`.
"""
import numpy as np

from mindnlp import core

from .decoder_parity import assert_close


class RouterParityMixin:
    """For MoE families; the subclass defines the `case` fixture, as for `DecoderParityMixin`."""

    def _routed(self, case, attn):
        ids, mask = case.padded("right")
        labels = ids.masked_fill(mask == 0, -100)
        with core.no_grad():
            return case.load(attn_implementation=attn)(ids, attention_mask=mask, labels=labels,
                                                       output_router_logits=True)

    def test_router_logits(self, case, attn):
        """At the tokens of the batch: a padding position whose window holds only padding has no
        keys to attend to, and its hidden state is defined differently by each kernel."""
        out = self._routed(case, attn)
        tokens = case.padded("right")[1].numpy().reshape(-1).astype(bool)
        layers = sorted(k for k in case.expected if k.startswith("moe/router_logits/"))
        assert len(out.router_logits) == len(layers), f"{case.name}: {len(out.router_logits)} MoE layers"
        for key, logits in zip(layers, out.router_logits):
            assert_close(logits.numpy()[tokens], case.expected[key][tokens], f"{case.name} {key}")

    def test_loss_with_router_logits(self, case, attn):
        out = self._routed(case, attn)
        assert_close(out.loss, case.expected["moe/loss"], f"{case.name} loss with router logits")


class MoeParityMixin(RouterParityMixin):
    """Router logits and HF's load-balancing loss."""

    def test_aux_loss_and_loss(self, case, attn):
        out = self._routed(case, attn)
        assert_close(out.aux_loss, case.expected["moe/aux_loss"], f"{case.name} aux loss")
        assert_close(out.loss, case.expected["moe/loss"], f"{case.name} loss with the aux loss")
        aux = np.asarray(case.expected["moe/aux_loss"])
        coef = case.load().config.router_aux_loss_coef
        assert abs(float(out.loss) - float(case.expected["loss"]) - coef * float(aux)) < 1e-4

    def test_aux_loss_without_attention_mask(self, case):
        with core.no_grad():
            out = case.load()(core.tensor([case.prompts[0]]), output_router_logits=True)
        assert_close(out.aux_loss, case.expected["moe/aux_loss_unpadded"], f"{case.name} unpadded aux loss")
        assert out.router_logits[0].shape == (len(case.prompts[0]), case.load().config.num_experts)
