#!/usr/bin/env python3
"""Times PyTorch's SDPA backends (flash, cuDNN, memory-efficient) on the GPU with CUDA events,
median of repeated runs, and prints one JSON object per case in flash_bench's format, so that
scripts/gpu_check.sh can put simprec's kernels beside them from the same run.

    python3 scripts/torch_sdpa_bench.py [--batch 4] [--heads 16] [--seqlen 4096] [--dim 128]
                                        [--iters 20] [--causal] [--determinism]

--determinism also runs each backend's backward pass twice on the same inputs and prints the
fraction of dQ, dK, dV elements whose bits agree between the two runs (a backend that adds dQ
with atomics need not agree with itself, which bounds any emulation's agreement with it).
"""
import argparse
import json
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}


def median_ms(fn, iters):
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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seqlen", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--determinism", action="store_true")
    a = parser.parse_args()
    torch.manual_seed(0)
    shape = (a.batch, a.heads, a.seqlen, a.dim)
    q, k, v, d_o = (torch.rand(shape, device="cuda", dtype=torch.bfloat16) * 2 - 1 for _ in range(4))
    forward_flops = 4.0 * a.batch * a.heads * a.seqlen * a.seqlen * a.dim * (0.5 if a.causal else 1.0)
    for name, backend in BACKENDS.items():
        try:
            with sdpa_kernel([backend]):
                fwd = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
                fwd_ms = median_ms(fwd, a.iters)
                qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))

                def fwd_bwd():
                    out = torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, is_causal=a.causal)
                    out.backward(d_o)

                both_ms = median_ms(fwd_bwd, a.iters)
        except RuntimeError as e:  # a backend that refuses this shape or machine
            print(json.dumps({"source": "torch", "kernel": name, "error": str(e).splitlines()[0]}))
            continue
        common = {"source": "torch", "kernel": name, "mitigation": "none", "batch": a.batch,
                  "heads": a.heads, "seqlen": a.seqlen, "dim": a.dim, "causal": a.causal,
                  "torch": torch.__version__}
        print(json.dumps({**common, "pass": "forward", "ms": round(fwd_ms, 4),
                          "tflops": round(forward_flops / (fwd_ms * 1e-3) / 1e12, 1)}), flush=True)
        print(json.dumps({**common, "pass": "forward+backward", "ms": round(both_ms, 4),
                          "tflops": round(3.5 * forward_flops / (both_ms * 1e-3) / 1e12, 1)}), flush=True)
        if a.determinism:
            grads = []
            with sdpa_kernel([backend]):
                for _ in range(2):
                    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
                    torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, is_causal=a.causal).backward(d_o)
                    grads.append([t.grad.view(torch.int16) for t in (qg, kg, vg)])
            same = {name: round((x == y).double().mean().item(), 6)
                    for name, x, y in zip(("dq", "dk", "dv"), grads[0], grads[1])}
            print(json.dumps({"source": "torch", "kernel": name, "determinism": same}), flush=True)


if __name__ == "__main__":
    main()
