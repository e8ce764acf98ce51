#!/usr/bin/env python3
"""Compare an emulation with the Triton example kernel's recorded outputs:
simprec.recordings.compare_triton (its docstring, or --help, gives the usage). Run with the
package on the path: PYTHONPATH=build/python."""
from pathlib import Path

from simprec.recordings.compare_triton import main

raise SystemExit(main(repository=Path(__file__).resolve().parent.parent))
