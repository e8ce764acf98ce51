#!/usr/bin/env python3
"""Record FlexAttention and SDPA flash on the held-out inputs (GPU):
simprec.recordings.record_held_out (its docstring, or --help, gives the usage). Run with the
package on the path: PYTHONPATH=build/python:examples/python (its inputs come from simprec's
generator)."""
from simprec.recordings.record_held_out import main

raise SystemExit(main())
