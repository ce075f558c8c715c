from .config import PromptTuningConfig, PromptTuningInit
from .model import BasePromptEncoder, PromptEmbedding

__all__ = ["BasePromptEncoder", "PromptEmbedding", "PromptTuningConfig", "PromptTuningInit"]
