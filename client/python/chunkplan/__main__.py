"""`python3 -m chunkplan ...`: the chunkplan command line, the C++ binary
(chunkplan.binary), as the `chunkplan` console script runs it."""

import sys

from chunkplan.binary import main

sys.exit(main())
