"""Multi-process data parallelism (torch.nn.parallel)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
