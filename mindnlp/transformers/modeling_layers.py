"""Layer base classes shared by models."""
from ..core import nn
from ..core.utils.checkpoint import checkpoint


class GradientCheckpointingLayer(nn.Module):
    """A layer whose activations are recomputed in backward when gradient checkpointing is on."""

    gradient_checkpointing = False

    def __call__(self, *args, **kwargs):
        if self.gradient_checkpointing and self.training:
            return checkpoint(super().__call__, *args, **kwargs)
        return super().__call__(*args, **kwargs)
