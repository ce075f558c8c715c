from .configuration_olmo2 import Olmo2Config
