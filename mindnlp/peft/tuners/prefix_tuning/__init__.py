from .config import PrefixTuningConfig
from .model import PrefixEncoder

__all__ = ["PrefixEncoder", "PrefixTuningConfig"]
