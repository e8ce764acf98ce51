#!/usr/bin/env python3
"""Compare the recorded linear layers (tests/data/linear) with simprec.gemm bit by bit:
simprec.recordings.compare_linear (its docstring, or --help, gives the usage). Needs the built
package: PYTHONPATH=build/python."""
from pathlib import Path

from simprec.recordings.compare_linear import main

raise SystemExit(main(repository=Path(__file__).resolve().parent.parent))
