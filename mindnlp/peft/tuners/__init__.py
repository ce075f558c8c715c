from .lora import LoraConfig, LoraModel
from .tuners_utils import BaseTuner, BaseTunerLayer, check_target_module_exists

__all__ = ["BaseTuner", "BaseTunerLayer", "check_target_module_exists", "LoraConfig", "LoraModel"]
