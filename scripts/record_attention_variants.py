#!/usr/bin/env python3
"""Record PyTorch's attention backends on the variants of simprec.recordings.variants (GPU):
simprec.recordings.record_variants (its docstring, or --help, gives the usage). Run with the
package's source on the path: PYTHONPATH=python."""
from simprec.recordings.record_variants import main

raise SystemExit(main())
