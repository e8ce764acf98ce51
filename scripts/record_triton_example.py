#!/usr/bin/env python3
"""Record the Triton example kernel's outputs (GPU): simprec.recordings.record_triton (its
docstring, or --help, gives the usage). Run with the package on the path:
PYTHONPATH=python:examples/python or build/python:examples/python."""
from simprec.recordings.record_triton import main

raise SystemExit(main())
