# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Recurrent layers: RNN (tanh or relu), LSTM (with projections), GRU, and their cells.

Parameter names, shapes, gate order (LSTM i, f, g, o; GRU r, z, n), initialisation and
errors are torch's, so a torch state_dict loads unchanged.

A layer's input-to-hidden products for every time step are one matrix product per layer and
direction; only the hidden-to-hidden recurrence runs step by step, each step one autograd node
(_Step) with its gradient in closed form.

Packed sequences run on their packed data: step t holds the first batch_sizes[t] sequences
(longest first), so the forward direction sets aside the state of each sequence that has
ended (its final state) and the reverse direction, walking back into longer sequences, adds
rows that start from their initial state.
"""
import math
import numbers
import warnings

from ... import ops
from ..._tensor import _wrap
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops._helpers import xp_of
from ...ops.elementwise import _stable_sigmoid
from ...ops.linalg import _matmul_arrays
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class _SplitSteps(Function):
    """A sequence's per-step slices as one node: time-major (T, B, G) is cut into T (B, G)
    tensors, packed (N, G) data into the row blocks of `batch_sizes`. The backward joins the
    step gradients with one stack or cat, where T slicing nodes would each write into a
    zero array of the whole sequence (quadratic in T)."""

    @staticmethod
    def forward(ctx, x, batch_sizes):
        ctx.packed = batch_sizes is not None
        if batch_sizes is None:
            return tuple(x._data[t] for t in range(x.shape[0]))
        pieces, start = [], 0
        for n in batch_sizes:
            pieces.append(x._data[start:start + n])
            start += n
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return (ops.cat(grads) if ctx.packed else ops.stack(grads)), None


class _ArrayMath:
    """The step's math on the arrays of its tensors: the forward, and a backward that records
    no graph of its own (the usual backward)."""

    def __init__(self, xp):
        self.tanh = xp.tanh
        self.relu = lambda x: xp.maximum(x, 0)
        self.sigmoid = lambda x: _stable_sigmoid(xp, x)
        self.cat = lambda parts: xp.concatenate(parts, axis=1)
        # the core's products (numba's pool, BLAS on one thread), not NumPy's threaded BLAS,
        # whose spinning threads would slow the kernels that run next
        self.matmul = lambda a, b: _matmul_arrays(xp, a, b)


class _TensorMath:
    """The same math on tensors through core ops: a backward under create_graph recomputes the
    step from its inputs this way, so that its gradients have gradients of their own."""
    tanh, relu, sigmoid = staticmethod(ops.tanh), staticmethod(F.relu), staticmethod(ops.sigmoid)
    cat = staticmethod(lambda parts: ops.cat(parts, dim=1))
    matmul = staticmethod(ops.matmul)


def _hidden_gates(m, h, w_hh, b_hh):
    gates = m.matmul(h, w_hh.T)
    return gates if b_hh is None else gates + b_hh


def _rnn_forward(m, relu, gi, h, w_hh, b_hh):
    pre = gi + _hidden_gates(m, h, w_hh, b_hh)
    return (m.relu(pre) if relu else m.tanh(pre)),


def _rnn_backward(m, relu, dh_out, inputs, saved):
    _, h, w_hh, b_hh = inputs
    (h_out,) = saved
    dpre = dh_out * (h_out > 0) if relu else dh_out * (1 - h_out * h_out)
    return dpre, m.matmul(dpre, w_hh), m.matmul(dpre.T, h), (None if b_hh is None else dpre.sum(0))


def _lstm_forward(m, gi, h, c, w_hh, b_hh, w_hr):
    gates = gi + _hidden_gates(m, h, w_hh, b_hh)
    size = c.shape[-1]
    in_gate, forget_gate, out_gate = (m.sigmoid(gates[:, k * size:(k + 1) * size]) for k in (0, 1, 3))
    cell_input = m.tanh(gates[:, 2 * size:3 * size])
    c_out = forget_gate * c + in_gate * cell_input
    tanh_c = m.tanh(c_out)
    h_pre = out_gate * tanh_c
    h_out = h_pre if w_hr is None else m.matmul(h_pre, w_hr.T)
    return (h_out, c_out), (in_gate, forget_gate, cell_input, out_gate, tanh_c, h_pre)


def _lstm_backward(m, dh_out, dc_out, inputs, saved):
    _, h, c, w_hh, b_hh, w_hr = inputs
    in_gate, forget_gate, cell_input, out_gate, tanh_c, h_pre = saved
    dh_pre = dh_out if w_hr is None else m.matmul(dh_out, w_hr)
    dc = dc_out + dh_pre * out_gate * (1 - tanh_c * tanh_c)
    dgates = m.cat([dc * cell_input * in_gate * (1 - in_gate),
                    dc * c * forget_gate * (1 - forget_gate),
                    dc * in_gate * (1 - cell_input * cell_input),
                    dh_pre * tanh_c * out_gate * (1 - out_gate)])
    return (dgates, m.matmul(dgates, w_hh), dc * forget_gate, m.matmul(dgates.T, h),
            None if b_hh is None else dgates.sum(0), None if w_hr is None else m.matmul(dh_out.T, h_pre))


def _gru_forward(m, gi_rz, gi_n, h, w_hh, b_hh):
    gh = _hidden_gates(m, h, w_hh, b_hh)
    size = h.shape[-1]
    rz = m.sigmoid(gi_rz + gh[:, :2 * size])
    reset, update = rz[:, :size], rz[:, size:]
    gh_n = gh[:, 2 * size:]
    candidate = m.tanh(gi_n + reset * gh_n)
    return (candidate + update * (h - candidate),), (reset, update, candidate, gh_n)


def _gru_backward(m, dh_out, inputs, saved):
    _, _, h, w_hh, b_hh = inputs
    reset, update, candidate, gh_n = saved
    dn_pre = dh_out * (1 - update) * (1 - candidate * candidate)
    dr_pre = dn_pre * gh_n * reset * (1 - reset)
    dz_pre = dh_out * (h - candidate) * update * (1 - update)
    dgh = m.cat([dr_pre, dz_pre, dn_pre * reset])
    return (m.cat([dr_pre, dz_pre]), dn_pre, dh_out * update + m.matmul(dgh, w_hh), m.matmul(dgh.T, h),
            None if b_hh is None else dgh.sum(0))


class _Step(Function):
    """One recurrence step as one node: its forward on arrays, its backward in closed form
    (arrays in the usual backward; recomputed with core ops under create_graph). Composed of
    core ops a step was about 14 nodes, whose dispatch cost several times the step's arithmetic.
    `kind` is "tanh", "relu", "lstm" or "gru"; the tensors follow in that step's order (None
    for an absent bias or projection)."""

    @staticmethod
    def forward(ctx, kind, *tensors):
        ctx.kind = kind
        ctx.save_for_backward(*tensors)
        m = _ArrayMath(xp_of(tensors[0]))
        arrays = [None if t is None else t._data for t in tensors]
        outputs, ctx.saved_arrays = _forward(kind, m, arrays)
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensors
        if grad_mode.is_grad_enabled():
            values = list(inputs)
            _, saved = _forward(ctx.kind, _TensorMath, values)
            grads = [ops.zeros_like(_state_like(ctx.kind, values, k)) if g is None else g
                     for k, g in enumerate(grads)]
            return (None,) + tuple(_backward(ctx.kind, _TensorMath, grads, values, saved))
        xp = xp_of(inputs[0])
        values = [None if t is None else t._data for t in inputs]
        grads = [xp.zeros_like(_state_like(ctx.kind, values, k)) if g is None else g._data
                 for k, g in enumerate(grads)]
        result = _backward(ctx.kind, _ArrayMath(xp), grads, values, ctx.saved_arrays)
        return (None,) + tuple(None if r is None else _wrap(r) for r in result)


def _forward(kind, m, values):
    """(outputs, what the backward reads) of one step."""
    if kind in ("tanh", "relu"):
        outputs = _rnn_forward(m, kind == "relu", *values)
        return outputs, outputs
    if kind == "lstm":
        return _lstm_forward(m, *values)
    return _gru_forward(m, *values)


def _backward(kind, m, grads, values, saved):
    if kind in ("tanh", "relu"):
        return _rnn_backward(m, kind == "relu", grads[0], values, saved)
    if kind == "lstm":
        return _lstm_backward(m, grads[0], grads[1], values, saved)
    return _gru_backward(m, grads[0], values, saved)


def _state_like(kind, values, k):
    """The state the k-th output has the shape of (its gradient where none came back)."""
    if kind == "lstm":
        return values[1 + k]     # h (projected or not) and c
    return values[-3]


def _rnn_tanh_step(gi, state, w_hh, b_hh):
    return (_Step.apply("tanh", gi, state[0], w_hh, b_hh),)


def _rnn_relu_step(gi, state, w_hh, b_hh):
    return (_Step.apply("relu", gi, state[0], w_hh, b_hh),)


def _lstm_step(gi, state, w_hh, b_hh, w_hr=None):
    """gi: the input's share of the gates (i, f, g, o); state (h, c); w_hr projects h."""
    return tuple(_Step.apply("lstm", gi, state[0], state[1], w_hh, b_hh, w_hr))


