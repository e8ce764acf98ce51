#!/usr/bin/env python3
"""Compare an emulation's numerics with the recorded PyTorch kernels (tests/data/torch_kernels).

    PYTHONPATH=build/python /usr/bin/python3 scripts/compare_torch_recordings.py \\
        --kernel flash|efficient|flex --numerics SPEC [--shapes NAME,...] [--markdown]
        [--data tests/data/torch_kernels] [--threads 0] [--seed 0]

For every recorded shape (scripts/record_torch_attention.py made them) it regenerates the
recorded head's bf16 inputs exactly as the recording did (head_inputs, PCG64; the conversion
float64 -> bf16 that PyTorch's CPU .to(torch.bfloat16) performs) and checks them against the
recorded digest_inputs (a mismatch stops the script: the comparison would be meaningless). It
runs the emulation through the Python package for that one head (B = 1, H = 1, the shape's Sq,
Sk, d and causal mask, scale 1/sqrt(d) rounded to float32 as the kernels receive it) and prints per shape the share of bit-identical elements
of O, LSE, dQ, dK and dV on the recorded rows, whether the whole head's O (and dQ, dK, dV)
digests match, and the recorded run-to-run agreement of each output (the bound where the kernel
is not deterministic).

Dispatch parameters that depend on the whole batch reach the preset as structural options:
where the numerics spec accepts the options `batch_heads` and `sms`, the script sets
batch_heads = B * H of the recorded shape and sms = the recording's multiprocessor count
(unless SPEC sets them itself).

The LSE is compared as float32 bit patterns (the recording keeps the kernel's fp32 LSE; the
emulation's LSE, a value of its lse site's format, is converted to float32 exactly when that
format is fp32).
"""
import argparse
import hashlib
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from record_torch_attention import SEED, head_inputs  # noqa: E402

OUTPUTS = ("o", "lse", "dq", "dk", "dv")


def bf16_bits(x):
    """uint16 bf16 encodings of float64 x as PyTorch's CPU conversion makes them: the double
    is first converted to float (round to nearest even), then the float to bf16 (round to
    nearest even; c10::BFloat16 has no constructor from double)."""
    f = np.ascontiguousarray(x, dtype=np.float64).astype(np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    if np.isnan(f).any():
        raise ValueError("NaN in generated inputs")
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bits_of_bf16_values(values):
    """uint16 encodings of float64 values that bf16 holds exactly (checked)."""
    f = np.ascontiguousarray(values, dtype=np.float64).astype(np.float32)
    u = f.view(np.uint32)
    if np.any(u & 0xFFFF):
        raise ValueError("emulated output holds values that are not bf16")
    return (u >> 16).astype(np.uint16)


def sha256(*arrays):
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


def share_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} against {b.shape}")
    return float(np.mean(a == b)) if a.size else 1.0


def accepts(simprec, spec):
    try:
        simprec.attention_config(spec)
        return True
    except ValueError:
        return False


def flex_compile_of(summary, name):
    """How torch.compile compiled FlexAttention for a recorded shape. A recording made with
    --flex-compile static compiled every shape for its lengths. Otherwise (plain torch.compile,
    the main recordings) automatic dynamic shapes apply: a graph's first call is compiled for
    its lengths (static) and, once a length has changed, recompiled for symbolic lengths
    (dynamic). The causal shapes pass a block mask, a graph of its own whose first call is
    static too."""
    if summary.get("flex_compile") == "static":
        return "static"
    names = [n for n in summary["shapes"] if "flex" in summary["shapes"][n]["kernels"]]
    first_sizes = {}
    for n in names:
        e = summary["shapes"][n]
        first_sizes.setdefault(bool(e["causal"]), (e["Sq"], e["Sk"], e["d"]))
    e = summary["shapes"][name]
    compiled_for = first_sizes[bool(e["causal"])]
    return "static" if (e["Sq"], e["Sk"], e["d"]) == compiled_for else "dynamic"


