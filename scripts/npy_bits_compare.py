#!/usr/bin/env python3
"""Compare two .npy files of bf16/fp16 bit patterns: simprec.recordings.npy_bits (its docstring, or
--help, gives the usage). Run with the package on the path: PYTHONPATH=python or build/python."""
from simprec.recordings.npy_bits import main

raise SystemExit(main())
