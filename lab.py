"""ptxlab bring-up lab entry point: ``python lab.py --help``."""
from ptxlab.lab.cli import main

raise SystemExit(main())
