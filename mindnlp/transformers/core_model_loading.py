# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Checkpoint key conversion, as Hugging Face v5 applies it while loading and reverses it on saving.

A `WeightRenaming` maps checkpoint keys matching one of its source patterns (regular
expressions) to its target pattern. A `WeightConverter` builds one model tensor from many
checkpoint tensors: mixture-of-experts checkpoints are published with one Linear per expert
(`experts.3.gate_proj.weight`) while HF v5's modules hold every expert in one 3-D parameter
(`experts.gate_up_proj`). Families whose published checkpoints differ from their modules
register conversions in `conversion_mapping`; loading applies them, and `save_pretrained`
reverses them so that saved files keep the published layout.
"""
import re
from dataclasses import dataclass, field

from .. import core


def process_target_pattern(pattern):
    """A target pattern made usable as a source when the mapping is reversed.

    Anchors (^, $) and lookarounds are dropped, and a capturing group becomes a \\1
    back-reference. Returns (pattern, the captured group or None).
    """
    pattern = pattern.removeprefix("^").removesuffix("$")
    pattern = re.sub(r"\(\?.+\)", "", pattern)
    group = re.search(r"\(.+?\)", pattern)
    if group is None:
        return pattern, None
    return pattern.replace(group.group(0), r"\1", 1), group.group(0)


@dataclass
class WeightRenaming:
    """Rename checkpoint keys that match `source_patterns` to `target_patterns[0]`."""

    source_patterns: list = field()
    target_patterns: list = field()
    compiled_sources: re.Pattern = field(init=False, repr=False)

    def __post_init__(self):
        self.source_patterns = [self.source_patterns] if isinstance(self.source_patterns, str) \
            else list(self.source_patterns)
        self.target_patterns = [self.target_patterns] if isinstance(self.target_patterns, str) \
            else list(self.target_patterns)
        groups = set()
        for i, pattern in enumerate(self.target_patterns):
            self.target_patterns[i], group = process_target_pattern(pattern)
            if group is not None:
                groups.add(group)
        if len(groups) > 1:
            raise ValueError(f"Multiple different capturing groups found in target_patterns: {groups}. All target "
                             "patterns must use the same capturing group pattern.")
        group = groups.pop() if groups else None
        for i, pattern in enumerate(self.source_patterns):
            if r"\1" in pattern:
                if group is None:
                    raise ValueError(f"Source pattern '{pattern}' contains \\1 backreference, but no capturing groups "
                                     "found in target_patterns.")
                self.source_patterns[i] = pattern.replace(r"\1", group, 1)
        wildcard = r"\..*\."  # ".*." between two dots stands for any run of module names
        branches = [f"(?P<g{i}>{p.replace('.*.', wildcard)})" for i, p in enumerate(self.source_patterns)]
        self.compiled_sources = re.compile("|".join(branches))

    def rename_source_key(self, source_key):
        """(renamed key, the source pattern that matched) or (key unchanged, None)."""
        match = self.compiled_sources.search(source_key)
        if match is None:
            return source_key, None
        name = next(n for n, v in match.groupdict().items() if v is not None)
        replacement = self.target_patterns[0]
        if r"\1" in replacement:
            replacement = replacement.replace(r"\1", match.group(self.compiled_sources.groupindex[name] + 1))
        return source_key.replace(match.group(0), replacement), self.source_patterns[int(name[1:])]

    def reverse_transform(self):
        return WeightRenaming(source_patterns=self.target_patterns, target_patterns=self.source_patterns)


def rename_key(key, conversions):
    """Apply every renaming of `conversions` to one key, in order (converters are left to `ConvertedWeights`)."""
    for conversion in conversions:
        if isinstance(conversion, WeightRenaming):
            key, _ = conversion.rename_source_key(key)
    return key


class MergeModulelist:
    """Stack the tensors of a ModuleList's members (`experts.0` ... `experts.N-1`) along `dim`."""

    def __init__(self, dim=0):
        self.dim = dim

    def convert(self, pieces):
        return [core.stack(per_module, dim=self.dim) for per_module in pieces]

    def reverse(self, tensors, sources):
        return [list(core.unbind(tensor, dim=self.dim)) for tensor in tensors]


