#!/usr/bin/env python3
"""Compare the emulation with the recorded attention variants: simprec.recordings.compare_variants
(its docstring, or --help, gives the usage). Run with the built package on the path:
PYTHONPATH=build/python."""
import os

from simprec.recordings.compare_variants import main

raise SystemExit(main(repository=os.path.join(os.path.dirname(__file__), "..")))
