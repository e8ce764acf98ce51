"""Record PyTorch's attention backends on the variants of simprec.recordings.variants (GPU).

    PYTHONPATH=python python3 scripts/record_attention_variants.py OUT_DIR
        [--cases NAME,...] [--backends flash,efficient,flex,cudnn] [--repeats 3]
        [--full NAME,...]

Per case it runs the forward and the backward pass (SDPA with the case's backend forced, or
FlexAttention compiled for the case's shape, torch.compile(dynamic=False)) and keeps, in
OUT_DIR/cases/NAME.npz, query head (B-1, H-1)'s O and dQ rows and whole LSE, key/value head
(B-1, Hkv-1)'s dK and dV rows (simprec.recordings.layout's fields), SHA-256 digests of those
heads' whole outputs and of the last batch element's inputs; OUT_DIR/summary.json has versions,
the device, per case its settings, the CUDA kernels launched (the dispatch), the run-to-run
agreement over --repeats runs, where its LSE came from, and errors (a case that fails is
recorded as failed and the sweep goes on).
"""

import argparse
import dataclasses
import json
import os
import time
import traceback

import numpy as np

from simprec.recordings import layout, sdpa, variants
from simprec.recordings.bits import sha256, tensor_bits

LSE_FIELDS = ("logsumexp", "log_sumexp", "softmax_lse")


def saved_lse(o):
    """The log-sum-exp the autograd graph of an SDPA output saved for its backward pass (the
    backend kernel's own LSE), found by walking the graph from o; None where there is none."""
    seen, stack = set(), [o.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for attr in dir(node):
            if attr.startswith("_saved_") and any(f in attr for f in LSE_FIELDS):
                return getattr(node, attr)
        stack.extend(n for n, _ in node.next_functions)
    return None


class Runner:
    def __init__(self):
        import torch._dynamo
        torch._dynamo.config.cache_size_limit = 1024
        torch._dynamo.config.accumulated_cache_size_limit = 4096
        self._flex = None

    def tensors(self, case):
        import torch
        dtype = variants.torch_dtype(case)
        return [torch.from_numpy(x).to(dtype).cuda() for x in variants.inputs_float32(case)]

    def __call__(self, case, q, k, v, do):
        """O, LSE (natural log, float32 [B, H, Sq]; None where the backend gives none) and the
        gradients."""
        import torch
        import torch.nn.functional as F
        q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        gqa = case.heads_kv != case.heads
        if case.backend == "flex":
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            if self._flex is None:
                self._flex = torch.compile(flex_attention, dynamic=False)
            mm = variants.mask_mod(case, torch, "cuda")
            block_mask = None if mm is None else create_block_mask(
                mm, None, None, case.sq, case.sk, device="cuda")
            o, lse = self._flex(q, k, v, score_mod=variants.score_mod(case, torch, "cuda"),
                                block_mask=block_mask, scale=case.scale, enable_gqa=gqa,
                                return_lse=True)
        else:
            from torch.nn.attention import sdpa_kernel
            mask = variants.attn_mask(case, torch, range(case.batch), range(case.heads), "cuda")
            causal = case.mask == "causal"
            if case.mask == "causal-lower-right":
                from torch.nn.attention.bias import causal_lower_right
                mask = causal_lower_right(case.sq, case.sk)
            with sdpa_kernel(sdpa.backend(case.backend)):
                o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                                   scale=case.scale, enable_gqa=gqa)
            lse = saved_lse(o)
            if lse is not None:
                lse = lse.reshape(lse.shape[0], lse.shape[1], -1)[..., :case.sq]
        o.backward(do)
        lse = None if lse is None else lse.detach().float()
        return o.detach(), lse, q.grad, k.grad, v.grad

    def dispatch(self, case, inputs):
        import torch
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            self(case, *inputs)
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
        return [n for n in names if not n.startswith(("Memcpy", "Memset"))]


def agreement(first, runs):
    import torch
    worst = {n: 1.0 for n in layout.OUTPUTS}
    for again in runs:
        for n, a, b in zip(layout.OUTPUTS, first, again):
            if a is None or b is None:
                worst[n] = None
                continue
            as_int = torch.int32 if a.dtype == torch.float32 else torch.int16
            same = (a.view(as_int) == b.view(as_int)).float().mean().item()
            worst[n] = min(worst[n], same) if worst[n] is not None else None
    return worst


