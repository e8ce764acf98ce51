"""Record ground truth of PyTorch's attention kernels over a sweep of shapes (GPU machine).

    PYTHONPATH=python python3 scripts/record_torch_attention.py OUT_DIR
        [--kernels flash,efficient,flex] [--shapes NAME,...] [--repeats 3]
        [--shape-set main|held-out] [--seed N] [--flex-compile auto|static]

For every shape of the shape set (simprec.recordings.shapes) and every kernel (SDPA's flash and
memory-efficient backends, FlexAttention through torch.compile) it runs the forward and the
backward pass in bf16 and keeps, for ONE head of the batch (the last: b = B-1, h = H-1), what a
CPU emulation needs to be checked against it, without storing whole tensors:
OUT_DIR/KERNEL/SHAPE.npz (sampled rows of O, dQ, dK, dV, the head's whole LSE as the kernel
returns it, natural log, and SHA-256 digests of the head's outputs and inputs; the format is
simprec.recordings.layout's) and OUT_DIR/summary.json: versions, the device, every shape with the
kernels the profiler saw launched for it (the dispatch), the forward's and backward's run-to-run
agreement over --repeats runs on the whole batch (share of bit-identical elements per output),
and errors.

--shape-set held-out --seed 20261126 --flex-compile static records the held-out shapes: shapes,
a seed and a FlexAttention compiled for each shape (torch.compile(..., dynamic=False)) that no
preset was described from (tests/data/torch_held_out_sweep). The default, auto, is plain
torch.compile, which after the second shape compiles for symbolic lengths (the main recordings).

Inputs: each head draws q, k, v, dO in float64 from numpy's PCG64 seeded by
[seed, b, h, kind_id] (so the CPU regenerates one head without the others), rounded to bf16 by
PyTorch (round to nearest even); simprec.recordings.inputs. The package's source on PYTHONPATH
is enough: the recorder needs no build of simprec's C++ extension.
"""

import argparse
import os
import time
import traceback

from simprec.recordings import layout, sdpa
from simprec.recordings.bits import sha256, tensor_bits
from simprec.recordings.inputs import SEED, batch_inputs
from simprec.recordings.shapes import SHAPE_SETS


class KernelRunner:
    """Runs one of the recorded kernels forward and backward on the GPU."""

    def __init__(self, flex_compile):
        import torch._dynamo
        # Past its default of 8 recompilations torch.compile falls back to running
        # flex_attention eagerly (a reference implementation, not the Triton kernel): allow one
        # per shape.
        torch._dynamo.config.cache_size_limit = 1024
        torch._dynamo.config.accumulated_cache_size_limit = 4096
        self.flex_compile = flex_compile
        self._flex = None

    def __call__(self, kernel, q, k, v, do, causal):
        """O, LSE (natural log, [B, H, Sq], float32) and the gradients."""
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import sdpa_kernel
        q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        sq, sk = q.shape[2], k.shape[2]
        if kernel in ("flash", "efficient"):
            with sdpa_kernel(sdpa.backend(kernel)):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            with torch.no_grad():
                if kernel == "flash":
                    lse = torch.ops.aten._scaled_dot_product_flash_attention(
                        q, k, v, 0.0, causal)[1]
                else:
                    lse = torch.ops.aten._scaled_dot_product_efficient_attention(
                        q, k, v, None, True, 0.0, causal)[1][..., :sq]
        else:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            if self._flex is None:
                self._flex = torch.compile(
                    flex_attention, **({"dynamic": False} if self.flex_compile == "static" else {}))
            mask = None
            if causal:
                mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, sq, sk)
            o, lse = self._flex(q, k, v, block_mask=mask, return_lse=True)
        o.backward(do)
        return o.detach(), lse.detach().float(), q.grad, k.grad, v.grad

    def dispatch(self, kernel, inputs, causal):
        """The names of the CUDA kernels one forward and backward pass launches."""
        import torch
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            self(kernel, *inputs, causal)
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
        return [n for n in names if not n.startswith(("Memcpy", "Memset"))]


