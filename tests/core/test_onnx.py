"""core.onnx.export: ops round-trip through onnxruntime equal to eager, sizes follow dynamic
axes, torch.onnx.export's calling contract, and the errors for what ONNX cannot express."""
import io
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.nn import functional as F
from mindnlp.core.onnx import OnnxExporterError, UnsupportedOperatorError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _inputs(seed, *shapes):
    rng = np.random.default_rng(seed)
    return tuple(core.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes)


def _run(model_bytes, arrays):
    session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), arrays)})


def _flat(value):
    if isinstance(value, core.Tensor):
        return [value.numpy()]
    if isinstance(value, dict):
        value = list(value.values())
    return [a for v in value for a in _flat(v)]


def _round_trip(fn, args, atol=1e-5, **kwargs):
    buf = io.BytesIO()
    core.onnx.export(fn, args, buf, **kwargs)
    ours = _run(buf.getvalue(), [a.numpy() for a in args])
    with core.no_grad():
        expected = _flat(fn(*args))
    assert len(ours) == len(expected)
    for got, want in zip(ours, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, atol=atol, rtol=1e-5)
    return buf.getvalue()


OPS = {
    "arith": (lambda a, b: (a + b) * 2.0 - b / (a.abs() + 1.0), (3, 4), (3, 4)),
    "broadcast_pow": (lambda a, b: (a * b - 1) ** 2 + a.pow(3.0), (3, 4), (4,)),
    "unary": (lambda a: (a.exp(), a.tanh(), a.sigmoid(), a.abs().sqrt(), a.abs().rsqrt(), a.clamp(-0.5, 0.5),
                         a.sin(), a.cos(), core.erf(a), -a, a.abs().log1p(), a.remainder(0.7)), (5, 6)),
    "reductions": (lambda a: (a.sum(-1), a.mean(0, keepdim=True), a.amax(-1), a.max(-1).values, a.max(-1).indices,
                              a.argmax(-1), a.var(-1), a.std(0), core.logsumexp(a, -1), a.cumsum(0), a.norm(dim=-1)),
                   (4, 5)),
    "shapes": (lambda a: (a.view(2, 10), a.transpose(0, 1).contiguous(), a.reshape(-1)[3:9], a.unsqueeze(0).expand(
        3, 4, 5), a.permute(1, 0)[::2], core.cat([a, a], 1), core.stack([a, a]), a.flip(0), a[..., 1], a[None, 2:, -1],
        a.squeeze(), a.repeat(2, 1), F.pad(a, (1, 2), value=0.5), a.unfold(1, 3, 1), a.unfold(0, 2, 2)), (4, 5)),
    "indexing": (lambda a: (a[core.tensor([0, 2])], a[:, core.tensor([1, 3])],
                            a[core.tensor([0, 3]), core.tensor([1, 2])], a.gather(1, core.tensor([[0], [1], [2], [3]])),
                            a.index_select(0, core.tensor([3, 1]))),
                 (4, 5)),
    "compare_logic": (lambda a, b: (core.where(a > b, a, b), a >= b, a < 0.5, a <= b, a == a, a != b,
                                    (a < 0) & (b >= 0), (a < 0) | (b < 0), ~(a > 0), a.masked_fill(a > 0, 0.0),
                                    (a > 0).all(-1), (a > 0).any(0)), (4, 5), (4, 5)),
    "linalg": (lambda a, b: (a @ b, core.bmm(a[None], b[None]), core.einsum("ij,jk->ik", a, b)), (3, 4), (4, 2)),
    "softmax_norms": (lambda a: (F.softmax(a, -1), F.log_softmax(a, 0), F.softmin(a, -1), F.layer_norm(a, (5,)),
                                 F.gelu(a), F.gelu(a, approximate="tanh"), F.silu(a), F.relu(a), F.normalize(a, dim=-1),
                                 F.rms_norm(a, (5,), eps=1e-6)), (4, 5)),
    "attention": (lambda q, k, v: (F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                   F.scaled_dot_product_attention(q, k, v, attn_mask=q[..., :1] > 0)),
                  (1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4)),
    "casts_and_creation": (lambda a: ((a > 0).long().cumsum(-1), a.to(core.float16).float(), core.tril(a, -1),
                                      core.triu(a), a + core.arange(a.shape[-1]) * core.ones(a.shape)), (4, 5)),
    "sorting_and_scatter": (lambda a: (a.sort(-1).values, a.sort(0, descending=True).indices, a.topk(3).values,
                                       a.topk(2, dim=0, largest=False).indices, (a > 0).float().argsort(-1, stable=True),
                                       core.zeros(4, 5).scatter(1, a.topk(2).indices, 1.0),
                                       a.scatter_add(0, a.argsort(0), a * 2.0)), (4, 5)),
    "bfloat16_arithmetic": (lambda a, b: ((a.to(core.bfloat16) * b.to(core.bfloat16)).float(),
                                          (a.to(core.bfloat16) + 1.5).float()), (4, 5), (4, 5)),
    "convolution_and_pooling": (lambda a, w: (F.conv1d(a, w, padding=1), F.conv1d(a, w, stride=2),
                                              F.conv2d(a[:, :, None].expand(2, 3, 4, 8), w[:, :, None].expand(6, 3, 2, 3),
                                                       stride=(1, 2), padding=(1, 0)),
                                              F.max_pool1d(a, 3, stride=2, padding=1)),
                                (2, 3, 8), (6, 3, 3)),
    "average_pooling": (lambda a: (F.avg_pool1d(a, 3, stride=2, padding=1),
                                   F.avg_pool1d(a, 3, stride=2, padding=1, count_include_pad=False),
                                   F.avg_pool2d(a[:, None], 2, ceil_mode=True), F.adaptive_avg_pool1d(a, 3)),
                        (2, 3, 7)),
    "rounding": (lambda a: (core.round(a * 3), (a * 30).round(decimals=-1), a.round(decimals=2), core.floor(a),
                            core.ceil(a), core.trunc(a * 3)), (4, 5)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_battery_round_trips_through_onnxruntime(name):
    fn, *shapes = OPS[name]
    _round_trip(fn, _inputs(0, *shapes))


def test_modules_round_trip_with_parameters_as_named_initializers():
    core.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3), nn.Softmax(-1))
    data = _round_trip(model, _inputs(1, (5, 4)))
    names = {t.name for t in onnx.load_from_string(data).graph.initializer}
    assert {"0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias"} <= names


