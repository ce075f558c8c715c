# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`core.nn`: modules, parameters, layers, functional ops, init and utilities (torch.nn)."""
from . import functional, init, utils
from .modules.activation import (CELU, ELU, GELU, GLU, PReLU, RReLU, SELU, Hardshrink, Hardsigmoid, Hardswish,
                                 Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6, Sigmoid, SiLU,
                                 Softmax, Softmax2d, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .modules.dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .modules.flatten import Flatten, Unflatten
from .modules.linear import Bilinear, Identity, Linear
from .modules.module import Module
from .modules.normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .modules.sparse import Embedding
from .parameter import Buffer, Parameter
from .modules.attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                                  TransformerEncoder, TransformerEncoderLayer)
from .modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .modules.distance import CosineSimilarity, PairwiseDistance
from .modules.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss,
                           HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss,
                           NLLLoss, PoissonNLLLoss, SmoothL1Loss, TripletMarginLoss)
from .modules.padding import (CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d,
                              ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d)
from .modules.pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                              AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d,
                              MaxPool2d, MaxPool3d)
from .modules.vision import ChannelShuffle, Fold, PixelShuffle, PixelUnshuffle, Unfold, Upsample
from .modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules.quantized import QuantizedLinear
from . import parallel  # noqa: E402  (after the layers it wraps)
