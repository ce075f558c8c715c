# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`nn.utils`: gradient clipping, parameter/vector conversion, sequence padding."""
from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