def _gru_step(gi, state, w_hh, b_hh):
    """gi: the input's share (r and z gates, candidate n) as a pair; b_hh stays inside r * (.)."""
    return (_Step.apply("gru", gi[0], gi[1], state[0], w_hh, b_hh),)


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _run_direction(step, inputs, state, weights, batch_sizes, reverse):
    """Run `step` over the per-step inputs from `state`; return the step outputs in time order
    and the final state (for packed input, each sequence's state after its own last step)."""
    steps = len(inputs)
    outputs = [None] * steps
    if batch_sizes is None:
        for t in (reversed(range(steps)) if reverse else range(steps)):
            state = step(inputs[t], state, *weights)
            outputs[t] = state[0]
        return outputs, state
    if reverse:
        initial, rows = state, batch_sizes[-1]
        state = tuple(ops.narrow(s, 0, 0, rows) for s in initial)
        for t in reversed(range(steps)):
            if batch_sizes[t] > rows:
                state = tuple(ops.cat([s, ops.narrow(s0, 0, rows, batch_sizes[t] - rows)])
                              for s, s0 in zip(state, initial))
                rows = batch_sizes[t]
            state = step(inputs[t], state, *weights)
            outputs[t] = state[0]
        return outputs, state
    ended = []
    for t in range(steps):
        rows = state[0].shape[0]
        if batch_sizes[t] < rows:
            ended.append(tuple(ops.narrow(s, 0, batch_sizes[t], rows - batch_sizes[t]) for s in state))
            state = tuple(ops.narrow(s, 0, 0, batch_sizes[t]) for s in state)
        state = step(inputs[t], state, *weights)
        outputs[t] = state[0]
    if ended:   # sequences that ended earlier sit further down the batch
        state = tuple(ops.cat([s] + [e[k] for e in reversed(ended)]) for k, s in enumerate(state))
    return outputs, state


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrent network behind RNN, LSTM and GRU.

    `mode` is "RNN_TANH", "RNN_RELU", "LSTM" or "GRU". Layer k's parameters are
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} and (LSTM with proj_size > 0)
    weight_hr_l{k}, with a "_reverse" suffix for the backward direction.
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size

        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input_size)), ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(ops.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: the weights are used where they are (torch packs them for cuDNN only)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). Convert "
                             f"input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def _zero_hidden(self, input, batch):
        num_directions = 2 if self.bidirectional else 1
        return ops.zeros(self.num_layers * num_directions, batch, self.hidden_size, dtype=input.dtype,
                         device=input.device)

    def _check_hidden_dims(self, hx, batched):
        if batched and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if not batched and hx.dim() != 2:
            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")

    def _input_dim_error(self, dim):
        if self.mode.startswith("RNN"):
            return f"RNN: Expected input to be 2D or 3D, got {dim}D tensor instead"
        return f"{self.mode}: Expected input to be 2D or 3D, got {dim}D instead"

    def forward(self, input, hx=None):
        """input: (T, B, input_size) ((B, T, .) if batch_first), unbatched (T, input_size), or a
        PackedSequence; hx: the initial state(s), zeros when omitted. Returns (output, h_n), with
        h_n the pair (h_n, c_n) for an LSTM; a PackedSequence input gives a PackedSequence output."""
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        batched = True
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch = int(batch_sizes[0])
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                raise ValueError(self._input_dim_error(input.dim()))
            batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                self._check_hidden_dims(hx, batched)
                if not batched:
                    hx = tuple(s.unsqueeze(1) for s in hx) if lstm else hx.unsqueeze(1)
            max_batch = input.size(batch_dim)
        if hx is None:
            hx = self._zero_hidden(input, max_batch)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)

        output, states = self._run(input, tuple(hx) if lstm else (hx,), batch_sizes)
        hidden = states if lstm else states[0]
        if packed:
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            output = output.squeeze(batch_dim)
            hidden = tuple(s.squeeze(1) for s in hidden) if lstm else hidden.squeeze(1)
        return output, hidden

    def _run(self, input, states, batch_sizes):
        """The layers over time-major or packed input from the initial states (each (L*D, B, .));
        returns the last layer's output and the final states stacked as (L*D, B, .)."""
        sizes = None if batch_sizes is None else [int(n) for n in batch_sizes.tolist()]
        time_major = sizes is None and self.batch_first
        x = input.transpose(0, 1) if time_major else input
        num_directions = 2 if self.bidirectional else 1
        initial = [ops.unbind(s, 0) for s in states]
        finals = [[] for _ in states]
        step = _STEPS[self.mode]
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                inputs, weights = self._project(x, k, sizes)
                steps_out, final = _run_direction(step, inputs, tuple(s[k] for s in initial), weights, sizes,
                                                  reverse=direction == 1)
                outputs.append(ops.stack(steps_out) if sizes is None else ops.cat(steps_out))
                for kept, s in zip(finals, final):
                    kept.append(s)
            x = outputs[0] if num_directions == 1 else ops.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return (x.transpose(0, 1) if time_major else x), tuple(ops.stack(kept) for kept in finals)

    def _project(self, x, k, sizes):
        """Layer/direction k's input-to-hidden products for all steps (one matrix product), cut
        into steps, and the weights its recurrence step takes after the step input and state."""
        params = {name.rsplit("_l", 1)[0]: getattr(self, name) for name in self._all_weights[k]}
        b_ih, b_hh = params.get("bias_ih"), params.get("bias_hh")
        if self.mode == "GRU":      # b_hh's n-part is scaled by the reset gate: it stays in the step
            gi = F.linear(x, params["weight_ih"], b_ih)
            size = self.hidden_size
            inputs = tuple(zip(_SplitSteps.apply(ops.narrow(gi, -1, 0, 2 * size), sizes),
                               _SplitSteps.apply(ops.narrow(gi, -1, 2 * size, size), sizes)))
            return inputs, (params["weight_hh"], b_hh)
        gi = F.linear(x, params["weight_ih"], None if b_ih is None else b_ih + b_hh)
        weights = (params["weight_hh"], None)
        if self.mode == "LSTM":
            weights += (params.get("weight_hr"),)
        return _SplitSteps.apply(gi, sizes), weights

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)

    An Elman network: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:      # torch's positional order puts nonlinearity fourth
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)

    Gates i, f, g, o from x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh; c_t = f c_{t-1} + i g,
    h_t = o tanh(c_t), projected by W_hr when proj_size > 0. The state is the pair (h, c).
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def _zero_hidden(self, input, batch):
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        h = ops.zeros(self.num_layers * num_directions, batch, real_hidden_size, dtype=input.dtype,
                      device=input.device)
        c = ops.zeros(self.num_layers * num_directions, batch, self.hidden_size, dtype=input.dtype,
                      device=input.device)
        return h, c

    def _check_hidden_dims(self, hx, batched):
        want = 3 if batched else 2
        if hx[0].dim() != want or hx[1].dim() != want:
            kind = "batched 3-D" if batched else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got ({hx[0].dim()}-D, "
                               f"{hx[1].dim()}-D) tensors")


