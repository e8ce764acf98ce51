#!/usr/bin/env python3
"""Keep the Triton code inductor generates for FlexAttention on a recorded shape (GPU):
simprec.recordings.dump_flex (its docstring, or --help, gives the usage). Run with the package on
the path: PYTHONPATH=python or build/python."""
from simprec.recordings.dump_flex import main

raise SystemExit(main())