LAYERS = {
    "conv3d": (lambda: nn.Conv3d(2, 3, (3, 2, 3), stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1)),
               (2, 2, 6, 5, 4)),
    "conv_transpose1d": (lambda: nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1), (2, 3, 5)),
    "conv_transpose2d": (lambda: nn.ConvTranspose2d(3, 4, (3, 2), stride=(2, 3), padding=(1, 0), dilation=(1, 2)),
                         (1, 3, 4, 5)),
    "conv_transpose3d": (lambda: nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1), (1, 2, 3, 4, 3)),
    "pools3d": (lambda: nn.Sequential(nn.MaxPool3d(2, stride=1, padding=1), nn.AvgPool3d((2, 3, 2), stride=2),
                                      nn.AdaptiveAvgPool3d(2)), (2, 3, 6, 7, 6)),
    "instance_and_group_norm": (lambda: nn.Sequential(nn.InstanceNorm2d(4, affine=True), nn.GroupNorm(2, 4),
                                                      nn.InstanceNorm2d(4)), (2, 4, 5, 3)),
    "instance_norm3d": (lambda: nn.InstanceNorm3d(3, affine=True), (2, 3, 4, 3, 5)),
    "lstm_bidirectional_projected": (lambda: nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3,
                                                     batch_first=True), (2, 5, 4)),
    "gru_bidirectional": (lambda: nn.GRU(4, 5, num_layers=2, bidirectional=True), (6, 2, 4)),
    "rnn_relu": (lambda: nn.RNN(4, 5, nonlinearity="relu", bias=False, batch_first=True), (2, 4, 4)),
    "transformer": (lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True), (2, 5, 8), (2, 3, 8)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_round_trip_through_onnxruntime(name):
    """3-d convolutions and pools, transposed convolutions, instance/group norms and the
    recurrent layers (their time loop unrolled at the example's length) export as torch's do."""
    factory, *shapes = LAYERS[name]
    core.manual_seed(0)
    model = factory()
    if isinstance(model, nn.Module):
        model.eval()
    _round_trip(model, _inputs(3, *shapes))


