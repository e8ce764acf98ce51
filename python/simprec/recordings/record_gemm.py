"""Record ground truth of the GEMMs around attention on a GPU: cuBLAS through torch.matmul (bf16,
fp16) and torch._scaled_mm (FP8).

    PYTHONPATH=python python3 scripts/record_gemm.py OUT_DIR [--seed N] [--only SUBSTRING]

For every case of simprec.recordings.gemm_cases (the shapes, the fitting and held-out sets, the
settings) it draws the operands on the CPU from the seed and the shape (numpy only, so the CPU
side draws them again), runs the GEMM twice on the GPU and keeps:

    OUT_DIR/gemm.npz       per case, NAME: the bit patterns (uint16 bf16/fp16, uint32 fp32) of
                           the output rows gemm_cases.kept_rows names
    OUT_DIR/summary.json   versions (torch, CUDA, cuBLASLt), the device, the flags' defaults,
                           torch._scaled_mm's schema, and per case its settings, the flags as
                           PyTorch read them back, the CUDA kernels the profiler saw launched
                           with their grids, the run-to-run agreement (share of bit-identical
                           outputs of the second run against the first), SHA-256 digests of the
                           whole output and of the inputs' encodings, or the error

A case that fails (an FP8 combination PyTorch refuses, say) keeps its error and the sweep goes
on. The package's source on PYTHONPATH is enough: no build of simprec's C++ extension.
"""

import argparse
import ctypes
import json
import os
import tempfile
import time
import traceback

import numpy as np

from simprec.recordings import gemm_cases
from simprec.recordings.bits import sha256

_TORCH_FP8 = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
_FLAG = {"bf16": "allow_bf16_reduced_precision_reduction",
         "fp16": "allow_fp16_reduced_precision_reduction"}


def _device_tensor(bits, format):
    """A GPU tensor of `format` holding the encodings `bits`."""
    import torch
    if format in ("bf16", "fp16"):
        t = torch.from_numpy(np.ascontiguousarray(bits).view(np.int16))
        return t.view(torch.bfloat16 if format == "bf16" else torch.float16).cuda()
    t = torch.from_numpy(np.ascontiguousarray(bits))
    return t.view(getattr(torch, _TORCH_FP8[format])).cuda()


def output_bits(tensor):
    """uint16 (bf16, fp16) or uint32 (fp32) bit patterns of a GPU tensor, on the CPU."""
    import torch
    as_int = torch.int32 if tensor.dtype == torch.float32 else torch.int16
    bits = tensor.contiguous().view(as_int).cpu().numpy()
    return bits.view(np.uint32 if as_int == torch.int32 else np.uint16)


def set_reduction(dtype, reduction):
    """Sets PyTorch's reduced-precision-reduction flag of dtype and the BLAS backend; returns
    both as read back (strings). "off-nosplitk" uses the pair form (allow_reduced_precision,
    allow_splitk), which PyTorch 2.11 takes with the cuBLASLt backend only; the other settings
    run on the default backend, cuBLAS."""
    import torch
    torch.backends.cuda.preferred_blas_library(
        "cublaslt" if reduction == "off-nosplitk" else "cublas")
    value = {"on": True, "off": False, "off-nosplitk": (False, False)}[reduction]
    setattr(torch.backends.cuda.matmul, _FLAG[dtype], value)
    return (repr(getattr(torch.backends.cuda.matmul, _FLAG[dtype])),
            str(torch.backends.cuda.preferred_blas_library()))


class Operands:
    """The operands' encodings, drawn once per (shape, operand, format)."""

    def __init__(self, seed):
        self.seed = seed
        self._cache = {}

    def __call__(self, shape, operand, format):
        key = (shape, operand, format)
        if key not in self._cache:
            self._cache = {k: v for k, v in self._cache.items() if k[0] == shape}
            self._cache[key] = gemm_cases.operand_bits(self.seed, shape, operand, format)
        return self._cache[key]


def runner(case, operands, seed):
    """(run, input bit arrays): run() computes the case's GEMM once on the GPU and returns the
    output tensor."""
    import torch
    shape = case["shape"]
    if case["family"] == "matmul":
        a_bits = operands(shape, "a", case["dtype"])
        w_bits = operands(shape, "w", case["dtype"])
        a, w = _device_tensor(a_bits, case["dtype"]), _device_tensor(w_bits, case["dtype"])
        return (lambda: torch.matmul(a, w.t())), (a_bits, w_bits)
    a_bits = operands(shape, "a", case["a_format"])
    w_bits = operands(shape, "w", case["b_format"])
    a, w = _device_tensor(a_bits, case["a_format"]), _device_tensor(w_bits, case["b_format"])
    sa, sb = (torch.from_numpy(np.ascontiguousarray(s)).cuda()
              for s in gemm_cases.scales(case, seed))
    out_dtype = torch.bfloat16 if case["out_dtype"] == "bf16" else torch.float32

    def run():
        return torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=out_dtype,
                                use_fast_accum=case["fast_accum"])
    return run, (a_bits, w_bits)


