from .configuration_gemma2 import Gemma2Config
