# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""LoRA layers: a frozen `base_layer` plus, per adapter, low-rank factors A (r, in) and B (out, r).

forward: base(x) + scaling * B(A(dropout(x))) for every active adapter, with scaling
lora_alpha / r (or lora_alpha / sqrt(r) with rslora). Merging adds scaling * B @ A to the base
weight so the layer then costs nothing extra; unmerging subtracts it again.
"""
import math
import warnings

from .... import core
from ....core import nn
from ....core.nn import functional as F
from ..tuners_utils import BaseTunerLayer
from ...utils.other import transpose
from . import dora


def _in_out_features(module):
    from ....transformers.pytorch_utils import Conv1D

    if isinstance(module, (nn.Linear, nn.QuantizedLinear)):
        return module.in_features, module.out_features
    if isinstance(module, Conv1D):
        return tuple(module.weight.shape)
    if isinstance(module, (nn.Conv1d, nn.Conv2d)):
        return module.in_channels, module.out_channels
    if isinstance(module, nn.Embedding):
        return module.num_embeddings, module.embedding_dim
    raise TypeError(f"LoRA does not support layers of type {type(module).__name__}")


class LoraLayer(BaseTunerLayer):
    """State shared by the LoRA layers: per-adapter ranks, alphas, scalings, dropouts and factors."""

    adapter_layer_names = ("lora_A", "lora_B", "lora_embedding_A", "lora_embedding_B", "lora_magnitude_vector")
    other_param_names = ("r", "lora_alpha", "scaling", "lora_dropout", "use_dora", "use_rslora")

    def _init_lora_state(self, base_layer):
        self.base_layer = base_layer
        self.r = {}
        self.lora_alpha = {}
        self.scaling = {}
        self.lora_dropout = nn.ModuleDict({})
        self.lora_A = nn.ModuleDict({})
        self.lora_B = nn.ModuleDict({})
        self.lora_embedding_A = nn.ParameterDict({})
        self.lora_embedding_B = nn.ParameterDict({})
        self.lora_magnitude_vector = nn.ModuleDict({})
        self.use_dora = {}
        self.use_rslora = {}
        self._disable_adapters = False
        self.merged_adapters = []
        self._dora_weight_norms = {}  # norms used at merge time, needed to unmerge exactly
        self.in_features, self.out_features = _in_out_features(self.get_base_layer())

    def _set_rank(self, adapter_name, r, lora_alpha, config):
        if r <= 0:
            raise ValueError(f"`r` should be a positive integer value but the value passed is {r}")
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.use_rslora[adapter_name] = config.use_rslora
        self.use_dora[adapter_name] = config.use_dora
        self.scaling[adapter_name] = lora_alpha / (math.sqrt(r) if config.use_rslora else r)
        self.lora_dropout[adapter_name] = nn.Dropout(p=config.lora_dropout) if config.lora_dropout > 0 \
            else nn.Identity()

    def _adapter_dtype(self):
        """Adapters train in float32 even on a float16/bfloat16 or quantized base (HF peft's
        autocast_adapter_dtype)."""
        dtype = self.get_base_layer().weight.dtype
        return dtype if dtype in (core.float32, core.float64) else core.float32

    def reset_lora_parameters(self, adapter_name, init_lora_weights):
        """True: A kaiming-uniform, B zero; "gaussian": A ~ N(0, 1/r), B zero (so the adapter starts as a no-op).
        Embeddings are the other way round: A zero, B ~ N(0, 1)."""
        if init_lora_weights is False:
            return
        if adapter_name in self.lora_A:
            if init_lora_weights is True:
                nn.init.kaiming_uniform_(self.lora_A[adapter_name].weight, a=math.sqrt(5))
            elif init_lora_weights.lower() == "gaussian":
                nn.init.normal_(self.lora_A[adapter_name].weight, std=1 / self.r[adapter_name])
            else:
                raise ValueError(f"Unknown initialization {init_lora_weights=}")
            nn.init.zeros_(self.lora_B[adapter_name].weight)
        if adapter_name in self.lora_embedding_A:
            nn.init.zeros_(self.lora_embedding_A[adapter_name])
            nn.init.normal_(self.lora_embedding_B[adapter_name])

    def pissa_init(self, adapter_name, init_lora_weights):
        """PiSSA: A, B from the top-r singular triplets of W; W keeps the residual, so W + sBA is unchanged.

        "pissa" uses the exact SVD; "pissa_niter_K" the randomised low-rank SVD with K subspace
        iterations (Halko et al.), much cheaper for large weights.
        """
        weight = self.get_base_layer().weight
        dtype = weight.dtype
        if dtype not in (core.float32, core.float16, core.bfloat16):
            raise TypeError("Please initialize PiSSA under float32, float16, or bfloat16. Subsequently, re-quantize "
                            "the residual model to help minimize quantization errors.")
        r, scaling = self.r[adapter_name], self.scaling[adapter_name]
        matrix = transpose(weight.detach().to(core.float32), self.fan_in_fan_out)
        if init_lora_weights == "pissa":
            U, S, Vh = core.linalg.svd(matrix, full_matrices=False)
            Ur, Sr, Vhr = U[:, :r], S[:r], Vh[:r]
        else:
            niter = int(init_lora_weights.split("_niter_")[-1])
            Ur, Sr, Vhr = _svd_lowrank(matrix, r, niter)
        root = core.sqrt(Sr / scaling)
        lora_A = root[:, None] * Vhr
        lora_B = Ur * root[None, :]
        with core.no_grad():
            self.lora_A[adapter_name].weight.copy_(lora_A)
            self.lora_B[adapter_name].weight.copy_(lora_B)
            residual = matrix - scaling * (lora_B @ lora_A)
            weight.copy_(transpose(residual, self.fan_in_fan_out).to(dtype))

    def olora_init(self, adapter_name):
        """OLoRA: B, A = the first r columns of Q and rows of R in W = QR; W keeps W - s B A."""
        weight = self.get_base_layer().weight
        dtype = weight.dtype
        if dtype not in (core.float32, core.float16, core.bfloat16):
            raise TypeError(f"Unsupported data type for the base layer. Got {dtype}.")
        r, scaling = self.r[adapter_name], self.scaling[adapter_name]
        matrix = weight.detach().to(core.float32)
        Q, R = core.linalg.qr(matrix)
        with core.no_grad():
            self.lora_A[adapter_name].weight.copy_(R[:r].contiguous())
            self.lora_B[adapter_name].weight.copy_(Q[:, :r].contiguous())
            residual = matrix - scaling * (self.lora_B[adapter_name].weight @ self.lora_A[adapter_name].weight)
            weight.copy_(residual.to(dtype))

    def _initialise(self, adapter_name, init_lora_weights):
        if isinstance(init_lora_weights, str) and init_lora_weights.startswith("pissa"):
            self.pissa_init(adapter_name, init_lora_weights)
        elif isinstance(init_lora_weights, str) and init_lora_weights.lower() == "olora":
            self.olora_init(adapter_name)
        elif init_lora_weights:
            self.reset_lora_parameters(adapter_name, init_lora_weights)

    def set_scale(self, adapter, scale):
        """scaling = scale * alpha / r (or / sqrt(r) with rslora)."""
        if adapter not in self.scaling:
            return
        denominator = math.sqrt(self.r[adapter]) if self.use_rslora.get(adapter, False) else self.r[adapter]
        self.scaling[adapter] = scale * self.lora_alpha[adapter] / denominator

    def _cast_input(self, x, dtype):
        return x if x.dtype == dtype else x.to(dtype)

    def _holds_adapter(self, adapter):
        return adapter in self.lora_A or adapter in self.lora_embedding_A

    def _merged_weight(self, adapter, weight):
        """weight + delta; with DoRA, rescaled to the magnitude vector (the norm is kept for unmerging)."""
        use_dora = self.use_dora.get(adapter, False)
        if use_dora and self.merged_adapters:
            raise ValueError(f"Cannot merge DoRA adapter {adapter!r} on top of merged adapters "
                             f"{self.merged_adapters}; unmerge them first.")
        delta = self.get_delta_weight(adapter).to(weight.dtype)
        if not use_dora:
            return weight + delta
        norm = self.lora_magnitude_vector[adapter].get_weight_norm(weight, self._dora_norm_delta(delta),
                                                                    scaling=1).detach()
        self._dora_weight_norms[adapter] = norm
        return self._dora_factor(adapter, norm) * (weight + delta)

    def _unmerged_weight(self, adapter, weight):
        delta = self.get_delta_weight(adapter).to(weight.dtype)
        if not self.use_dora.get(adapter, False):
            return weight - delta
        norm = self._dora_weight_norms.pop(adapter)
        return weight / self._dora_factor(adapter, norm) - delta

    def merge(self, safe_merge=False, adapter_names=None):
        """Fold the active (or given) adapters into the base weight; safe_merge checks for NaN/inf first."""
        self._merge_into_base_weight(safe_merge, adapter_names, self._merged_weight)

    def unmerge(self):
        self._unmerge_from_base_weight(self._unmerged_weight)

    def _forward_with_lora_modules(self, x, args, kwargs):
        """forward of the layers whose factors are modules (Linear, convolutions): base(x) plus, per
        active adapter, scaling * B(A(dropout(x))) or its DoRA form."""
        result = self._forward_base_when_disabled_or_merged(x, args, kwargs)
        if result is not None:
            return result
        result = self.base_layer(x, *args, **kwargs)
        result_dtype = result.dtype
        for adapter in self.active_adapters:
            if adapter not in self.lora_A:
                continue
            lora_A, lora_B = self.lora_A[adapter], self.lora_B[adapter]
            dropout, scaling = self.lora_dropout[adapter], self.scaling[adapter]
            x = self._cast_input(x, lora_A.weight.dtype)
            if not self.use_dora.get(adapter, False):
                result = result + lora_B(lora_A(dropout(x))) * scaling
                continue
            if isinstance(dropout, nn.Identity) or not self.training:
                dora_input, base_result = x, result
            else:
                dora_input, base_result = dropout(x), None
            result = result + self.lora_magnitude_vector[adapter](
                dora_input, lora_A=lora_A, lora_B=lora_B, scaling=scaling, base_layer=self.get_base_layer(),
                base_result=base_result)
        return result.to(result_dtype)


def _svd_lowrank(matrix, rank, niter):
    """Randomised rank-`rank` SVD (Halko, Martinsson & Tropp 2011) with `niter` power iterations."""
    n = matrix.shape[1]
    sketch = matrix @ core.randn(n, rank, dtype=matrix.dtype)
    Q, _ = core.linalg.qr(sketch)
    for _ in range(niter):
        Q, _ = core.linalg.qr(matrix.T @ Q)
        Q, _ = core.linalg.qr(matrix @ Q)
    U_small, S, Vh = core.linalg.svd(Q.T @ matrix, full_matrices=False)
    return Q @ U_small, S, Vh


class Linear(nn.Module, LoraLayer):
    """LoRA on nn.Linear, or on GPT-2's Conv1D (`fan_in_fan_out`: its weight is (in, out))."""

    def __init__(self, base_layer, adapter_name, config, r=0, lora_alpha=1, is_target_conv_1d_layer=False):
        super().__init__()
        self._init_lora_state(base_layer)
        self.fan_in_fan_out = config.fan_in_fan_out
        self.is_target_conv_1d_layer = is_target_conv_1d_layer
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, lora_alpha, config)

    def update_layer(self, adapter_name, r, lora_alpha, config):
        """Add adapter `adapter_name` with rank r (the active adapters stay as they are)."""
        self._set_rank(adapter_name, r, lora_alpha, config)
        base_weight = self.get_base_layer().weight
        factory = dict(device=base_weight.device, dtype=self._adapter_dtype())
        self.lora_A[adapter_name] = nn.Linear(self.in_features, r, bias=False, **factory)
        self.lora_B[adapter_name] = nn.Linear(r, self.out_features, bias=False, **factory)
        self._initialise(adapter_name, config.init_lora_weights)
        if config.use_dora:
            layer = dora.DoraLinearLayer(fan_in_fan_out=self.fan_in_fan_out)
            layer.update_layer(base_layer=self.get_base_layer(), lora_A=self.lora_A[adapter_name].weight,
                               lora_B=self.lora_B[adapter_name].weight, scaling=self.scaling[adapter_name])
            self.lora_magnitude_vector[adapter_name] = layer
        self.set_adapter(self.active_adapters, inference_mode=config.inference_mode)

    def get_delta_weight(self, adapter):
        """scaling * B @ A, laid out like the base weight."""
        weight_A = self.lora_A[adapter].weight
        weight_B = self.lora_B[adapter].weight
        return transpose(weight_B @ weight_A, self.fan_in_fan_out) * self.scaling[adapter]

    def _dora_norm_delta(self, delta):
        return transpose(delta, self.fan_in_fan_out)

    def _dora_factor(self, adapter, norm):
        """magnitude / norm, one factor per output feature, shaped to scale the base weight's rows."""
        factor = (self.lora_magnitude_vector[adapter].weight / norm).view(-1, 1)
        return transpose(factor, self.fan_in_fan_out).detach()

    def forward(self, x, *args, **kwargs):
        return self._forward_with_lora_modules(x, args, kwargs)

    def __repr__(self):
        return "lora." + super().__repr__()