def _shape_program(x, mask):
    """Sizes computed from shapes: a reshape of products, a slice from the end, ranges, fills."""
    b, s, h = x.shape
    flat = x.reshape(b * s, h).reshape(b, s, 2, h // 2).transpose(1, 2).reshape(b, 2, s * (h // 2))
    positions = core.arange(s, dtype=core.float32)[None, :, None]
    causal = core.tril(core.ones(s, s, dtype=core.bool))
    scores = (x @ x.transpose(1, 2)).masked_fill(~causal, -1e4) + (1 - mask[:, None, :].float()) * -1e4
    tail = x[:, -(s - 1):] + core.full((b, s - 1, h), 0.5)
    return flat.sum(1), (x + positions)[:, 1:], F.softmax(scores, -1), tail


def test_dynamic_axes_follow_the_inputs_sizes():
    x, = _inputs(0, (2, 5, 6))
    mask = core.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    buf = io.BytesIO()
    axes = {0: "batch", 1: "seq"}
    core.onnx.export(_shape_program, (x, mask), buf, input_names=["x", "mask"],
                     dynamic_axes={"x": axes, "mask": axes, "output_0": {0: "batch"}})
    model = onnx.load_from_string(buf.getvalue())
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input]
    assert dims == [["batch", "seq", 6], ["batch", "seq"]]
    for batch, seq in [(2, 5), (1, 3), (4, 9)]:
        x, = _inputs(batch + seq, (batch, seq, 6))
        mask = core.tensor((np.arange(seq)[None, :] < np.arange(seq, seq - batch, -1)[:, None]).astype(np.int64))
        ours = _run(buf.getvalue(), [x.numpy(), mask.numpy()])
        for got, want in zip(ours, _flat(_shape_program(x, mask))):
            np.testing.assert_allclose(got, want, atol=1e-5)


def _step_with_past(x, past):
    """A decoder-like step: positions continue after the past, keys grow by the new tokens."""
    keys = core.cat([past, x], dim=1)
    positions = core.arange(past.shape[1], keys.shape[1], dtype=core.float32)[None, :, None]
    return keys, x + positions


