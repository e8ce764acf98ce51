"""Turning what callers pass (numpy arrays, torch tensors, anything with __dlpack__) into the
numpy arrays the extension module takes, without copies where the layout allows, and giving
results back in the caller's kind."""

import numpy as np

# torch dtypes held as bit patterns of a simprec format (numpy has no such dtypes).
_TORCH_BITS = {
    "torch.bfloat16": ("bf16", np.uint16, "int16"),
    "torch.float16": ("fp16", np.uint16, "int16"),
    "torch.float8_e4m3fn": ("e4m3fn", np.uint8, "uint8"),
    "torch.float8_e5m2": ("e5m2", np.uint8, "uint8"),
    "torch.float8_e4m3fnuz": ("e4m3fnuz", np.uint8, "uint8"),
    "torch.float8_e5m2fnuz": ("e5m2fnuz", np.uint8, "uint8"),
}


# Formats whose values numpy and torch hold as floats.
_FLOAT_FORMATS = {"torch.float32": "fp32", "torch.float64": "fp64", "float32": "fp32",
                  "float64": "fp64"}


def dtype_format(dtype):
    """The simprec format a torch or numpy dtype holds (bf16, fp16, fp8, fp32, fp64), or None."""
    bits = _TORCH_BITS.get(str(dtype))
    return bits[0] if bits is not None else _FLOAT_FORMATS.get(str(dtype))


def is_torch_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "dtype") and hasattr(x, "device")


def torch_device_check(x, argument):
    if x.device.type != "cpu":
        raise ValueError(
            f"{argument}: expected a CPU tensor (the emulation runs on the CPU), got one on "
            f"{x.device}; pass {argument}.cpu()")


def torch_device(device, argument="device"):
    """`device` (a str or torch.device) as a torch.device that this PyTorch can place tensors
    on: ValueError naming it otherwise, where torch would raise an AssertionError (CUDA on a
    build without it) or a RuntimeError (an unknown name)."""
    import torch
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"{argument}={device!r}: expected a str or torch.device such as 'cpu' or "
                        f"'cuda', got {type(device).__name__}")
    try:
        d = torch.device(device)
    except RuntimeError as e:
        raise ValueError(f"{argument}={device!r}: expected a torch device such as 'cpu' or "
                         f"'cuda:0' ({e})") from None
    if d.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{argument}={device!r}: this PyTorch ({torch.__version__}) has no CUDA "
                         "device (torch.cuda.is_available() is False); expected 'cpu', or run "
                         "where a GPU and a CUDA build of PyTorch are")
    return d


def tensor_to_numpy(x, argument, allow_copy=False):
    """A torch tensor as a numpy array sharing its memory (DLPack), and the simprec format its
    bits encode when numpy has no dtype for it (bf16, fp16, fp8), else None."""
    torch_device_check(x, argument)
    x = x.detach()
    if not x.is_contiguous():
        if not allow_copy:
            raise ValueError(
                f"{argument}: expected a contiguous tensor, got shape {tuple(x.shape)} with "
                f"strides {x.stride()}; pass {argument}.contiguous()")
        x = x.contiguous()
    bits = _TORCH_BITS.get(str(x.dtype))
    if bits is not None:
        import torch
        fmt, np_dtype, torch_view = bits
        raw = np.from_dlpack(x.view(getattr(torch, torch_view)))
        return raw.view(np_dtype), fmt
    return np.from_dlpack(x), None


def to_numpy(x, argument):
    """numpy arrays pass unchanged; torch tensors and other DLPack producers are viewed."""
    if isinstance(x, np.ndarray):
        return x, None
    if is_torch_tensor(x):
        return tensor_to_numpy(x, argument)
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x), None
    if isinstance(x, (list, tuple, float, int)):
        return np.asarray(x, dtype=np.float64), None
    raise TypeError(f"{argument}: expected a numpy array, a torch tensor or a DLPack tensor, got "
                    f"{type(x).__name__}")


_SIGNED_VIEW = {np.dtype(np.uint16): np.int16, np.dtype(np.uint32): np.int32,
                np.dtype(np.uint64): np.int64}


def like(result, original):
    """The result as a torch tensor (DLPack, no copy) when the input was one, else as is.
    Encodings wider than a byte become the signed dtype of their width: the same bits, as
    torch before 2.3 has no unsigned 16-, 32- or 64-bit dtypes."""
    if is_torch_tensor(original):
        import torch.utils.dlpack
        signed = _SIGNED_VIEW.get(result.dtype)
        return torch.utils.dlpack.from_dlpack(result if signed is None else result.view(signed))
    return result


def torch_from_bits(bits, fmt):
    """A torch tensor of the dtype that holds `fmt` from its encodings (bf16, fp16, fp8; fp32
    and fp64 as uint32/uint64) or values (float32, float64)."""
    import torch
    if bits.dtype in (np.float32, np.float64):
        return torch.from_numpy(np.ascontiguousarray(bits))
    wide = {("fp32", np.dtype(np.uint32)): np.float32, ("fp64", np.dtype(np.uint64)): np.float64}
    if (fmt, bits.dtype) in wide:
        return torch.from_numpy(np.ascontiguousarray(bits).view(wide[(fmt, bits.dtype)]))
    for torch_name, (name, np_dtype, view) in _TORCH_BITS.items():
        if name == fmt and hasattr(torch, torch_name[len("torch."):]):
            raw = torch.from_numpy(np.ascontiguousarray(bits).view(getattr(np, view)))
            return raw.view(getattr(torch, torch_name[len("torch."):]))
    raise ValueError(f"format {fmt}: this PyTorch ({torch.__version__}) has no dtype for it "
                     f"(got its encodings as {bits.dtype})")
