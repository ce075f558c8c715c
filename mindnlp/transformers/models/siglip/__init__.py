# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_siglip import SiglipVisionConfig
from .image_processing_siglip import SiglipImageProcessor