class Embedding(nn.Module, LoraLayer):
    """LoRA on nn.Embedding: the adapter is an embedding table A^T (num_embeddings, r) times B^T."""

    def __init__(self, base_layer, adapter_name, config, r=0, lora_alpha=1):
        super().__init__()
        self._init_lora_state(base_layer)
        self.fan_in_fan_out = config.fan_in_fan_out
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, lora_alpha, config)

    def update_layer(self, adapter_name, r, lora_alpha, config):
        self._set_rank(adapter_name, r, lora_alpha, config)
        base_weight = self.get_base_layer().weight
        factory = dict(device=base_weight.device, dtype=self._adapter_dtype())
        self.lora_embedding_A[adapter_name] = nn.Parameter(core.randn(r, self.in_features, **factory))
        self.lora_embedding_B[adapter_name] = nn.Parameter(core.randn(self.out_features, r, **factory))
        init = config.init_lora_weights
        if isinstance(init, str) and (init.startswith("pissa") or init == "olora"):
            raise ValueError(f"init_lora_weights={init!r} is not supported for Embedding layers.")
        self._initialise(adapter_name, init)
        if config.use_dora:
            layer = dora.DoraEmbeddingLayer(fan_in_fan_out=True)
            layer.update_layer(base_layer=self.get_base_layer(), lora_A=self.lora_embedding_A[adapter_name],
                               lora_B=self.lora_embedding_B[adapter_name], scaling=self.scaling[adapter_name])
            self.lora_magnitude_vector[adapter_name] = layer
        self.set_adapter(self.active_adapters, inference_mode=config.inference_mode)

    def get_delta_weight(self, adapter):
        """scaling * (B @ A)^T, shaped like the table (num_embeddings, embedding_dim)."""
        return (self.lora_embedding_B[adapter] @ self.lora_embedding_A[adapter]).T * self.scaling[adapter]

    def _dora_norm_delta(self, delta):
        return delta.T

    def _dora_factor(self, adapter, norm):
        """magnitude / norm, one factor per embedding dimension (the table's columns)."""
        return (self.lora_magnitude_vector[adapter].weight / norm).view(1, -1).detach()

    def _embed(self, input, weight):
        base = self.get_base_layer()
        return F.embedding(input, weight, padding_idx=base.padding_idx, max_norm=base.max_norm,
                           norm_type=base.norm_type, scale_grad_by_freq=base.scale_grad_by_freq, sparse=base.sparse)

    def forward(self, x, *args, **kwargs):
        result = self._forward_base_when_disabled_or_merged(x, args, kwargs)
        if result is not None:
            return result
        result = self.base_layer(x, *args, **kwargs)
        result_dtype = result.dtype
        for adapter in self.active_adapters:
            if adapter not in self.lora_embedding_A:
                continue
            embedding_A = self.lora_embedding_A[adapter].T
            embedding_B = self.lora_embedding_B[adapter].T
            scaling = self.scaling[adapter]
            if not self.use_dora.get(adapter, False):
                result = result + (self._embed(x, embedding_A) @ embedding_B) * scaling
                continue
            mag_norm_scale, dora_result = self.lora_magnitude_vector[adapter](
                x, lora_A=embedding_A, lora_B=embedding_B, scaling=scaling, base_layer=self.get_base_layer(),
                embed_fn=self._embed)
            result = mag_norm_scale * result + dora_result
        return result.to(result_dtype)

    def __repr__(self):
        return "lora." + super().__repr__()


