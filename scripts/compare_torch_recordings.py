#!/usr/bin/env python3
"""Compare an emulation's numerics with the recorded PyTorch kernels:
simprec.recordings.compare_torch (its docstring, or --help, gives the usage). Run with the
package on the path: PYTHONPATH=build/python."""
from pathlib import Path

from simprec.recordings.compare_torch import main

raise SystemExit(main(repository=Path(__file__).resolve().parent.parent))
