"""`python -m mindnlp ...`: the same command line as the `mindnlp` console script."""
import sys

from .cli import main

sys.exit(main())
