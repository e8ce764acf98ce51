#!/usr/bin/env python3
"""Dump PyTorch SDPA backends' inputs and outputs as .npy (GPU): simprec.recordings.sdpa_dump (its
docstring, or --help, gives the usage). Run with the package on the path: PYTHONPATH=python or
build/python."""
from simprec.recordings.sdpa_dump import main

raise SystemExit(main())