class GRU(RNNBase):
    """GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)

    r, z = sigmoid(W_i{r,z} x + b_i{r,z} + W_h{r,z} h + b_h{r,z}),
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) n + z h.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih (chunks * hidden, input), weight_hh
    (chunks * hidden, hidden), bias_ih and bias_hh (or None), all uniform in +-1/sqrt(hidden)."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        rows = num_chunks * hidden_size
        self.weight_ih = Parameter(ops.empty((rows, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(ops.empty((rows, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ops.empty(rows, device=device, dtype=dtype))
            self.bias_hh = Parameter(ops.empty(rows, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, name, input, hx):
        """Check the dims, add the batch dim to unbatched input and states; hx: a tuple or None."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    which = f"hx[{idx}]" if name == "LSTMCell" else "hidden"
                    raise ValueError(f"{name}: Expected {which} to be 1D or 2D, got {value.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = ops.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros,) * (2 if name == "LSTMCell" else 1)
        elif not batched:
            hx = tuple(s.unsqueeze(0) for s in hx)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for idx, value in enumerate(hx):
            if value.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{idx} batch size "
                                   f"{value.size(0)}")
            if value.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{idx} has inconsistent hidden_size: got {value.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, hx, batched


class RNNCell(RNNCellBase):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = self._batched("RNNCell", input, None if hx is None else (hx,))
        if self.nonlinearity == "tanh":
            step = _rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = _rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        (h,) = step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; hx and the result are the pair (h, c)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._batched("LSTMCell", input, hx)
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n as in GRU)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._batched("GRUCell", input, None if hx is None else (hx,))
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        size = self.hidden_size
        gi = (ops.narrow(gi, 1, 0, 2 * size), ops.narrow(gi, 1, 2 * size, size))
        (h,) = _gru_step(gi, hx, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
