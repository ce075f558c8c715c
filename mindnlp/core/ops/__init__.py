# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The operator set, each op written once against the backend's array module."""
from .conversion import cast, clone, contiguous, to_device
from .creation import *  # noqa: F401,F403  (the creation functions are the public API)
from .creation import range_
from .elementwise import *  # noqa: F401,F403
from .elementwise import abs, pow, round  # shadowing builtins on purpose, as torch does
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .reduction import all, any, max, min, sum
from .shape import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
