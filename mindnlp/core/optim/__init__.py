# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`mindnlp.core.optim`: optimizers and learning-rate schedules (torch.optim's API)."""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "lr_scheduler"]
