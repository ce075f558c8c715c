# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`core.nn`: modules, parameters, layers, functional ops, init and utilities (torch.nn)."""
from . import functional, init, utils
from .modules.activation import (CELU, ELU, GELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                                 LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus,
                                 Softsign, Tanh, Tanhshrink, Threshold)
from .modules.batchnorm import BatchNorm1d, BatchNorm2d
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .modules.dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d
from .modules.flatten import Flatten, Unflatten
from .modules.linear import Bilinear, Identity, Linear
from .modules.module import Module
from .modules.normalization import GroupNorm, LayerNorm, RMSNorm
from .modules.sparse import Embedding
from .parameter import Buffer, Parameter
from .modules.attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                                  TransformerEncoder, TransformerEncoderLayer)
from .modules.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .modules.distance import CosineSimilarity, PairwiseDistance
from .modules.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss,
                           KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss)
from .modules.padding import (CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d,
                              ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d)
from .modules.pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
                              MaxPool2d)
from .modules.vision import Fold, PixelShuffle, PixelUnshuffle, Unfold, Upsample
from .modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules.quantized import QuantizedLinear
from . import parallel  # noqa: E402  (after the layers it wraps)