def run_to_run_agreement(first, runs):
    """Per output, the lowest share of bit-identical elements of any of `runs` against
    `first` (each a tuple O, LSE, dQ, dK, dV of torch tensors)."""
    import torch
    agreement = {n: 1.0 for n in layout.OUTPUTS}
    for again in runs:
        for n, a, b in zip(layout.OUTPUTS, first, again):
            as_int = torch.int32 if a.dtype == torch.float32 else torch.int16
            same = a.view(as_int) == b.view(as_int)
            agreement[n] = min(agreement[n], same.float().mean().item())
    return agreement


def record_kernel(run, kernel, name, shape, inputs, digest_inputs, repeats, out):
    """Records `kernel` on one shape; returns its summary entry (an error is kept, not raised:
    the sweep goes on)."""
    import torch
    causal = shape[5]
    record = {}
    started = time.time()
    try:
        first = run(kernel, *inputs, causal)
        torch.cuda.synchronize()
        record["run_to_run_agreement"] = run_to_run_agreement(
            first, (run(kernel, *inputs, causal) for _ in range(repeats - 1)))
        record["dispatch"] = run.dispatch(kernel, inputs, causal)
        hb, hh = shape[0] - 1, shape[1] - 1
        o, lse, dq, dk, dv = (t[hb, hh] for t in first)
        layout.write_head(out, kernel, name, tensor_bits(o), lse.cpu().numpy(), tensor_bits(dq),
                          tensor_bits(dk), tensor_bits(dv), digest_inputs)
        record["seconds"] = round(time.time() - started, 2)
        agreement = record["run_to_run_agreement"]
        print(f"{name} {kernel}: ok {record['seconds']} s, agreement "
              + " ".join(f"{n}={a:.6f}" for n, a in agreement.items()), flush=True)
    except Exception as error:  # recorded, the sweep goes on
        record["error"] = f"{type(error).__name__}: {error}"
        traceback.print_exc()
        print(f"{name} {kernel}: ERROR {record['error'][:200]}", flush=True)
    return record


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--kernels", default="flash,efficient,flex")
    parser.add_argument("--shapes", default="", help="names from the shape set (default all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shape-set", choices=sorted(SHAPE_SETS), default="main")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--flex-compile", choices=("auto", "static"), default="auto",
                        help="auto: torch.compile as is (symbolic lengths from the second "
                             "shape on); static: compiled for each shape (dynamic=False)")
    args = parser.parse_args(argv)
    shapes = SHAPE_SETS[args.shape_set]
    args.names = [s for s in args.shapes.split(",") if s] or list(shapes)
    unknown = [n for n in args.names if n not in shapes]
    if unknown:
        parser.error(f"unknown shapes {unknown} in set {args.shape_set}: {', '.join(shapes)}")
    return args


def environment(args):
    """The summary's description of the run: versions, the device, the sweep's settings."""
    import torch
    summary = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "multiprocessors": torch.cuda.get_device_properties(0).multi_processor_count,
        "seed": args.seed,
        "shape_set": args.shape_set,
        "flex_compile": args.flex_compile,
        "rows_kept": layout.ROWS_KEPT,
        "recorded_head": "b = B-1, h = H-1",
        "shapes": {},
    }
    try:
        import triton
        summary["triton"] = triton.__version__
    except ImportError:
        pass
    return summary


def main(argv=None):
    args = parse_arguments(argv)
    shapes = SHAPE_SETS[args.shape_set]
    run = KernelRunner(args.flex_compile)
    os.makedirs(args.out, exist_ok=True)
    summary = environment(args)
    for name in args.names:
        shape = shapes[name]
        b_, h_, sq, sk, d, causal, kind = shape
        entry = {"B": b_, "H": h_, "Sq": sq, "Sk": sk, "d": d, "causal": causal, "kind": kind,
                 "kernels": {}}
        summary["shapes"][name] = entry
        inputs = batch_inputs(shape, args.seed)
        digest_inputs = sha256(*(tensor_bits(t[b_ - 1, h_ - 1]) for t in inputs))
        for kernel in [k for k in args.kernels.split(",") if k]:
            entry["kernels"][kernel] = record_kernel(run, kernel, name, shape, inputs,
                                                     digest_inputs, args.repeats, args.out)
        layout.write_summary(args.out, summary)
    return 0