def spec_with_dispatch(numerics, shape, multiprocessors, simprec, flex_compile=None):
    """The numerics spec, with batch_heads and sms added where the configuration has them, and
    flex_compile (the recording's, for FlexAttention) unless the spec sets it."""
    b_, h_ = shape[0], shape[1]
    items = [s.strip().split("=")[0] for s in numerics.split(",")]
    spec = numerics
    extra = (("flex_compile", flex_compile),) if flex_compile else ()
    for key, value in (("batch_heads", b_ * h_), ("sms", multiprocessors)) + extra:
        if key not in items and accepts(simprec, f"{spec},{key}={value}"):
            spec += f",{key}={value}"
    return spec


def kernel_scale(d):
    """The softmax scale the kernels compute with: PyTorch passes 1/sqrt(d), computed in double,
    to the flash, memory-efficient and FlexAttention kernels as a float32."""
    return float(np.float32(1.0 / math.sqrt(d)))


def shape_of(summary, name):
    """(B, H, Sq, Sk, d, causal, kind) of a recorded shape, as the recording's summary has it."""
    e = summary["shapes"][name]
    return e["B"], e["H"], e["Sq"], e["Sk"], e["d"], e["causal"], e["kind"]


def load_summary(data, kernel):
    """The recording's summary: summary.json, or (tests/data/torch_kernels, recorded in two
    sweeps) summary_flex.json or summary_sdpa.json by kernel."""
    split = os.path.join(data, "summary_flex.json" if kernel == "flex" else "summary_sdpa.json")
    with open(split if os.path.exists(split) else os.path.join(data, "summary.json")) as f:
        return json.load(f)


def compare_shape(name, kernel, numerics, data, summary, threads, simprec, recorded_lse=False,
                  seed=0):
    """seed: the emulation's (its random streams, e.g. split_ties=shuffled), not the inputs'."""
    shape = shape_of(summary, name)
    b_, h_, sq, sk, d, causal, kind = shape
    recorded = np.load(os.path.join(data, kernel, name + ".npz"))
    input_seed = summary.get("seed", SEED)
    q, k, v, do = (bf16_bits(t) for t in head_inputs(kind, sq, sk, d, input_seed, b_ - 1, h_ - 1))
    if sha256(q, k, v, do) != str(recorded["digest_inputs"]):
        raise SystemExit(f"{name}: the regenerated inputs' digest differs from the recording's "
                         f"digest_inputs ({sha256(q, k, v, do)} against "
                         f"{recorded['digest_inputs']}): nothing can be compared")
    spec = spec_with_dispatch(numerics, shape, summary["multiprocessors"], simprec,
                              flex_compile_of(summary, name) if kernel == "flex" else None)
    r = simprec.attention(q.reshape(1, 1, sq, d), k.reshape(1, 1, sk, d), v.reshape(1, 1, sk, d),
                          do.reshape(1, 1, sq, d), numerics=spec, input_format="bf16",
                          causal=causal, scale=kernel_scale(d), threads=threads, seed=seed,
                          reference=False, baseline=False)
    emulated = {
        "o": bits_of_bf16_values(r.o[0, 0]),
        "dq": bits_of_bf16_values(r.dq[0, 0]),
        "dk": bits_of_bf16_values(r.dk[0, 0]),
        "dv": bits_of_bf16_values(r.dv[0, 0]),
    }
    lse = np.asarray(r.lse[0, 0], dtype=np.float64).astype(np.float32)
    rows = {"o": "o_rows", "dq": "dq_rows", "dk": "k_rows", "dv": "k_rows"}
    result = {"shape": name, "dims": shape, "spec": spec}
    for out in ("o", "dq", "dk", "dv"):
        kept = recorded[rows[out]]
        result[out] = share_equal(emulated[out][kept], recorded[out])
        result["digest_" + out] = sha256(emulated[out]) == str(recorded["digest_" + out])
    if recorded_lse:
        # The backward pass again, from the emulated O and the kernel's own LSE: what remains
        # of a gradient's miss is not the LSE's (whose last bits come from the device's logf).
        again = simprec.attention(
            q.reshape(1, 1, sq, d), k.reshape(1, 1, sk, d), v.reshape(1, 1, sk, d),
            do.reshape(1, 1, sq, d), numerics=spec, input_format="bf16", causal=causal,
            scale=kernel_scale(d), threads=threads, seed=seed, reference=False, baseline=False,
            o=r.o, lse=recorded["lse"].astype(np.float64).reshape(1, 1, sq))
        for out in ("dq", "dk", "dv"):
            kept = recorded[rows[out]]
            grad = bits_of_bf16_values(getattr(again, out)[0, 0])
            result[out + "_from_lse"] = share_equal(grad[kept], recorded[out])
    result["lse"] = share_equal(lse.view(np.uint32), recorded["lse"].view(np.uint32))
    agreement = summary["shapes"][name]["kernels"][kernel].get("run_to_run_agreement", {})
    result["run_to_run"] = {out: agreement.get(out) for out in OUTPUTS}
    return result


