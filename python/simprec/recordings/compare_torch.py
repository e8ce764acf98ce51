"""Compare an emulation's numerics with the recorded PyTorch kernels (tests/data/torch_kernels).

    PYTHONPATH=build/python /usr/bin/python3 scripts/compare_torch_recordings.py \\
        --kernel flash|efficient|flex --numerics SPEC [--shapes NAME,...] [--markdown]
        [--data tests/data/torch_kernels] [--threads 0] [--seed 0]

For every recorded shape (scripts/record_torch_attention.py made them) it regenerates the
recorded head's bf16 inputs exactly as the recording did (head_inputs, PCG64; the conversion
float64 -> bf16 that PyTorch's CPU .to(torch.bfloat16) performs) and checks them against the
recorded digest_inputs (a mismatch stops the script: the comparison would be meaningless). It
runs the emulation through the Python package for that one head (B = 1, H = 1, the shape's Sq,
Sk, d and causal mask, scale 1/sqrt(d) rounded to float32 as the kernels receive it) and prints
per shape the share of bit-identical elements of O, LSE, dQ, dK and dV on the recorded rows,
whether the whole head's O (and dQ, dK, dV) digests match, and the recorded run-to-run
agreement of each output (the bound where the kernel is not deterministic).

Dispatch parameters that depend on the whole batch reach the preset as structural options:
where the numerics spec accepts the options `batch_heads` and `sms`, the script sets
batch_heads = B * H of the recorded shape and sms = the recording's multiprocessor count
(unless SPEC sets them itself).

The LSE is compared as float32 bit patterns (the recording keeps the kernel's fp32 LSE; the
emulation's LSE, a value of its lse site's format, is converted to float32 exactly when that
format is fp32).
"""

import argparse
import json
import math
import os
import sys

import numpy as np

import simprec
from simprec.recordings import layout
from simprec.recordings.bits import bits_of_bf16_values, float32_bits, sha256, share_equal
from simprec.recordings.flex_compile import compiled_for_of
from simprec.recordings.inputs import SEED, heads_bf16_bits
from simprec.recordings.layout import OUTPUTS, ROWS_OF, RecordingError
from simprec.recordings.table import percent, results_table

DEFAULT_DATA = os.path.join("tests", "data", "torch_kernels")


def accepts(spec):
    """Whether the numerics spec is valid (with the options it sets)."""
    try:
        simprec.attention_config(spec)
        return True
    except ValueError:
        return False


def spec_with_dispatch(numerics, shape, multiprocessors, compiled_for=None):
    """The numerics spec, with batch_heads and sms added where the configuration has them, and
    compiled_for (the recording's, for FlexAttention) unless the spec sets it."""
    b_, h_ = shape[0], shape[1]
    items = [s.strip().split("=")[0] for s in numerics.split(",")]
    spec = numerics
    extra = (("compiled_for", compiled_for),) if compiled_for else ()
    for key, value in (("batch_heads", b_ * h_), ("sms", multiprocessors)) + extra:
        if key not in items and accepts(f"{spec},{key}={value}"):
            spec += f",{key}={value}"
    return spec


def kernel_scale(d):
    """The softmax scale the kernels compute with: PyTorch passes 1/sqrt(d), computed in double,
    to the flash, memory-efficient and FlexAttention kernels as a float32."""
    return float(np.float32(1.0 / math.sqrt(d)))


