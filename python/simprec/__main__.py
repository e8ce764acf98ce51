"""`python -m simprec ARGS` and the console script `simprec ARGS`: the command-line tool shipped
with this copy of the package (the wheel's simprec/bin/simprec, an installed prefix's
bin/simprec, or the build tree's build/bin/simprec), run with ARGS in this process's place.
"""

import os
import sys
from pathlib import Path
from typing import NoReturn, Optional, Sequence


def cli_path() -> Path:
    """The command-line tool of this copy of the package; SystemExit, saying why, where there
    is none."""
    try:
        from simprec._build_info import CLI
    except ImportError:
        sys.exit(f"simprec: {Path(__file__).parent} is a source folder, not a built package: "
                 "install it (pip install .) or build it (scripts/setup.sh)")
    path = Path(os.path.normpath(Path(__file__).parent / CLI))
    if not os.access(path, os.X_OK):
        sys.exit(f"simprec: the command-line tool {path} is missing or not executable; "
                 "install the package again")
    return path


def main(argv: Optional[Sequence[str]] = None) -> NoReturn:
    """Replaces this process with the tool (so its exit status, signals and terminal are the
    tool's own); argv defaults to this process's arguments."""
    cli = cli_path()
    arguments = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cli, ["simprec", *arguments])


if __name__ == "__main__":
    main()
