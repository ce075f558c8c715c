from .config import PromptEncoderConfig, PromptEncoderReparameterizationType
from .model import BidirectionalLSTM, PromptEncoder

__all__ = ["BidirectionalLSTM", "PromptEncoder", "PromptEncoderConfig", "PromptEncoderReparameterizationType"]
