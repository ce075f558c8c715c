from .config import LoKrConfig
from .layer import LoKrLayer
from .model import LoKrModel

__all__ = ["LoKrConfig", "LoKrLayer", "LoKrModel"]
