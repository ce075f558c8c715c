# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`python -m mindnlp ...`: the same command line as the `mindnlp` console script."""
import sys

from .cli import main

sys.exit(main())