def compare_shape(name, kernel, numerics, data, summary, *, threads=0, recorded_lse=False,
                  seed=0, gradients=True):
    """The comparison of one recorded shape: per output the share of bit-identical elements on
    the recorded rows, digest_* whether the whole head's output has the recorded digest,
    run_to_run the recorded agreement, spec the numerics spec run; with recorded_lse, the
    gradients' shares again from the kernel's own LSE (*_from_lse). seed: the emulation's (its
    random streams, e.g. split_ties=shuffled), not the inputs'. gradients=False compares O and
    the LSE alone (the forward pass). Raises RecordingError where the regenerated inputs are not
    the recorded ones."""
    shape = layout.shape_of(summary, name)
    b_, h_, sq, sk, d, causal, kind = shape
    recorded = layout.load_head(data, kernel, name)
    inputs = heads_bf16_bits(kind, sq, sk, d, summary.get("seed", SEED), [(b_ - 1, h_ - 1)])
    digest = sha256(*inputs)
    if digest != str(recorded["digest_inputs"]):
        raise RecordingError(f"{name}: the regenerated inputs' digest differs from the "
                             f"recording's digest_inputs ({digest} against "
                             f"{recorded['digest_inputs']}): nothing can be compared")
    q, k, v, do = (t.reshape(1, 1, -1, d) for t in inputs)
    spec = spec_with_dispatch(numerics, shape, summary["multiprocessors"],
                              compiled_for_of(summary, name) if kernel == "flex" else None)
    options = dict(numerics=spec, input_format="bf16", causal=causal, scale=kernel_scale(d),
                   threads=threads, seed=seed, reference=False, baseline=False)
    r = simprec.attention(q, k, v, do if gradients else None, **options)
    result = {"shape": name, "dims": shape, "spec": spec}
    for out in ("o", "dq", "dk", "dv") if gradients else ("o",):
        emulated = bits_of_bf16_values(getattr(r, out)[0, 0])
        result[out] = share_equal(emulated[recorded[ROWS_OF[out]]], recorded[out], "bf16")
        result["digest_" + out] = sha256(emulated) == str(recorded["digest_" + out])
    if recorded_lse:
        # The backward pass again, from the emulated O and the kernel's own LSE: what remains
        # of a gradient's miss is not the LSE's (whose last bits come from the device's logf).
        again = simprec.attention(q, k, v, do, **options, o=r.o,
                                  lse=recorded["lse"].astype(np.float64).reshape(1, 1, sq))
        for out in ("dq", "dk", "dv"):
            grad = bits_of_bf16_values(getattr(again, out)[0, 0])
            result[out + "_from_lse"] = share_equal(grad[recorded[ROWS_OF[out]]], recorded[out],
                                                    "bf16")
    result["lse"] = share_equal(float32_bits(r.lse[0, 0]), recorded["lse"].view(np.uint32),
                                "fp32")
    result["run_to_run"] = layout.run_to_run(summary, name, kernel)
    return result


def parse_arguments(argv, repository):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", required=True, choices=layout.KERNELS)
    parser.add_argument("--numerics", required=True, help="numerics spec, e.g. torch-flash")
    parser.add_argument("--shapes", default="", help="comma-separated shape names (default all)")
    parser.add_argument("--data", default=os.path.join(repository, DEFAULT_DATA))
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the emulation's random streams (stochastic rounding, "
                             "split_ties=shuffled)")
    parser.add_argument("--recorded-lse", action="store_true",
                        help="also run the backward pass from the recorded LSE (and the "
                             "emulated O) and print its gradients' shares")
    return parser.parse_args(argv)


def compare(args):
    summary = layout.load_summary(args.data, args.kernel)
    names = layout.select_shapes(summary, args.kernel, [s for s in args.shapes.split(",") if s])
    if not names:
        raise RecordingError(f"{args.data}: no recording of kernel {args.kernel}")
    results = []
    for name in names:
        results.append(compare_shape(name, args.kernel, args.numerics, args.data, summary,
                                     threads=args.threads, recorded_lse=args.recorded_lse,
                                     seed=args.seed))
        if not args.markdown:
            r = results[-1]
            print(f"# {name}: " + " ".join(f"{o}={percent(r[o])}" for o in OUTPUTS),
                  file=sys.stderr, flush=True)
    return results


def main(argv=None, repository="."):
    """The command line (scripts/compare_torch_recordings.py); --data defaults to
    tests/data/torch_kernels under `repository`."""
    args = parse_arguments(argv, repository)
    try:
        results = compare(args)
    except RecordingError as error:
        raise SystemExit(str(error)) from None
    print(f"kernel {args.kernel}, numerics {args.numerics} (per shape: {results[0]['spec']} "
          "with that shape's batch_heads)" if results[0]["spec"] != args.numerics
          else f"kernel {args.kernel}, numerics {args.numerics}")
    print("\n".join(results_table(results, args.markdown)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0
