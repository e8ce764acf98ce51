#!/usr/bin/env python3
"""Time PyTorch's SDPA backends in flash_bench's JSON lines (GPU): simprec.recordings.sdpa_bench
(its docstring, or --help, gives the usage). Run with the package on the path: PYTHONPATH=python
or build/python."""
from simprec.recordings.sdpa_bench import main

raise SystemExit(main())
