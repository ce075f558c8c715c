"""The hot ops of transformer models, side by side with PyTorch when installed.

    python benchmarks/nn_ops.py [--repeats 5] [--only sdpa,softmax,activations] [--no-torch]

scaled_dot_product_attention at BERT/GPT-2 shapes (heads 12, head dim 64, batch 1-8,
sequence 128-512, causal), softmax over attention scores, cross_entropy over a language
model's logits (vocab 32000), GELU/SiLU over MLP activations, layer_norm over a batch
of BERT tokens, recurrent layers (LSTM, GRU) and a TransformerEncoderLayer, each forward
only and forward + backward. Figures are the best of the
repeats of one call, in milliseconds (the least disturbed by other processes); the ratio is
mindnlp time / torch time in the same run (torch and mindnlp each use their default thread
counts: one per usable core).
"""
import argparse
import time

import numpy as np

from mindnlp import core
from mindnlp.core.nn import functional as core_functional

try:
    import torch
except ImportError:  # the table then has mindnlp's column only
    torch = None


def _functional(lib):
    return core_functional if lib is core else lib.nn.functional


def _sdpa_case(batch, seq):
    def make(lib, rng, grad):
        q, k, v = (lib.tensor(rng.standard_normal((batch, 12, seq, 64)).astype(np.float32), requires_grad=grad)
                   for _ in range(3))
        return (q, k, v), lambda: _functional(lib).scaled_dot_product_attention(q, k, v, is_causal=True)
    return f"sdpa causal b{batch} h12 s{seq} d64", make


def _softmax_case(batch, seq):
    def make(lib, rng, grad):
        x = lib.tensor(rng.standard_normal((batch, 12, seq, seq)).astype(np.float32), requires_grad=grad)
        return (x,), lambda: _functional(lib).softmax(x, dim=-1)
    return f"softmax (b{batch}, 12, {seq}, {seq})", make


def _cross_entropy_case(tokens, vocab=32000):
    def make(lib, rng, grad):
        logits = lib.tensor(rng.standard_normal((tokens, vocab)).astype(np.float32), requires_grad=grad)
        target = rng.integers(0, vocab, tokens)
        target[::7] = -100
        target = lib.tensor(target)
        return (logits,), lambda: _functional(lib).cross_entropy(logits, target, label_smoothing=0.1)
    return f"cross_entropy ({tokens}, {vocab})", make


def _elementwise_case(name, rows, cols, call):
    def make(lib, rng, grad):
        x = lib.tensor(rng.standard_normal((rows, cols)).astype(np.float32), requires_grad=grad)
        return (x,), lambda: call(_functional(lib), x)
    return f"{name} ({rows}, {cols})", make


def _layer_norm_case(rows, width):
    def make(lib, rng, grad):
        x = lib.tensor(rng.standard_normal((rows, width)).astype(np.float32), requires_grad=grad)
        weight = lib.tensor(rng.standard_normal(width).astype(np.float32), requires_grad=grad)
        bias = lib.tensor(rng.standard_normal(width).astype(np.float32), requires_grad=grad)
        return (x, weight, bias), lambda: _functional(lib).layer_norm(x, (width,), weight, bias)
    return f"layer_norm ({rows}, {width})", make


def _module_case(name, build, shape):
    """A layer of lib.nn (built by `build`) on one random input; a recurrent layer's output
    sequence stands for its (output, state) tuple."""
    def make(lib, rng, grad):
        module = build(lib.nn)
        x = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=grad)

        def call():
            out = module(x)
            return out[0] if isinstance(out, tuple) else out
        return (x,), call
    return name, make


CASES = {
    "sdpa": [_sdpa_case(b, s) for b, s in ((1, 128), (1, 512), (8, 128), (8, 512))],
    "softmax": [_softmax_case(b, s) for b, s in ((1, 128), (8, 512))],
    "cross_entropy": [_cross_entropy_case(t) for t in (512, 2048)],
    "activations": [_elementwise_case("gelu", 4096, 1536, lambda f, x: f.gelu(x)),
                    _elementwise_case("gelu tanh", 4096, 1536, lambda f, x: f.gelu(x, approximate="tanh")),
                    _elementwise_case("silu", 512, 1536, lambda f, x: f.silu(x))],
    "layer_norm": [_layer_norm_case(4096, 384)],
    "recurrent": [
        _module_case("LSTM 2 layers bidir s50 b16 64->128",
                     lambda nn: nn.LSTM(64, 128, num_layers=2, bidirectional=True), (50, 16, 64)),
        _module_case("GRU s100 b8 256->256", lambda nn: nn.GRU(256, 256), (100, 8, 256)),
    ],
    "transformer_layer": [
        _module_case("TransformerEncoderLayer b8 s128 d256",
                     lambda nn: nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True),
                     (8, 128, 256)),
    ],
}


def _time(make, lib, backward, repeats):
    rng = np.random.default_rng(0)
    inputs, call = make(lib, rng, backward)
    grad = None
    samples = []
    for _ in range(repeats + 1):  # the first run warms caches and allocators
        for x in inputs:
            x.grad = None
        start = time.perf_counter()
        out = call()
        if backward:
            if grad is None:
                grad = lib.ones_like(out)
            out.backward(grad)
        samples.append(time.perf_counter() - start)
    return min(samples[1:]) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated groups: " + ",".join(CASES))
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    groups = [g for g in args.only.split(",") if g] or list(CASES)
    use_torch = torch is not None and not args.no_torch
    header = f"{'op':38s} {'pass':8s} {'mindnlp ms':>11s}"
    if use_torch:
        header += f" {'torch ms':>9s} {'ratio':>6s}"
    print(header)
    print("-" * len(header))
    for group in groups:
        for name, make in CASES[group]:
            for backward in (False, True):
                ours = _time(make, core, backward, args.repeats)
                line = f"{name:38s} {'fwd+bwd' if backward else 'fwd':8s} {ours:11.2f}"
                if use_torch:
                    theirs = _time(make, torch, backward, args.repeats)
                    line += f" {theirs:9.2f} {ours / theirs:6.2f}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
