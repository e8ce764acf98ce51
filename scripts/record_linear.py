#!/usr/bin/env python3
"""Record linear layers (F.linear forward and backward, bf16/fp16, with and without a bias) on a
GPU: simprec.recordings.record_linear (its docstring, or --help, gives the usage). Run with the
package on the path: PYTHONPATH=python (the source; no build needed) or build/python."""
from simprec.recordings.record_linear import main

raise SystemExit(main())
