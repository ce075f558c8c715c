"""Checkpoint key renaming, as Hugging Face v5 applies it while loading and reverses it on saving.

A `WeightRenaming` maps checkpoint keys matching one of its source patterns (regular
expressions) to its target pattern. Families whose published checkpoints name weights
differently from their modules register renamings in `conversion_mapping`; loading applies
them, and `save_pretrained` reverses them so that saved files keep the published names.
"""
import re
from dataclasses import dataclass, field


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
    """Apply every renaming of `conversions` to one key, in order."""
    for conversion in conversions:
        key, _ = conversion.rename_source_key(key)
    return key
