"""`mindnlp.core.utils`: data loading utilities (torch.utils)."""
from . import data

__all__ = ["data"]
