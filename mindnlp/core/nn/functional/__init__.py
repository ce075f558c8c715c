# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`nn.functional`: the stateless ops that layers call (torch.nn.functional)."""
from .activation import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .encoding import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .softmax import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .quantized import *  # noqa: F401,F403
