#!/usr/bin/env python3
"""Keep one head of the held-out recording for the tests: simprec.recordings.extract_held_out (its
docstring, or --help, gives the usage). Run with the package on the path: PYTHONPATH=python or
build/python."""
from simprec.recordings.extract_held_out import main

raise SystemExit(main())
