from .config import IA3Config
from .layer import IA3Layer
from .model import IA3Model

__all__ = ["IA3Config", "IA3Layer", "IA3Model"]
