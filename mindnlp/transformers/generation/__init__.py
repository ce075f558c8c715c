"""Text generation: GenerationConfig, logits processors, stopping criteria, generate()."""
from .configuration_utils import DEFAULT_GENERATION_PARAMS, GenerationConfig
