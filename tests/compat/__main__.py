import sys

from compat.run import main

sys.exit(main())
