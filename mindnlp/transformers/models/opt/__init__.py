from .configuration_opt import OPTConfig