def write_case(out, case, o, lse, dq, dk, dv, digest_inputs, full=False):
    """OUT/cases/NAME.npz: query head (B-1, H-1)'s outputs and key/value head (B-1, Hkv-1)'s
    (with `full`, also every row of them: full_o, full_dq, full_dk, full_dv)."""
    b, h, hk = case.batch - 1, case.heads - 1, case.heads_kv - 1
    o_h, dq_h = tensor_bits(o[b, h]), tensor_bits(dq[b, h])
    dk_h, dv_h = tensor_bits(dk[b, hk]), tensor_bits(dv[b, hk])
    o_rows, k_rows = layout.kept_rows(case.sq, 1), layout.kept_rows(case.sk, 2)
    fields = dict(o_rows=o_rows, dq_rows=o_rows, k_rows=k_rows, o=o_h[o_rows], dq=dq_h[o_rows],
                  dk=dk_h[k_rows], dv=dv_h[k_rows], digest_o=sha256(o_h),
                  digest_dq=sha256(dq_h), digest_dk=sha256(dk_h), digest_dv=sha256(dv_h),
                  digest_inputs=digest_inputs)
    if lse is not None:
        fields["lse"] = lse[b, h].cpu().numpy().astype(np.float32)
    if full:
        fields.update(full_o=o_h, full_dq=dq_h, full_dk=dk_h, full_dv=dv_h)
    os.makedirs(os.path.join(out, "cases"), exist_ok=True)
    np.savez_compressed(os.path.join(out, "cases", case.name + ".npz"), **fields)


def record_case(run, case, repeats, out, full=False):
    import torch
    record = {"settings": dataclasses.asdict(case)}
    started = time.time()
    try:
        inputs = run.tensors(case)
        b = case.batch - 1
        digest_inputs = sha256(*(tensor_bits(t[b]) for t in inputs))
        first = run(case, *inputs)
        torch.cuda.synchronize()
        record["run_to_run_agreement"] = agreement(
            first, [run(case, *inputs) for _ in range(repeats - 1)])
        record["dispatch"] = run.dispatch(case, inputs)
        record["lse"] = "kernel" if first[1] is not None else "none"
        write_case(out, case, *first, digest_inputs, full)
        record["seconds"] = round(time.time() - started, 2)
        print(f"{case.name}: ok {record['seconds']} s {record['run_to_run_agreement']}",
              flush=True)
    except Exception as error:  # recorded, the sweep goes on
        record["error"] = f"{type(error).__name__}: {error}"[:2000]
        traceback.print_exc()
        print(f"{case.name}: ERROR {record['error'][:300]}", flush=True)
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--cases", default="")
    parser.add_argument("--backends", default="flash,efficient,flex,cudnn")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full", default="", help="cases whose heads are kept whole")
    args = parser.parse_args(argv)
    names = [n for n in args.cases.split(",") if n] or list(variants.CASES)
    unknown = [n for n in names if n not in variants.CASES]
    if unknown:
        parser.error(f"unknown cases {unknown}")
    backends = set(args.backends.split(","))
    import torch
    summary = {"torch": torch.__version__, "cuda": torch.version.cuda,
               "cudnn": torch.backends.cudnn.version(),
               "device": torch.cuda.get_device_name(0),
               "multiprocessors": torch.cuda.get_device_properties(0).multi_processor_count,
               "seed": variants.SEED, "held_out_seed": variants.HELD_OUT_SEED,
               "rows_kept": layout.ROWS_KEPT, "cases": {}}
    os.makedirs(args.out, exist_ok=True)
    run = Runner()
    for name in names:
        case = variants.CASES[name]
        if case.backend not in backends:
            continue
        summary["cases"][name] = record_case(run, case, args.repeats, args.out,
                                             name in args.full.split(","))
        with open(os.path.join(args.out, layout.SUMMARY), "w") as f:
            json.dump(summary, f, indent=1)
    return 0
