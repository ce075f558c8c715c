from .configuration_qwen3 import Qwen3Config
