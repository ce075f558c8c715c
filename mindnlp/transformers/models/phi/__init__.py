from .configuration_phi import PhiConfig
