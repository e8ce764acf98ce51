#!/usr/bin/env python3
"""Record PyTorch's attention kernels over a sweep of shapes (GPU): simprec.recordings.record_torch
(its docstring, or --help, gives the usage). Run with the package on the path: PYTHONPATH=python
(the source; no build needed) or build/python."""
from simprec.recordings.record_torch import main

raise SystemExit(main())
