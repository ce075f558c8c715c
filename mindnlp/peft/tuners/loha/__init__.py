from .config import LoHaConfig
from .layer import LoHaLayer
from .model import LoHaModel

__all__ = ["LoHaConfig", "LoHaLayer", "LoHaModel"]