def test_an_axis_named_as_a_sum_follows_its_terms():
    x, past = _inputs(0, (2, 3, 4), (2, 5, 4))
    buf = io.BytesIO()
    core.onnx.export(_step_with_past, (x, past), buf, input_names=["x", "past"], output_names=["keys", "moved"],
                     dynamic_axes={"x": {1: "new"}, "past": {1: "past"}})
    dims = [d.dim_param or d.dim_value for d in onnx.load_from_string(buf.getvalue()).graph.output[0].type.tensor_type.shape.dim]
    assert dims == [2, "new + past", 4]
    for new, old in [(1, 7), (4, 2)]:
        x, past = _inputs(new, (2, new, 4), (2, old, 4))
        for got, want in zip(_run(buf.getvalue(), [x.numpy(), past.numpy()]), _flat(_step_with_past(x, past))):
            np.testing.assert_allclose(got, want, atol=1e-6)

    def masked(x, past, mask):
        return core.cat([past, x], dim=1) * mask[..., None]

    x, past, mask = _inputs(3, (2, 3, 4), (2, 5, 4), (2, 8))
    buf = io.BytesIO()
    core.onnx.export(masked, (x, past, mask), buf, input_names=["x", "past", "mask"],
                     dynamic_axes={"x": {1: "new"}, "past": {1: "past"}, "mask": {1: "past + new"}})
    arrays = _inputs(4, (2, 1, 4), (2, 6, 4), (2, 7))
    got, = _run(buf.getvalue(), [a.numpy() for a in arrays])
    np.testing.assert_allclose(got, masked(*arrays).numpy(), atol=1e-6)
    with pytest.raises(OnnxExporterError, match="'past \\+ cached' adds \\['cached'\\]"):
        core.onnx.export(masked, (x, past, mask), io.BytesIO(), input_names=["x", "past", "mask"],
                         dynamic_axes={"past": {1: "past"}, "mask": {1: "past + cached"}})
    with pytest.raises(OnnxExporterError, match="is 8 long in the example, not the sum"):
        core.onnx.export(masked, (x, past, mask), io.BytesIO(), input_names=["x", "past", "mask"],
                         dynamic_axes={"x": {1: "new"}, "past": {1: "past"}, "mask": {1: "past + new + 1"}})


def test_without_dynamic_axes_the_sizes_are_fixed():
    x, = _inputs(0, (2, 3))
    data = _round_trip(lambda t: t.reshape(6) * 2, (x,))
    dims = [d.dim_value for d in onnx.load_from_string(data).graph.input[0].type.tensor_type.shape.dim]
    assert dims == [2, 3]


def test_export_contract(tmp_path):
    model = nn.Linear(3, 2)
    x = core.ones(4, 3)
    path = tmp_path / "linear.onnx"
    proto = core.onnx.export(model, x, str(path), input_names=["features"], output_names=["scores"],
                             dynamic_axes={"features": [0], "scores": {0: "n"}}, opset_version=19)
    assert isinstance(proto, onnx.ModelProto) and proto.opset_import[0].version == 19
    loaded = onnx.load(str(path))
    assert [i.name for i in loaded.graph.input] == ["features"]
    assert [o.name for o in loaded.graph.output] == ["scores"]
    assert loaded.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "features_dynamic_axes_1"
    assert loaded.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "n"
    (out,) = _run(str(path), [np.ones((7, 3), np.float32)])
    np.testing.assert_allclose(out, model(core.ones(7, 3)).detach().numpy(), atol=1e-6)
    assert os.listdir(tmp_path) == ["linear.onnx"]


def test_keyword_arguments_as_a_trailing_dict_or_kwargs():
    def fn(a, scale=None, shift=0.0):
        return a * scale + shift

    a, scale = _inputs(0, (2, 3), (3,))
    for args, kwargs in [((a, {"scale": scale, "shift": 1.0}), None), ((a,), {"scale": scale, "shift": 1.0})]:
        buf = io.BytesIO()
        core.onnx.export(fn, args, buf, kwargs=kwargs)
        session = ort.InferenceSession(buf.getvalue())
        assert [i.name for i in session.get_inputs()] == ["a", "scale"]
        (out,) = session.run(None, {"a": a.numpy(), "scale": scale.numpy()})
        np.testing.assert_allclose(out, (a * scale + 1.0).numpy(), atol=1e-6)


def test_bad_arguments_are_refused(tmp_path):
    x = core.ones(2, 3)
    with pytest.raises(ValueError, match="opset_version 13"):
        core.onnx.export(lambda t: t + 1, (x,), io.BytesIO(), opset_version=13)
    with pytest.raises(ValueError, match="out of range"):
        core.onnx.export(lambda t: t + 1, (x,), io.BytesIO(), input_names=["t"], dynamic_axes={"t": [2]})
    with pytest.raises(ValueError, match="neither inputs"):
        core.onnx.export(lambda t: t + 1, (x,), io.BytesIO(), dynamic_axes={"nope": [0]})
    with pytest.raises(TypeError, match="args must be"):
        core.onnx.export(lambda t: t + 1, "x", io.BytesIO())


