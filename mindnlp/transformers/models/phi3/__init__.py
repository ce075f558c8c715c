from .configuration_phi3 import Phi3Config
