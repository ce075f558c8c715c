# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Sizes as polynomials of the dynamic axes, found by capturing at several sizes.

A captured graph holds plain integers where the program computed a size (`view(b, s, h, d)`,
`x[:, -s:]`, `arange(s)`). Which of them follow the dynamic axes, and how, is learned by
capturing the program again with each dynamic axis grown by one and two (and pairs of axes
grown together): every integer is then fitted as a polynomial of degree at most two in
the axes (b, s, b*s, s*s, ...) with integer coefficients, and the fit is checked on one
more capture at sizes none of the fits saw. A size the program computes some other way
(integer division, a maximum) fails that check and export says where.
"""
import itertools

import numpy as np


class Poly:
    """sum(coefficient * product of symbols): `terms` maps sorted symbol tuples to ints."""

    __slots__ = ("terms",)

    def __init__(self, terms):
        self.terms = {m: c for m, c in terms.items() if c}

    @classmethod
    def symbol(cls, name):
        return cls({(name,): 1})

    def constant(self):
        return self.terms.get((), 0)

    def symbols(self):
        return sorted({s for m in self.terms for s in m})

    def evaluate(self, sizes):
        return sum(c * int(np.prod([sizes[s] for s in m], dtype=np.int64)) for m, c in self.terms.items())

    def key(self):
        return tuple(sorted(self.terms.items()))

    def __eq__(self, other):
        return isinstance(other, Poly) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda t: (-len(t[0]), t[0])):
            name = "*".join(m)
            parts.append(str(c) if not m else name if c == 1 else f"{c}*{name}")
        return " + ".join(parts).replace("+ -", "- ") or "0"


def monomials(symbols):
    """Every product of at most two symbols, and the empty product."""
    out = [()]
    out += [(s,) for s in symbols]
    out += [tuple(sorted(p)) for p in itertools.combinations_with_replacement(symbols, 2)]
    return out


def assignments(base):
    """Sizes to capture at: the example's, each axis +1 and +2, each pair +1 +1; then a check.

    These points determine a polynomial of degree two uniquely; the last one verifies it.
    """
    names = list(base)
    fit = [dict(base)]
    for step in (1, 2):
        for n in names:
            fit.append({**base, n: base[n] + step})
    for a, b in itertools.combinations(names, 2):
        fit.append({**base, a: base[a] + 1, b: base[b] + 1})
    check = {n: base[n] + 3 + i for i, n in enumerate(names)}
    return fit, check


def fit(values, sizes):
    """The Poly taking values[i] at sizes[i] (the last entry is the check), or None."""
    symbols = sorted(sizes[0])
    monos = monomials(symbols)
    rows = np.array([[np.prod([s[n] for n in m]) for m in monos] for s in sizes[:-1]], dtype=np.float64)
    coeffs, *_ = np.linalg.lstsq(rows, np.array(values[:-1], dtype=np.float64), rcond=None)
    poly = Poly({m: int(round(c)) for m, c in zip(monos, coeffs)})
    if all(poly.evaluate(s) == v for s, v in zip(sizes, values)):
        return poly
    return None