def test_unsupported_op_names_the_op_and_where_it_was_called(tmp_path):
    def rolls(t):
        return core.roll(t, 1, 0)

    path = tmp_path / "model.onnx"
    path.write_bytes(b"previous")
    with pytest.raises(UnsupportedOperatorError, match=r"'Roll'.*test_onnx.py:\d+ in rolls"):
        core.onnx.export(rolls, (core.ones(3, 2),), str(path))
    assert path.read_bytes() == b"previous" and os.listdir(tmp_path) == ["model.onnx"]


def test_unsupported_op_inside_a_module_names_the_module():
    class Block(nn.Module):
        def forward(self, t):
            return core.roll(t, 1, 0)

    model = nn.Sequential(nn.Identity(), Block())
    with pytest.raises(UnsupportedOperatorError, match=r"'Roll'.* at 1 \("):
        core.onnx.export(model, (core.ones(3, 2),), io.BytesIO())


def test_data_dependent_control_flow_fails_with_the_reason():
    def branches(t):
        return t * 2 if t.sum().tolist() > 0 else t

    with pytest.raises(OnnxExporterError, match="data-dependent control flow"):
        core.onnx.export(branches, (core.ones(3),), io.BytesIO())


def test_item_branch_warns_that_the_example_branch_is_kept():
    def branches(t):
        return t * 2 if t.sum().item() > 0 else t

    with pytest.warns(UserWarning, match="follows the branch the example took"):
        data = core.onnx.export(branches, (core.ones(3),), io.BytesIO()).SerializeToString()
    np.testing.assert_allclose(_run(data, [np.ones(3, np.float32)])[0], 2 * np.ones(3))


def test_a_size_that_is_no_polynomial_of_the_axes_is_refused():
    with pytest.raises(OnnxExporterError, match="not a polynomial"):
        core.onnx.export(lambda t: t.reshape(-1)[: t.shape[0] // 2], (core.ones(6, 2),), io.BytesIO(),
                         input_names=["t"], dynamic_axes={"t": [0]})


def test_control_flow_on_sizes_is_refused():
    def by_size(t):
        return t.exp() if t.shape[0] % 2 else t.sin()

    with pytest.raises(OnnxExporterError, match="control flow that depends on the input size"):
        core.onnx.export(by_size, (core.ones(4, 2),), io.BytesIO(), input_names=["t"], dynamic_axes={"t": [0]})


def _with_static_constants(x, mask):
    """_shape_program plus a table built from the fixed hidden size, which folding precomputes."""
    table = (core.arange(x.shape[-1]).float() / 3).exp().cumsum(0)
    return _shape_program(x, mask) + (x * table,)


def test_without_constant_folding_the_constants_ops_are_exported():
    x, = _inputs(0, (2, 5, 6))
    mask = core.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    folded, unfolded = io.BytesIO(), io.BytesIO()
    for buf, fold in ((folded, True), (unfolded, False)):
        core.onnx.export(_with_static_constants, (x, mask), buf, input_names=["x", "mask"], do_constant_folding=fold,
                         dynamic_axes={"x": [0, 1], "mask": [0, 1]})
    sizes = [len(onnx.load_from_string(b.getvalue()).graph.node) for b in (folded, unfolded)]
    assert sizes[0] < sizes[1]
    x, = _inputs(1, (3, 4, 6))
    mask = core.ones(3, 4, dtype=core.long)
    for buf in (folded, unfolded):
        for got, want in zip(_run(buf.getvalue(), [x.numpy(), mask.numpy()]), _flat(_with_static_constants(x, mask))):
            np.testing.assert_allclose(got, want, atol=1e-5)
