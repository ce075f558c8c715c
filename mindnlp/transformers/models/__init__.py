# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""One subpackage per architecture: configuration_<name>.py + modeling_<name>.py."""
