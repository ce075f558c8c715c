from .configuration_falcon import FalconConfig