def describe(shape):
    b_, h_, sq, sk, d, causal, kind = shape
    return f"{b_}x{h_}", f"{sq}x{sk}", d, "yes" if causal else "no", kind


def percent(x):
    return "n/a" if x is None else f"{100 * x:.3f}"


def print_table(results, markdown):
    head = ["shape", "BxH", "SqxSk", "d", "causal", "inputs", "O %", "LSE %", "dQ %", "dK %",
            "dV %", "O digest", "grad digests", "run-to-run O/dQ/dK/dV %"]
    from_lse = "dq_from_lse" in results[0]
    if from_lse:
        head.append("from recorded LSE dQ/dK/dV %")
    lines = []
    for r in results:
        bh, n, d, causal, kind = describe(r["dims"])
        grads = "".join("y" if r["digest_" + g] else "n" for g in ("dq", "dk", "dv"))
        rr = r["run_to_run"]
        run = "/".join(percent(rr[o]) for o in ("o", "dq", "dk", "dv"))
        lines.append([r["shape"], bh, n, str(d), causal, kind] +
                     [percent(r[o]) for o in OUTPUTS] +
                     ["yes" if r["digest_o"] else "no", grads, run] +
                     (["/".join(percent(r[g + "_from_lse"]) for g in ("dq", "dk", "dv"))]
                      if from_lse else []))
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + " --- |" * len(head))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for line in lines:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
    worst = {o: min(r[o] for r in results) for o in OUTPUTS}
    digests = sum(r["digest_o"] for r in results)
    print(("\n" if markdown else "") + "lowest share over the shapes: " +
          ", ".join(f"{o} {percent(worst[o])}%" for o in OUTPUTS) +
          f"; whole-head O digest equal on {digests}/{len(results)} shapes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", required=True, choices=("flash", "efficient", "flex"))
    parser.add_argument("--numerics", required=True, help="numerics spec, e.g. torch-flash")
    parser.add_argument("--shapes", default="", help="comma-separated shape names (default all)")
    parser.add_argument("--data", default=os.path.join(HERE, "..", "tests", "data",
                                                       "torch_kernels"))
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the emulation's random streams (stochastic rounding, "
                             "split_ties=shuffled)")
    parser.add_argument("--recorded-lse", action="store_true",
                        help="also run the backward pass from the recorded LSE (and the "
                             "emulated O) and print its gradients' shares")
    args = parser.parse_args()

    import simprec

    summary = load_summary(args.data, args.kernel)
    recorded = [n for n in summary["shapes"]
                if "error" not in summary["shapes"][n]["kernels"].get(args.kernel, {"error": 1})]
    names = [s for s in args.shapes.split(",") if s] or recorded
    for name in names:
        if name not in summary["shapes"]:
            raise SystemExit(f"unknown shape '{name}' (recorded: {', '.join(summary['shapes'])})")
        if "error" in summary["shapes"][name]["kernels"].get(args.kernel, {"error": "absent"}):
            raise SystemExit(f"{name}: no recording of kernel {args.kernel}")
    results = []
    for name in names:
        results.append(compare_shape(name, args.kernel, args.numerics, args.data, summary,
                                     args.threads, simprec, args.recorded_lse, args.seed))
        if not args.markdown:
            r = results[-1]
            print(f"# {name}: " + " ".join(f"{o}={percent(r[o])}" for o in OUTPUTS),
                  file=sys.stderr, flush=True)
    print(f"kernel {args.kernel}, numerics {args.numerics} (per shape: {results[0]['spec']} "
          "with that shape's batch_heads)" if results and results[0]["spec"] != args.numerics
          else f"kernel {args.kernel}, numerics {args.numerics}")
    print_table(results, args.markdown)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
