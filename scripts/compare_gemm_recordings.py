#!/usr/bin/env python3
"""Compare the recorded GEMMs (tests/data/gemm) with the emulation bit by bit:
simprec.recordings.compare_gemm (its docstring, or --help, gives the usage). Needs the built
package: PYTHONPATH=build/python."""
from pathlib import Path

from simprec.recordings.compare_gemm import main

raise SystemExit(main(repository=Path(__file__).resolve().parent.parent))
