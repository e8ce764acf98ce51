#!/usr/bin/env python3
"""Record cuBLAS GEMMs (torch.matmul, bf16/fp16) and torch._scaled_mm (FP8) on a GPU:
simprec.recordings.record_gemm (its docstring, or --help, gives the usage). Run with the package
on the path: PYTHONPATH=python (the source; no build needed) or build/python."""
from simprec.recordings.record_gemm import main

raise SystemExit(main())
