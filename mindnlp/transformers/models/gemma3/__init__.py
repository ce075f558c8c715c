from .configuration_gemma3 import Gemma3Config, Gemma3TextConfig
