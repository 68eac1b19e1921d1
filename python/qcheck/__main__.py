"""python -m qcheck: the command line, qcheck.integrations.cli (its text
names the subcommands)."""

import sys

from .integrations.cli import main

if __name__ == "__main__":
    sys.exit(main())
