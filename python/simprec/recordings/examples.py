"""The repository's example kernels that some recorders run (examples/python: the Triton
kernel of triton_flash_forward.py, the FlexAttention and SDPA wrappers of validate_on_gpu.py).
They are examples, not part of the package: the recorders import them from PYTHONPATH, as the
examples themselves run (PYTHONPATH=build/python:examples/python), and say so where they are not
there."""

import importlib


def import_example(name, command):
    """examples/python/NAME.py as a module; exits with what to do where it does not import."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise SystemExit(f"{command}: the example examples/python/{name}.py did not import "
                         f"({error}); run it with PYTHONPATH=build/python:examples/python from "
                         "the repository's root, on a machine with PyTorch and Triton") from None
