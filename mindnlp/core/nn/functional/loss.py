# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Loss functions with torch's semantics, reductions and error messages.

cross_entropy with class-index targets and nll_loss are fused graph nodes: the forward works
on the logits array directly (log-sum-exp and the picked logits, never a full log_softmax
copy), and a first-order backward forms softmax - target in one array. When the backward is
recorded (create_graph=True) it is written with core ops instead, so that second derivatives
are exact. The other losses are short compositions of core ops.
"""
import math
import warnings

import numpy as np

from ... import ops
from ..._dtype import int64, uint8
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops._helpers import array_op, widen, wrap, xp_of
from .activation import logsigmoid
from .distance import _clamp_min_passing_grad, pairwise_distance
from .softmax import log_softmax, softmax
from ...amp.autocast_mode import autocast_op

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy",
    "gaussian_nll_loss", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss",
    "multilabel_soft_margin_loss", "nll_loss", "poisson_nll_loss", "smooth_l1_loss", "triplet_margin_loss",
]

_REDUCTIONS = ("none", "mean", "sum")

# torch's names for dtypes in its loss error messages.
_TORCH_TYPE_NAMES = {
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int8": "Char",
    "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool",
}


def _type_name(dtype):
    return _TORCH_TYPE_NAMES.get(str(dtype).rsplit(".", 1)[-1], str(dtype))


def _legacy_reduction(size_average, reduce, reduction):
    """torch's deprecated size_average/reduce flags, mapped to a reduction string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{'mean' if size_average and reduce else 'sum' if reduce else 'none'}' instead.", stacklevel=3)
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    _check_reduction(reduction)
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    return loss


# --- class-index losses: nll_loss and cross_entropy ---------------------------------------


def _check_class_targets(input, target, weight, name):
    """Validate (N, C, d1...) input against (N, d1...) class-index target, torch's messages."""
    if target.dtype is not int64 and target.dtype is not uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_type_name(target.dtype)}")
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.ndim == 2:
        if target.ndim != 1:
            if target.ndim == 2 and target.shape[0] != input.shape[0]:
                raise ValueError(
                    f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]}).")
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.shape[0] != input.shape[0]:
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]}).")
    else:
        expected = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != expected:
            if target.ndim >= 1 and target.shape[0] != input.shape[0]:
                raise ValueError(
                    f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]}).")
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    n_classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes but got weight "
            f"tensor of shape: {list(weight.shape)}"
        )


class _ClassTargets:
    """The per-sample constants of a class-index loss, computed once in forward.

    index: a tuple indexing the (N, C, d1...) array at each sample's target class;
    sample_weight: weight[target] (0 where the target is ignore_index);
    denom: the sum of sample_weight, which divides a 'mean' reduction.
    """

    def __init__(self, xp, target, weight, ignore_index, n_classes, dtype):
        t = target._data.astype(np.int64, copy=False)
        self.valid = t != ignore_index
        bad = self.valid & ((t < 0) | (t >= n_classes))
        if target.device.type != "meta" and bad.any():  # meta targets have no values to check
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
        safe = xp.where(self.valid, t, 0)
        grids = [xp.arange(n).reshape((-1,) + (1,) * (t.ndim - 1 - d)) for d, n in enumerate(t.shape)]
        self.index = (grids[0], safe) + tuple(grids[1:])
        if weight is None:
            self.weight = None
            self.sample_weight = self.valid.astype(dtype)
        else:
            self.weight = widen(weight._data).astype(dtype, copy=False)
            self.sample_weight = self.weight[safe] * self.valid
        self.denom = self.sample_weight.sum()

    def _with_arrays(self, valid, sample_weight, weight, index):
        """The same targets holding other arrays of the same meaning (a replayed backward's)."""
        new = object.__new__(_ClassTargets)
        new.valid, new.sample_weight, new.weight, new.index, new.denom = valid, sample_weight, weight, index, self.denom
        return new

    def apply(self, compute, *operands):
        """`compute(targets, *arrays)` as a tensor, with every array it reads an operand of one
        raw op (ops._helpers.array_op): graph capture then records a node a replayed backward
        feeds with its own step's targets."""
        n, weighted = len(self.index), self.weight is not None

        def kernel(valid, sample_weight, *rest):
            index, rest = tuple(rest[:n]), rest[n:]
            weight, rest = (rest[0], rest[1:]) if weighted else (None, rest)
            return compute(self._with_arrays(valid, sample_weight, weight, index), *rest)
        head = [self.valid, self.sample_weight, *self.index] + ([self.weight] if weighted else [])
        return array_op(kernel, *head, *operands)

    def class_weight_view(self, ndim):
        """The class weights shaped (1, C, 1, ...) to broadcast against the input."""
        return self.weight.reshape((1, -1) + (1,) * (ndim - 2))

    def dense(self, xp, shape, dtype, target_scale, smooth_scale):
        """target_scale * w[t] at each target class + smooth_scale * w_c * valid everywhere."""
        q = xp.zeros(shape, dtype=dtype)
        if smooth_scale:
            valid = self.valid.reshape(self.valid.shape[:1] + (1,) + self.valid.shape[1:])
            q += smooth_scale * (self.class_weight_view(len(shape)) if self.weight is not None else 1.0) * valid
        q[self.index] += target_scale * self.sample_weight
        return q


