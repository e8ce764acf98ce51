#!/usr/bin/env python3
"""Record the stranger's Triton kernel (GPU): simprec.recordings.stranger_triton (its docstring,
or --help, gives the usage). Run with PYTHONPATH=build/python:examples/python."""
from simprec.recordings.stranger_triton import main

raise SystemExit(main())
