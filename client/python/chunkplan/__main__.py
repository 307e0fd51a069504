"""`python3 -m chunkplan`: see chunkplan.command."""

import sys

from chunkplan.command import main

sys.exit(main())
