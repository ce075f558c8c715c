"""torch.compiler's names: `reset`, `explain`, and the graph-mode settings."""
from .jit import GraphBreak, config, explain, reset  # noqa: F401