def _grad_scale(grad, reduction, denom, ndim):
    """The upstream gradient as a tensor broadcastable to the (N, C, d1...) input."""
    if reduction == "none":
        return grad.unsqueeze(1)
    if reduction == "mean":
        return ops.div(grad, float(denom))
    return grad


def _grad_scale_array(grad, reduction, denom):
    g = widen(grad)
    if reduction == "none":
        return g.reshape(g.shape[:1] + (1,) + g.shape[1:])
    if reduction == "mean":
        return g / denom
    return g


def _reduce_array(xp, per_sample, reduction, denom):
    if reduction == "none":
        return per_sample
    total = per_sample.sum()
    if reduction == "sum":
        return total
    with np.errstate(invalid="ignore", divide="ignore"):
        return xp.asarray(total / denom)


class NLLLoss(Function):
    """-weight[t] * input[n, t, ...] per sample, reduced; input holds log-probabilities."""

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction):
        xp = xp_of(x)
        a = widen(x._data)
        targets = _ClassTargets(xp, target, weight, ignore_index, a.shape[1], a.dtype)
        per_sample = -a[targets.index] * targets.sample_weight
        ctx.targets, ctx.reduction, ctx.shape = targets, reduction, a.shape
        return _reduce_array(xp, per_sample, reduction, targets.denom).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        shape, dtype = ctx.shape, widen(grad._data).dtype
        picked = ctx.targets.apply(lambda targets: targets.dense(xp_of(grad), shape, dtype, -1.0, 0.0))
        return ops.mul(picked, _grad_scale(grad, ctx.reduction, ctx.targets.denom, len(ctx.shape))), None, None, None, None


class CrossEntropy(Function):
    """log_softmax + nll over dim 1 with label smoothing, as one node (class-index targets)."""

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, smoothing):
        xp = xp_of(x)
        a = widen(x._data)
        n_classes = a.shape[1]
        targets = _ClassTargets(xp, target, weight, ignore_index, n_classes, a.dtype)
        row_max = a.max(axis=1, keepdims=True)
        exp_shifted = a - row_max
        xp.exp(exp_shifted, out=exp_shifted)
        lse = xp.log(exp_shifted.sum(axis=1, keepdims=True))
        lse += row_max
        nll = (lse[:, 0] - a[targets.index]) * targets.sample_weight
        if smoothing:
            if targets.weight is None:
                smooth = lse[:, 0] * n_classes - a.sum(axis=1)
            else:
                w = targets.class_weight_view(a.ndim)
                smooth = lse[:, 0] * targets.weight.sum() - (a * w).sum(axis=1)
            per_sample = (1.0 - smoothing) * nll + (smoothing / n_classes) * smooth * targets.valid
        else:
            per_sample = nll
        ctx.save_for_backward(x)
        ctx.lse, ctx.targets, ctx.reduction, ctx.smoothing = lse, targets, reduction, smoothing
        return _reduce_array(xp, per_sample, reduction, targets.denom).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        targets, smoothing = ctx.targets, ctx.smoothing
        xp = xp_of(x)
        n_classes = x.shape[1]
        smooth_scale = smoothing / n_classes
        # d loss_n / d x = softmax(x) * sum_c(Q_nc) - Q_n with Q the (smoothed, weighted) target.
        row_total = (1.0 - smoothing) * targets.sample_weight
        if smoothing:
            weight_sum = targets.weight.sum() if targets.weight is not None else n_classes
            row_total = row_total + smooth_scale * weight_sum * targets.valid
        row_total = row_total.reshape(row_total.shape[:1] + (1,) + row_total.shape[1:])
        if grad_mode.is_grad_enabled():
            q = wrap(targets.dense(xp, tuple(x.shape), widen(x._data).dtype, 1.0 - smoothing, smooth_scale))
            probs = softmax(x, dim=1)
            scale = _grad_scale(grad, ctx.reduction, targets.denom, x.ndim)
            return ops.mul(ops.sub(ops.mul(probs, wrap(row_total)), q), scale), None, None, None, None, None
        reduction = ctx.reduction

        def compute(targets, a, lse, g):
            dtype = a.dtype
            a = widen(a)
            out = a - lse
            xp.exp(out, out=out)
            row_total = (1.0 - smoothing) * targets.sample_weight
            if smoothing:
                weight_sum = targets.weight.sum() if targets.weight is not None else n_classes
                row_total = row_total + smooth_scale * weight_sum * targets.valid
            row_total = row_total.reshape(row_total.shape[:1] + (1,) + row_total.shape[1:])
            out *= row_total
            out[targets.index] -= (1.0 - smoothing) * targets.sample_weight
            if smoothing:
                out -= smooth_scale * (targets.class_weight_view(a.ndim) if targets.weight is not None else 1.0) * \
                    targets.valid.reshape(row_total.shape)
            out *= _grad_scale_array(g, reduction, targets.denom)
            return out.astype(dtype, copy=False)
        return targets.apply(compute, x, ctx.lse, grad), None, None, None, None, None


