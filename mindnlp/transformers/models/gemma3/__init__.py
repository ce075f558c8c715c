# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_gemma3 import Gemma3Config, Gemma3TextConfig
from .image_processing_gemma3 import Gemma3ImageProcessor
from .processing_gemma3 import Gemma3Processor
