"""``python -m attnproof``: the same command as ``attnproof``."""

import sys

from attnproof.cli import main

if __name__ == "__main__":
    sys.exit(main())