class Concatenate:
    """Join the (stacked) tensors of the source patterns along `dim`: gate and up into gate_up."""

    def __init__(self, dim=0):
        self.dim = dim

    def convert(self, tensors):
        return [core.cat(tensors, dim=self.dim)]

    def reverse(self, tensors, sources):
        """The joined tensor cut back into one equal part per source pattern."""
        return list(core.chunk(tensors[0], sources, dim=self.dim))


@dataclass
class WeightConverter:
    """Many checkpoint tensors into one model tensor, and back on saving.

    Each source pattern holds one `*`, the index of a ModuleList member (an expert); the
    `operations` run in order on the tensors gathered per source pattern and per index
    (MergeModulelist stacks each source's members, Concatenate joins the sources).
    """

    source_patterns: list
    target_patterns: str
    operations: list

    def __post_init__(self):
        self.source_patterns = [self.source_patterns] if isinstance(self.source_patterns, str) \
            else list(self.source_patterns)
        if not isinstance(self.target_patterns, str):
            (self.target_patterns,) = self.target_patterns
        self._sources = [re.compile(re.escape(p).replace(r"\*", r"(\d+)")) for p in self.source_patterns]
        self._target = re.compile(re.escape(self.target_patterns) + "$")

    def members(self, target_shape):
        """How many ModuleList members make the model tensor of this shape."""
        return target_shape[next(op.dim for op in self.operations if isinstance(op, MergeModulelist))]

    def match_source(self, key):
        """(target key, source index, member index) for a checkpoint key this converter takes, else None."""
        for source_index, pattern in enumerate(self._sources):
            match = pattern.search(key)
            if match is not None:
                target = key[: match.start()] + self.target_patterns + key[match.end():]
                return target, source_index, int(match.group(1))
        return None

    def convert(self, pieces):
        """pieces[source][member] → the model's tensor."""
        for operation in self.operations:
            pieces = operation.convert(pieces)
        (tensor,) = pieces
        return tensor

    def split(self, key, tensor):
        """A model tensor back into the checkpoint's tensors ({key: tensor}), or None if `key` is not a target."""
        if self._target.search(key) is None:
            return None
        pieces = [tensor]
        for operation in reversed(self.operations):
            pieces = operation.reverse(pieces, len(self.source_patterns))
        stem = key[: len(key) - len(self.target_patterns)]
        return {stem + source.replace("*", str(i)): member
                for source, per_module in zip(self.source_patterns, pieces) for i, member in enumerate(per_module)}


class ConvertedWeights:
    """Gathers the checkpoint tensors of each converted model tensor as the shards stream in.

    A member's tensors may sit in different shards (Mixtral-8x7B spreads its experts over
    them), so each piece is kept until the last one arrives and the model tensor is built.
    """

    def __init__(self, conversions):
        self.converters = [c for c in conversions if isinstance(c, WeightConverter)]
        self._pending = {}

    def match(self, key):
        """(converter, target key, source index, member index) for a key to convert, else None."""
        for converter in self.converters:
            found = converter.match_source(key)
            if found is not None:
                return (converter,) + found
        return None

    def add(self, converter, target, source_index, member_index, tensor, members):
        """Keep one piece; return the model tensor once all `members` of every source are in, else None."""
        pieces = self._pending.setdefault(target, [{} for _ in converter.source_patterns])
        pieces[source_index][member_index] = tensor
        if any(len(per_source) < members for per_source in pieces):
            return None
        del self._pending[target]
        return converter.convert([[per_source[i] for i in range(members)] for per_source in pieces])

    def incomplete(self):
        """Targets some of whose pieces never arrived."""
        return list(self._pending)


def revert_conversions(state_dict, conversions):
    """A model's state dict in the checkpoint layout `conversions` load from: converted tensors
    split back into their pieces, then the renamings reversed."""
    reverse = [c.reverse_transform() for c in conversions if isinstance(c, WeightRenaming)][::-1]
    converters = [c for c in conversions if isinstance(c, WeightConverter)]
    reverted = {}
    for key, value in state_dict.items():
        pieces = next((p for p in (c.split(key, value) for c in converters) if p is not None), {key: value})
        reverted.update({rename_key(k, reverse): v for k, v in pieces.items()})
    return reverted
