"""``python -m fmu_surrogate.cli``: the same as the ``fmu-surrogate`` console script."""

import sys

from fmu_surrogate.cli.main import main

sys.exit(main())
