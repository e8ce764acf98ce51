#!/usr/bin/env python3
"""A markdown table of flash_bench's and torch_sdpa_bench.py's timings:
simprec.recordings.bench_table (its docstring, or --help, gives the usage). Run with the package
on the path: PYTHONPATH=python or build/python."""
from simprec.recordings.bench_table import main

raise SystemExit(main())