def _batched(input, target):
    """Unbatched (C,) input with a 0-d target → a batch of one."""
    if input.ndim == 1:
        return input.unsqueeze(0), target.unsqueeze(0), True
    return input, target, False


@autocast_op("nll_loss", 2)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class-index targets; input (N, C, d1...) holds log-probabilities."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_class_targets(input, target, weight, "nll_loss")
    x, t, unbatched = _batched(input, target)
    out = NLLLoss.apply(x, t, weight, int(ignore_index), reduction)
    return out.squeeze(0) if unbatched and reduction == "none" else out


@autocast_op("cross_entropy", 2)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits (N, C, d1...) or (C,) and class indices or class probabilities.

    A target with the input's shape holds class probabilities; otherwise class indices, where
    ignore_index entries contribute nothing and a 'mean' divides by the summed weights of the
    other targets. label_smoothing mixes the target with the uniform distribution.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if not input.is_floating_point():
        raise RuntimeError(f'"log_softmax_lastdim_kernel_impl" not implemented for \'{_type_name(input.dtype)}\'')
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing)
    _check_class_targets(input, target, weight, "cross_entropy")
    x, t, unbatched = _batched(input, target)
    out = CrossEntropy.apply(x, t, weight, int(ignore_index), reduction, float(label_smoothing))
    return out.squeeze(0) if unbatched and reduction == "none" else out


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing):
    """-(target * log_softmax(input) * weight).sum(class dim); 'mean' divides by the sample count."""
    if not target.is_floating_point():
        raise RuntimeError(
            f"Expected floating point type for target with class probabilities, got {_type_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if label_smoothing > 0:
        target = ops.add(ops.mul(target, 1.0 - label_smoothing), label_smoothing / n_classes)
    terms = ops.mul(log_softmax(input, dim=class_dim), target)
    if weight is not None:
        if weight.ndim != 1 or weight.shape[0] != n_classes:
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes or no classes but got weight "
                f"tensor of shape: {list(weight.shape)}"
            )
        terms = ops.mul(terms, weight.reshape((n_classes,) + (1,) * (input.ndim - class_dim - 1)))
    loss = ops.neg(ops.sum(terms, dim=class_dim))
    if reduction == "mean":
        return ops.div(ops.sum(loss), input.numel() // n_classes) if input.numel() else ops.sum(loss)
    return _reduce(loss, reduction)


# --- regression losses --------------------------------------------------------------------


def _warn_broadcast(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


@autocast_op("mse_loss", 2)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error: (input - target)^2, broadcast (with torch's warning) and reduced."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_broadcast(input, target)
    diff = ops.sub(input, target)
    loss = ops.mul(diff, diff)
    return _reduce(ops.mul(loss, weight) if weight is not None else loss, reduction)


@autocast_op("l1_loss", 2)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error |input - target|."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_broadcast(input, target)
    loss = ops.abs(ops.sub(input, target))
    return _reduce(ops.mul(loss, weight) if weight is not None else loss, reduction)


@autocast_op("smooth_l1_loss", 2)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta = 0 is the L1 loss)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _warn_broadcast(input, target)
    diff = ops.abs(ops.sub(input, target))
    if beta == 0.0:
        return _reduce(diff, reduction)
    loss = ops.where(ops.lt(diff, beta), ops.mul(ops.mul(diff, diff), 0.5 / beta), ops.sub(diff, 0.5 * beta))
    return _reduce(loss, reduction)


@autocast_op("huber_loss", 2)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _warn_broadcast(input, target)
    diff = ops.abs(ops.sub(input, target))
    loss = ops.where(ops.lt(diff, delta), ops.mul(ops.mul(diff, diff), 0.5), ops.mul(ops.sub(diff, 0.5 * delta), delta))
    return _reduce(ops.mul(loss, weight) if weight is not None else loss, reduction)


# --- binary and distribution losses -------------------------------------------------------


class BinaryCrossEntropy(Function):
    """-(t log x + (1 - t) log(1 - x)) with each log clamped at -100, as torch does."""

    @staticmethod
    def forward(ctx, x, t):
        xp = xp_of(x)
        a, b = widen(x._data), widen(t._data)
        if x.device.type != "meta" and ((a < 0) | (a > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
        with np.errstate(divide="ignore"):
            log_x = xp.maximum(xp.log(a), -100.0)
            log_1mx = xp.maximum(xp.log1p(-a), -100.0)
        ctx.save_for_backward(x, t)
        return (-(b * log_x + (1.0 - b) * log_1mx)).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        grad_x = grad_t = None
        if ctx.needs_input_grad[0]:
            # torch's formula: (x - t) / max(x (1 - x), 1e-12), finite at x = 0 and x = 1.
            denom = ops.clamp_min(ops.mul(x, ops.rsub(x, 1.0)), 1e-12)
            grad_x = ops.mul(grad, ops.div(ops.sub(x, t), denom))
        if ctx.needs_input_grad[1]:
            log_x = ops.clamp_min(ops.log(x), -100.0)
            log_1mx = ops.clamp_min(ops.log(ops.rsub(x, 1.0)), -100.0)
            grad_t = ops.mul(grad, ops.sub(log_1mx, log_x))
        return grad_x, grad_t


@autocast_op("binary_cross_entropy", 2)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy of probabilities `input` against `target` of the same shape."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is deprecated. "
            "Please ensure they have the same size."
        )
    loss = BinaryCrossEntropy.apply(input, ops.cast(target, input.dtype) if target.dtype != input.dtype else target)
    if weight is not None:
        loss = ops.mul(loss, weight)
    return _reduce(loss, reduction)


def _softplus_neg(x):
    """softplus(-x) = log(1 + exp(-x)) as log1p(exp(-|x|)) + max(-x, 0): never overflows."""
    return ops.add(ops.log1p(ops.exp(ops.neg(ops.abs(x)))), ops.clamp_min(ops.neg(x), 0.0))


class BinaryCrossEntropyWithLogits(Function):
    """(1 - t) x + lw softplus(-x) with lw = 1 + (pos_weight - 1) t, as one node.

    Its gradient in x, lw sigmoid(x) - pos_weight t, is exact everywhere (a composition
    through |x| would be wrong at x = 0).
    """

    @staticmethod
    def forward(ctx, x, t, pos_weight):
        xp = xp_of(x)
        a, b = widen(x._data), widen(t._data)
        softplus_neg = xp.log1p(xp.exp(-xp.abs(a))) + xp.maximum(-a, 0.0)
        log_weight = 1.0 + (widen(pos_weight._data) - 1.0) * b if pos_weight is not None else 1.0
        ctx.save_for_backward(x, t, pos_weight)
        return ((1.0 - b) * a + log_weight * softplus_neg).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, t, pos_weight = ctx.saved_tensors
        grad_x = grad_t = grad_pw = None
        if ctx.needs_input_grad[0]:
            if pos_weight is None:
                grad_x = ops.mul(grad, ops.sub(ops.sigmoid(x), t))
            else:
                log_weight = ops.add(ops.mul(ops.sub(pos_weight, 1.0), t), 1.0)
                grad_x = ops.mul(grad, ops.sub(ops.mul(log_weight, ops.sigmoid(x)), ops.mul(pos_weight, t)))
        if ctx.needs_input_grad[1]:
            grad_t = ops.neg(x) if pos_weight is None else ops.sub(
                ops.mul(ops.sub(pos_weight, 1.0), _softplus_neg(x)), x)
            grad_t = ops.mul(grad, grad_t)
        if ctx.needs_input_grad[2]:
            grad_pw = ops.mul(grad, ops.mul(t, _softplus_neg(x)))
        return grad_x, grad_t, grad_pw


@autocast_op("binary_cross_entropy_with_logits", 2)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross entropy in one stable node; pos_weight weighs the positive term."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if target.dtype != input.dtype:
        target = ops.cast(target, input.dtype)
    loss = BinaryCrossEntropyWithLogits.apply(input, target, pos_weight)
    if weight is not None:
        loss = ops.mul(loss, weight)
    return _reduce(loss, reduction)


@autocast_op("kl_div", 2)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || exp(input)) pointwise: target (log target - input), 0 where target is 0.

    reduction='batchmean' divides the sum by the batch size (the mathematical KL divergence);
    'mean' divides by the element count, as torch does, with torch's warning.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    if log_target:
        loss = ops.mul(ops.exp(target), ops.sub(target, input))
    else:
        # target * log(target) with 0 where target == 0 (the log argument kept finite there).
        positive = ops.gt(target, 0)
        safe_log = ops.log(ops.where(positive, target, 1.0))
        loss = ops.mul(target, ops.sub(safe_log, input))
    if reduction == "batchmean":
        total = ops.sum(loss)
        return ops.div(total, input.shape[0]) if input.ndim else total
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _reduce(loss, reduction)


@autocast_op("cosine_embedding_loss", 2)
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target = 1, max(0, cos(x1, x2) - margin) where target = -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim not in (1, 2):
        raise RuntimeError(
            f"cosine_embedding_loss: expected 1D or 2D inputs of equal dimension, got {input1.ndim}D and "
            f"{input2.ndim}D")
    dim = input1.ndim - 1
    eps = 1e-12
    dot = ops.sum(ops.mul(input1, input2), dim=dim)
    mag1 = ops.add(ops.sum(ops.mul(input1, input1), dim=dim), eps)
    mag2 = ops.add(ops.sum(ops.mul(input2, input2), dim=dim), eps)
    cos = ops.div(dot, ops.sqrt(ops.mul(mag1, mag2)))
    positive = ops.where(ops.eq(target, 1), ops.rsub(cos, 1.0), 0.0)
    negative = ops.where(ops.eq(target, -1), ops.clamp_min(ops.sub(cos, margin), 0.0), 0.0)
    return _reduce(ops.add(positive, negative), reduction)


@autocast_op("margin_ranking_loss", 2)
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (x1 - x2) + margin)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    loss = ops.clamp_min(ops.add(ops.mul(ops.neg(target), ops.sub(input1, input2)), margin), 0.0)
    return _reduce(loss, reduction)


@autocast_op("triplet_margin_loss", 3)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with d the p-norm pairwise distance; with swap, d(a, n)
    is replaced by d(p, n) where that is smaller."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = ops.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(ops.clamp_min(ops.add(ops.sub(dist_pos, dist_neg), margin), 0.0), reduction)


@autocast_op("poisson_nll_loss", 2)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log likelihood of target under Poisson(rate): exp(input) - target * input for a
    log rate, input - target * log(input + eps) for a rate; `full` adds Stirling's
    approximation of log(target!) where target > 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = ops.sub(ops.exp(input), ops.mul(target, input))
    else:
        loss = ops.sub(input, ops.mul(target, ops.log(ops.add(input, eps))))
    if full:
        above_one = ops.gt(target, 1)
        t = ops.where(above_one, target, 2.0)  # the discarded branch stays finite (and its gradient zero)
        stirling = ops.add(ops.sub(ops.mul(t, ops.log(t)), t), ops.mul(ops.log(ops.mul(t, 2 * math.pi)), 0.5))
        loss = ops.add(loss, ops.where(above_one, stirling, 0.0))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var), plus 0.5 log(2 pi) when `full`.

    var is one variance per element, or shared along one dim (a size-1 dim, or the last dim
    left out), or a float. It is clamped below at eps for stability, with the gradient passing
    through the clamp as torch's in-place clamp under no_grad lets it.
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ops.mul(ops.ones_like(input), var)
    elif ops.any(ops.lt(var, 0)):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim
                  and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = _clamp_min_passing_grad(var, eps)
    diff = ops.sub(input, target)
    loss = ops.mul(ops.add(ops.log(var), ops.div(ops.mul(diff, diff), var)), 0.5)
    if full:
        loss = ops.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per sample, the mean over classes (the last dim) of the binary logistic loss of each label."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = ops.neg(ops.add(ops.mul(target, logsigmoid(input)),
                           ops.mul(ops.rsub(target, 1.0), logsigmoid(ops.neg(input)))))
    if weight is not None:
        loss = ops.mul(loss, weight)
    class_dim = input.ndim - 1
    loss = ops.div(ops.sum(loss, dim=class_dim), input.shape[class_dim])
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)
