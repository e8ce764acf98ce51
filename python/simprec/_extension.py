"""The C++ extension simprec._simprec, as `core`.

Where the extension does not import (a GPU machine's Python it was not built for, or a source
checkout on PYTHONPATH=python with nothing built), `core` is a stand-in whose every function
raises that ImportError when called. So `import simprec` always succeeds: the parts of the
package that emulate nothing (simprec.recordings' recorders, which run next to PyTorch on the
GPU) work without the extension, and everything that emulates fails at its first call, saying
why, rather than at import.
"""

import importlib
import sys
from typing import Any, Optional

_REASON: Optional[ImportError] = None
core: Any
try:
    core = importlib.import_module("simprec._simprec")
except ImportError as _error:
    _REASON = _error

    class _MissingExtension:
        """Every attribute is a function that raises the reason the extension did not load."""

        def __getattr__(self, name):
            def unavailable(*args, **kwargs):
                raise ImportError(
                    f"simprec: {name} needs the C++ extension simprec._simprec, which did not "
                    f"import ({_REASON}); build the target simprec_python for this Python "
                    f"({sys.executable}) and put its build/python on PYTHONPATH") from _REASON
            unavailable.__name__ = name
            return unavailable

    core = _MissingExtension()


def missing() -> Optional[ImportError]:
    """Why the extension did not import (the ImportError), or None where it did."""
    return _REASON