class _ConvNd(nn.Module, LoraLayer):
    """LoRA on convolutions: A is a conv with the base kernel into r channels, B a 1x1 conv out."""

    _kernel_dim = None
    _dora_layer_cls = None

    def __init__(self, base_layer, adapter_name, config, r=0, lora_alpha=1):
        super().__init__()
        self._init_lora_state(base_layer)
        if base_layer.weight.dim() != self._kernel_dim:
            raise ValueError(f"{type(base_layer).__name__} layer kernel must have {self._kernel_dim} dimensions, not "
                             f"{base_layer.weight.dim()}")
        if base_layer.groups > 1:
            warnings.warn("LoRA adapter added to ConvNd layer with groups > 1. Merging is not supported.")
        if r % base_layer.groups != 0:
            raise ValueError(f"Targeting a {type(base_layer).__name__} with groups={base_layer.groups} and rank {r}. "
                             "Currently, support is limited to conv layers where the rank is divisible by groups. "
                             "Either choose a different rank or do not target this specific layer.")
        self.fan_in_fan_out = config.fan_in_fan_out
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, lora_alpha, config)

    def update_layer(self, adapter_name, r, lora_alpha, config):
        self._set_rank(adapter_name, r, lora_alpha, config)
        base = self.get_base_layer()
        conv_cls = type(base)
        ones = (1,) * (self._kernel_dim - 2)
        factory = dict(device=base.weight.device, dtype=self._adapter_dtype())
        self.lora_A[adapter_name] = conv_cls(self.in_features, r, base.kernel_size, base.stride, base.padding,
                                             bias=False, **factory)
        self.lora_B[adapter_name] = conv_cls(r, self.out_features, ones, ones, groups=base.groups, bias=False,
                                             **factory)
        init = config.init_lora_weights
        if isinstance(init, str) and (init.startswith("pissa") or init == "olora"):
            raise ValueError(f"init_lora_weights={init!r} is not supported for convolution layers.")
        self._initialise(adapter_name, init)
        if config.use_dora:
            layer = self._dora_layer_cls(fan_in_fan_out=False)
            layer.update_layer(base_layer=base, lora_A=self.lora_A[adapter_name].weight,
                               lora_B=self.lora_B[adapter_name].weight, scaling=self.scaling[adapter_name])
            self.lora_magnitude_vector[adapter_name] = layer
        self.set_adapter(self.active_adapters, inference_mode=config.inference_mode)

    def get_delta_weight(self, adapter):
        """scaling times the kernel of conv(B, conv(A, .)), shaped like the base kernel."""
        weight_A = self.lora_A[adapter].weight
        weight_B = self.lora_B[adapter].weight
        base = self.get_base_layer()
        if tuple(base.weight.shape[2:4]) == (1, 1):
            delta = (weight_B.squeeze(3).squeeze(2) @ weight_A.squeeze(3).squeeze(2))[:, :, None, None]
            return delta * self.scaling[adapter]
        delta = self._conv_fn(weight_A.transpose(0, 1), weight_B)
        if base.groups > 1:
            return delta * self.scaling[adapter]
        return delta.transpose(0, 1) * self.scaling[adapter]

    def _dora_norm_delta(self, delta):
        return delta

    def _dora_factor(self, adapter, norm):
        """magnitude / norm, one factor per output channel, shaped to scale the kernel."""
        shape = (-1,) + (1,) * (self._kernel_dim - 1)
        return (self.lora_magnitude_vector[adapter].weight / norm).view(*shape).detach()

    def _merged_weight(self, adapter, weight):
        if self.get_base_layer().groups > 1:
            raise NotImplementedError("Merging is not supported for _ConvNd layers with groups > 1!")
        return super()._merged_weight(adapter, weight)

    def forward(self, x, *args, **kwargs):
        return self._forward_with_lora_modules(x, args, kwargs)

    def __repr__(self):
        return "lora." + super().__repr__()


