"""`python -m gatecore.cli ARGS`: the same `main(argv)` as the `gate` console script."""

import sys

from . import main

sys.exit(main())
