"""The types the package's hints name (PEP 561: the package ships py.typed)."""

import os
from typing import TYPE_CHECKING, Callable, Mapping, Tuple, Union

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import torch

# What the functions take: numpy arrays, CPU torch tensors, anything numpy.asarray reads.
ArrayLike = npt.ArrayLike
# What they give back: a numpy array, or a torch tensor where a torch tensor came in.
Array = Union[np.ndarray, "torch.Tensor"]
# A numerics spec ("fa2", "torch-math,p_cast=bf16:rne") or the path of a .toml file.
Numerics = Union[str, "os.PathLike[str]"]
# The flash tiling: (Br query rows, Bc key columns), as the spec's tile=BRxBC.
Tile = Tuple[int, int]
# A memory bound: "4G", "512M", or a number of bytes.
MemorySize = Union[str, int]
# The kernel's own float32 functions: {"exp2": f, "log": g, ...}, numpy in, numpy out.
DeviceFunctions = Mapping[str, Callable[..., np.ndarray]]
