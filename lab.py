"""ptxlab bring-up lab entry point: ``python lab.py --help``."""
import sys

try:
    from ptxlab.lab.cli import main

    code = main()
except KeyboardInterrupt:           # Ctrl-C while the package is still importing: the same one line as later on
    print("interrupted", file=sys.stderr)
    code = 130
raise SystemExit(code)
