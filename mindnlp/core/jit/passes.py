"""Passes on a captured Graph, run before lowering."""


def optimize(graph):
    """Run the passes in order."""