def launches(run):
    """[name, grid, block] of every CUDA kernel one call launches, in launch order, from the
    profiler's trace (kineto records each kernel's grid and block; a split-K kernel's grid
    counts the pieces of K)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    return [[e["name"], e.get("args", {}).get("grid"), e.get("args", {}).get("block")]
            for e in kernels]


def record_case(case, operands, seed, arrays, outputs_kept=gemm_cases.OUTPUTS_KEPT):
    """Records one case into `arrays` (name -> the bits of the rows gemm_cases.kept_rows keeps
    of at most outputs_kept outputs); returns its summary entry (an error is kept, not
    raised)."""
    import torch
    entry = {k: v for k, v in case.items() if k != "name"}
    started = time.time()
    try:
        if case["family"] == "matmul":
            entry["flag_read_back"], entry["blas_library"] = set_reduction(
                case["dtype"], case["reduction"])
        run, inputs = runner(case, operands, seed)
        first = output_bits(run())
        second = output_bits(run())
        torch.cuda.synchronize()
        entry["run_to_run"] = float(np.mean(first == second))
        entry["launches"] = launches(run)
        entry["kernels"] = [name for name, _, _ in entry["launches"]]
        entry["digest_output"] = sha256(first)
        entry["digest_inputs"] = sha256(*inputs)
        m, n, _ = case["shape"]
        arrays[case["name"]] = first[gemm_cases.kept_rows(m, n, outputs_kept)]
        entry["seconds"] = round(time.time() - started, 3)
        grids = "; ".join(f"{name[:60]} {grid}" for name, grid, _ in entry["launches"])
        print(f"{case['name']}: ok, run-to-run {entry['run_to_run']:.6f}, {grids}", flush=True)
    except Exception as error:  # recorded, the sweep goes on
        entry["error"] = f"{type(error).__name__}: {error}"[:2000]
        traceback.print_exc()
        print(f"{case['name']}: ERROR {entry['error'][:200]}", flush=True)
    return entry


def cublaslt_version():
    """cuBLASLt's version number as the loaded library reports it (cublasLtGetVersion), found
    through the process's mapped libraries; None where it cannot be read."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "libcublasLt" in line}
        for path in sorted(paths):
            lib = ctypes.CDLL(path)
            lib.cublasLtGetVersion.restype = ctypes.c_size_t
            return {"path": path, "version": int(lib.cublasLtGetVersion())}
    except (OSError, AttributeError):
        pass
    return None


def environment(seed):
    """The summary's description of the run: versions, the device, defaults, the schema."""
    import torch
    defaults = {flag: repr(getattr(torch.backends.cuda.matmul, flag)) for flag in _FLAG.values()}
    torch.matmul(torch.ones(16, 16, device="cuda", dtype=torch.bfloat16),
                 torch.ones(16, 16, device="cuda", dtype=torch.bfloat16))
    torch.cuda.synchronize()
    summary = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "capability": list(torch.cuda.get_device_capability(0)),
        "cublaslt": cublaslt_version(),
        "flag_defaults": defaults,
        "seed": seed,
        "outputs_kept": gemm_cases.OUTPUTS_KEPT,
        "tensor_scales": [float(gemm_cases.TENSOR_SCALE_A), float(gemm_cases.TENSOR_SCALE_B)],
    }
    try:
        summary["preferred_blas_library"] = str(torch.backends.cuda.preferred_blas_library())
    except (AttributeError, RuntimeError) as error:
        summary["preferred_blas_library"] = f"unknown ({error})"
    try:
        summary["scaled_mm_schema"] = str(torch.ops.aten._scaled_mm.default._schema)
    except (AttributeError, RuntimeError) as error:
        summary["scaled_mm_schema"] = f"unknown ({error})"
    return summary


def arguments(argv, doc, script, seed=None):
    """A recorder's command line (OUT, --only, and --seed where it has a default), checked to
    run where CUDA is."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("out")
    if seed is not None:
        parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--only", default="", help="record the cases whose name holds this")
    args = parser.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        raise SystemExit(f"{script}: no CUDA device; the recordings are of a GPU's libraries")
    return args


def main(argv=None):
    args = arguments(argv, __doc__, "record_gemm", gemm_cases.SEED)
    return record(args.out, args.seed, gemm_cases.cases(), args.only)


def record(out, seed, cases, only="", outputs_kept=gemm_cases.OUTPUTS_KEPT):
    """Records the cases whose name holds `only` into OUT/gemm.npz and OUT/summary.json (the
    module's docstring) and puts PyTorch's BLAS settings back as they were; returns 0."""
    import torch
    os.makedirs(out, exist_ok=True)
    summary = environment(seed)
    summary["outputs_kept"] = outputs_kept
    summary["cases"] = {}
    defaults = {dtype: getattr(torch.backends.cuda.matmul, flag) for dtype, flag in _FLAG.items()}
    operands = Operands(seed)
    arrays = {}
    for case in cases:
        if only in case["name"]:
            summary["cases"][case["name"]] = record_case(case, operands, seed, arrays,
                                                         outputs_kept)
    torch.backends.cuda.preferred_blas_library("cublas")
    for dtype, value in defaults.items():
        setattr(torch.backends.cuda.matmul, _FLAG[dtype], value)
    np.savez_compressed(os.path.join(out, "gemm.npz"), **arrays)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    errors = sum("error" in e for e in summary["cases"].values())
    print(f"recorded {len(arrays)} cases, {errors} errors", flush=True)
    return 0
