#!/usr/bin/env python3
"""Record how cuBLAS dispatches GEMMs (kernels, grids, a few output rows) over many shapes on a
GPU: simprec.recordings.record_gemm_dispatch (its docstring, or --help, gives the usage). Run
with the package on the path: PYTHONPATH=python (the source; no build needed) or build/python."""
from simprec.recordings.record_gemm_dispatch import main

raise SystemExit(main())
