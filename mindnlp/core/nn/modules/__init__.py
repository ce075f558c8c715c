# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The layers of `core.nn`, one module file per family (as torch.nn.modules)."""
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
                         LogSoftmax, Mish, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Softsign, Tanh, Tanhshrink,
                         Threshold)
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .module import Module
from .normalization import GroupNorm, LayerNorm, RMSNorm
from .sparse import Embedding
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .distance import CosineSimilarity, PairwiseDistance
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss)
from .padding import (CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d,
                      ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d)
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .vision import Fold, PixelShuffle, PixelUnshuffle, Unfold, Upsample
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .quantized import QuantizedLinear
