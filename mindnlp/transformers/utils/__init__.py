"""Utilities shared across mindnlp.transformers: hub file resolution, ModelOutput, logging."""
from . import logging
from .generic import ModelOutput
from .import_utils import is_torch_available