class Conv1d(_ConvNd):
    _kernel_dim = 3
    _dora_layer_cls = dora.DoraConv1dLayer

    @staticmethod
    def _conv_fn(input, weight):
        return F.conv1d(input, weight)


class Conv2d(_ConvNd):
    _kernel_dim = 4
    _dora_layer_cls = dora.DoraConv2dLayer

    @staticmethod
    def _conv_fn(input, weight):
        return F.conv2d(input, weight)


def dispatch_default(target, adapter_name, config, **kwargs):
    """The LoRA layer class for `target`'s base module type, or None when LoRA cannot adapt it."""
    from ....transformers.pytorch_utils import Conv1D

    base = target.get_base_layer() if isinstance(target, BaseTunerLayer) else target
    if isinstance(base, nn.Embedding):
        return Embedding(target, adapter_name, config, **kwargs)
    if isinstance(base, nn.Conv2d):
        return Conv2d(target, adapter_name, config, **kwargs)
    if isinstance(base, nn.Conv1d):
        return Conv1d(target, adapter_name, config, **kwargs)
    if isinstance(base, nn.Linear):
        if config.fan_in_fan_out:
            warnings.warn("fan_in_fan_out is set to True but the target module is `torch.nn.Linear`. Setting "
                          "fan_in_fan_out to False.")
            config.fan_in_fan_out = False
        return Linear(target, adapter_name, config, **kwargs)
    if isinstance(base, nn.QuantizedLinear):
        # A quantized base (QLoRA): its weight is (out, in) whatever layer it came from.
        config.fan_in_fan_out = False
        return Linear(target, adapter_name, config, **kwargs)
    if isinstance(base, Conv1D):
        if not config.fan_in_fan_out:
            warnings.warn("fan_in_fan_out is set to False but the target module is `Conv1D`. Setting fan_in_fan_out "
                          "to True.")
            config.fan_in_fan_out = True
        return Linear(target, adapter_name, config, is_target_conv_1d_layer=True, **kwargs)
    return None
