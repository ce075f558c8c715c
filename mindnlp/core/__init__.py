# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mindnlp.core: a PyTorch-compatible tensor and autograd engine (`from mindnlp import core as torch`)."""
import importlib as _importlib

from . import _dtype
from ._device import device, get_default_device, set_default_device
from ._dtype import (bfloat16, dtype, finfo, float16, float32, float64, get_default_dtype, iinfo, int8, int16,
                     int32, int64, promote_types, set_default_dtype, uint8)
from ._dtype import bool_ as bool  # noqa: A001  (torch.bool)
from ._tensor import Size, Tensor
from ._tensor_types import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor,  # noqa: F401
                            HalfTensor, IntTensor, LongTensor, ShortTensor)
from . import _tensor_methods  # noqa: F401  (binds the ops as Tensor methods)
from .autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                       set_grad_enabled)
from .ops import *  # noqa: F401,F403
from .ops import abs, all, any, max, min, pow, range_, round, sum  # noqa: A004
from .ops.linalg import _grouped_mm  # noqa: F401  (torch._grouped_mm)
from .random import (Generator, bernoulli, default_generator, get_rng_state, initial_seed, manual_seed,
                     multinomial, normal, rand, rand_like, randint, randint_like, randn, randn_like, randperm, seed,
                     set_rng_state)
from . import autograd, backends, cuda, distributed, func  # noqa: E402
from .backends.cpu_threads import get_num_threads, set_num_threads  # noqa: E402
from . import serialization  # noqa: E402
from .serialization import load, save  # noqa: E402
# `from .ops import *` bound the name `linalg` to ops.linalg (matmul & co), which would also stop
# `from . import linalg` from loading core/linalg.py; import the torch.linalg counterpart by full name.
linalg = _importlib.import_module(".linalg", __name__)
from . import amp, nn, optim, testing, utils  # noqa: E402
from .amp import autocast  # noqa: E402
from .nn.functional import log_softmax, softmax  # noqa: E402  (torch.softmax, torch.log_softmax)
from . import compiler, jit, onnx  # noqa: E402
from .jit import compile  # noqa: E402,A004

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
uint8 = uint8

result_type = _dtype.result_type


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


def typename(obj):
    return type(obj).__name__


def can_cast(from_, to):
    """Same-kind rule: no float → integer, no integer/float → bool."""
    return from_.category <= to.category or to.category == 2


def _accept_numpy_names():
    """torch.sum(x, axis=0) & co.: the public functions with dim/keepdim take axis/keepdims too
    (the ops module's own names stay unwrapped for internal calls)."""
    from ._numpy_names import accept_numpy_names

    namespace = globals()
    for name, value in list(namespace.items()):
        if callable(value) and not isinstance(value, type) and not name.startswith("_") \
                and getattr(value, "__module__", "").startswith(("mindnlp.core.ops", "mindnlp.core.nn.functional")):
            namespace[name] = accept_numpy_names(value)


_accept_numpy_names()

__version__ = "0.1.0"
