"""`core.device`: where a tensor's array lives ("cpu", "cuda:0")."""


class device:
    """A device type and optional index, compared and printed as torch.device."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"invalid device string {type}:{idx!r}")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"unknown device type {type!r}: expected 'cpu' or 'cuda'")
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self._normal_index() == other._normal_index()

    def _normal_index(self):
        return 0 if self.type == "cuda" and self.index is None else self.index

    def __hash__(self):
        return hash((self.type, self._normal_index()))


def as_device(value):
    if value is None or isinstance(value, device):
        return value
    return device(value)


CPU = device("cpu")
