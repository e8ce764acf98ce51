"""Times PyTorch's SDPA backends (flash, cuDNN, memory-efficient) on the GPU with CUDA events,
median of repeated runs, and prints one JSON object per case in flash_bench's format, so that
scripts/gpu_check.sh can put simprec's kernels beside them from the same run.

    PYTHONPATH=python python3 scripts/torch_sdpa_bench.py [--batch 4] [--heads 16]
        [--seqlen 4096] [--dim 128] [--iters 20] [--causal] [--determinism]

--determinism also runs each backend's backward pass twice on the same inputs and prints the
fraction of dQ, dK, dV elements whose bits agree between the two runs (a backend that adds dQ
with atomics need not agree with itself, which bounds any emulation's agreement with it).
"""

import argparse
import json
import statistics

from simprec.recordings import sdpa

BACKENDS = ("flash", "cudnn", "efficient")


def median_ms(fn, iters):
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seqlen", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--determinism", action="store_true")
    a = parser.parse_args(argv)
    import torch
    from torch.nn.attention import sdpa_kernel
    torch.manual_seed(0)
    shape = (a.batch, a.heads, a.seqlen, a.dim)
    q, k, v, d_o = (torch.rand(shape, device="cuda", dtype=torch.bfloat16) * 2 - 1
                    for _ in range(4))
    forward_flops = (4.0 * a.batch * a.heads * a.seqlen * a.seqlen * a.dim *
                     (0.5 if a.causal else 1.0))
    attention = torch.nn.functional.scaled_dot_product_attention
    for name in BACKENDS:
        backend = sdpa.backend(name)
        try:
            with sdpa_kernel([backend]):
                fwd_ms = median_ms(lambda: attention(q, k, v, is_causal=a.causal), a.iters)
                qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))

                def fwd_bwd():
                    attention(qg, kg, vg, is_causal=a.causal).backward(d_o)

                both_ms = median_ms(fwd_bwd, a.iters)
        except RuntimeError as e:  # a backend that refuses this shape or machine
            print(json.dumps({"source": "torch", "kernel": name, "error": str(e).splitlines()[0]}))
            continue
        common = {"source": "torch", "kernel": name, "mitigation": "none", "batch": a.batch,
                  "heads": a.heads, "seqlen": a.seqlen, "dim": a.dim, "causal": a.causal,
                  "torch": torch.__version__}
        for pass_, ms, flops in (("forward", fwd_ms, forward_flops),
                                 ("forward+backward", both_ms, 3.5 * forward_flops)):
            print(json.dumps({**common, "pass": pass_, "ms": round(ms, 4),
                              "tflops": round(flops / (ms * 1e-3) / 1e12, 1)}), flush=True)
        if a.determinism:
            grads = []
            with sdpa_kernel([backend]):
                for _ in range(2):
                    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
                    attention(qg, kg, vg, is_causal=a.causal).backward(d_o)
                    grads.append([t.grad.view(torch.int16) for t in (qg, kg, vg)])
            same = {out: round((x == y).double().mean().item(), 6)
                    for out, x, y in zip(("dq", "dk", "dv"), grads[0], grads[1])}
            print(json.dumps({"source": "torch", "kernel": name, "determinism": same}), flush=True)
    return 0
