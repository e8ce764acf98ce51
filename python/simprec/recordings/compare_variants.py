"""Compare the emulation with the recorded attention variants (tests/data/torch_variants).

    PYTHONPATH=build/python /usr/bin/python3 scripts/compare_attention_variants.py \\
        [--data tests/data/torch_variants] [--cases NAME,...] [--backends flash,...]
        [--numerics BACKEND=SPEC ...] [--markdown] [--json FILE] [--threads 0]

For every recorded case (scripts/record_attention_variants.py made them) it draws the last batch
element's inputs again (simprec.recordings.variants), checks them against the recording's
digest, and runs them through simprec's PyTorch entry points as a user would: simprec.torch.
attention with SDPA's arguments (attn_mask, is_causal, scale, enable_gqa) for the flash,
memory-efficient and cuDNN backends, simprec.torch.flex_attention (score_mod, mask_mod,
enable_gqa) for FlexAttention, with the backend's preset (BACKEND_NUMERICS, or --numerics) and
the recorded run's batch x heads and multiprocessor count where the preset takes them. Per case
it prints the share of bit-identical values of O, the LSE, dQ, dK and dV on the recorded rows
(query head H-1, key/value head Hkv-1), whether the whole heads' digests match, and the
kernel's own run-to-run agreement.
"""

import argparse
import json
import os
import sys

import numpy as np

from simprec.recordings import layout, variants
from simprec.recordings.bits import float32_bits, sha256, share_equal, tensor_bits
from simprec.recordings.compare_torch import spec_with_dispatch
from simprec.recordings.layout import OUTPUTS, RecordingError
from simprec.recordings.table import percent, render

DEFAULT_DATA = os.path.join("tests", "data", "torch_variants")
# What each backend is predicted with. cuDNN's closed kernel: see docs/attention_variants.md.
BACKEND_NUMERICS = {"flash": "torch-flash", "efficient": "torch-efficient",
                    "flex": "torch-flex,flex_compile=static", "cudnn": "torch-cudnn"}


def _inputs(case):
    """The last batch element's q, k, v, dO as torch tensors of the case's dtype ([1, H, ...])."""
    import torch
    dtype = variants.torch_dtype(case)
    arrays = variants.inputs_float32(case, batches=[case.batch - 1])
    return [torch.from_numpy(x).to(dtype) for x in arrays]


def _scale(case):
    """The softmax scale as the recording passed it to PyTorch (None: SDPA's default); PyTorch
    hands it to the kernels as a float32, which the presets model (softmax_scale=fp32)."""
    return case.scale


def _run(case, numerics, q, k, v, do, threads):
    """O, LSE, dQ, dK, dV of the emulation, run through simprec.torch."""
    import torch

    import simprec.torch as st
    q, k, v = (t.clone().requires_grad_(True) for t in (q, k, v))
    gqa = case.heads_kv != case.heads
    common = dict(numerics=numerics, threads=threads)
    if case.backend == "flex":
        score_mod = None
        if case.score_mod == "softcap":
            score_mod = st.SoftCap(case.softcap)
        elif case.score_mod == "alibi":
            score_mod = st.Alibi(variants.alibi_slopes(case.heads))
        elif case.score_mod is not None:  # the recorded callable itself, traced by simprec
            score_mod = variants.score_mod(case, torch)
        o, lse = st.flex_attention(q, k, v, score_mod=score_mod, scale=_scale(case),
                                   enable_gqa=gqa, return_lse=True,
                                   mask_mod=variants.mask_mod(case, torch), **common)
        o.backward(do)
    else:
        mask = variants.attn_mask(case, torch, [case.batch - 1], range(case.heads))
        if case.mask == "causal-lower-right":
            mask = st.causal_lower_right(case.sq, case.sk)
        calls = []
        o = st.attention(q, k, v, attn_mask=mask, is_causal=case.mask == "causal",
                         scale=_scale(case), enable_gqa=gqa, on_backward=calls.append, **common)
        o.backward(do)
        lse = torch.from_numpy(calls[0].result.lse)
    return o.detach(), lse.detach(), q.grad, k.grad, v.grad


def compare_case(name, data, summary, numerics=None, threads=0):
    """The shares of one recorded case (a dict, compare's row)."""
    case = variants.CASES[name]
    recorded = np.load(os.path.join(data, "cases", name + ".npz"))
    q, k, v, do = _inputs(case)
    digest = sha256(*(tensor_bits(t[0]) for t in (q, k, v, do)))
    if digest != str(recorded["digest_inputs"]):
        raise RecordingError(f"{name}: the regenerated inputs differ from the recorded ones "
                             f"(digest {digest}, recorded {recorded['digest_inputs']})")
    spec = numerics or BACKEND_NUMERICS[case.backend]
    shape = (case.batch, case.heads, case.sq, case.sk, case.d, case.mask == "causal", case.kind)
    spec = spec_with_dispatch(spec, shape, summary["multiprocessors"])
    o, lse, dq, dk, dv = _run(case, spec, q, k, v, do, threads)
    h, hk = case.heads - 1, case.heads_kv - 1
    fmt = case.dtype
    heads = {"o": tensor_bits(o[0, h]), "dq": tensor_bits(dq[0, h]), "dk": tensor_bits(dk[0, hk]),
             "dv": tensor_bits(dv[0, hk])}
    result = {"case": name, "spec": spec, "held_out": case.held_out}
    for out, bits in heads.items():
        rows = recorded[layout.ROWS_OF[out]]
        result[out] = share_equal(bits[rows], recorded[out], fmt)
        result["digest_" + out] = sha256(bits) == str(recorded["digest_" + out])
    result["lse"] = (share_equal(float32_bits(lse[0, h].double().numpy()),
                                 recorded["lse"].view(np.uint32), "fp32")
                     if "lse" in recorded else None)
    agreement = summary["cases"][name].get("run_to_run_agreement", {})
    result["run_to_run"] = {out: agreement.get(out) for out in OUTPUTS}
    return result


def table(results, markdown):
    head = ["backend", "variant", "shape", "held out", "O %", "LSE %", "dQ %", "dK %", "dV %",
            "digests O/dQ/dK/dV", "run-to-run dQ %"]
    rows = []
    for r in results:
        case = variants.CASES[r["case"]]
        shape = case.name.split("_", 2)[2].replace("_heldout", "")
        digests = "".join("y" if r["digest_" + o] else "n" for o in ("o", "dq", "dk", "dv"))
        rows.append([case.backend, case.variant, shape, "yes" if case.held_out else "no"] +
                    [percent(r[o]) for o in OUTPUTS] + [digests, percent(r["run_to_run"]["dq"])])
    return render(head, rows, markdown)


def main(argv=None, repository="."):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(repository, DEFAULT_DATA))
    parser.add_argument("--cases", default="")
    parser.add_argument("--backends", default="flash,efficient,flex,cudnn")
    parser.add_argument("--numerics", action="append", default=[],
                        help="BACKEND=SPEC: the spec to run that backend's cases with")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    with open(os.path.join(args.data, layout.SUMMARY)) as f:
        summary = json.load(f)
    overrides = dict(item.split("=", 1) for item in args.numerics)
    names = [n for n in args.cases.split(",") if n] or [
        n for n, c in summary["cases"].items() if "error" not in c]
    backends = set(args.backends.split(","))
    results = []
    try:
        for name in names:
            if name not in summary["cases"] or "error" in summary["cases"][name]:
                raise RecordingError(f"{name}: not a recorded case of {args.data}")
            case = variants.CASES[name]
            if case.backend not in backends:
                continue
            r = compare_case(name, args.data, summary, overrides.get(case.backend), args.threads)
            results.append(r)
            print(f"# {name}: " + " ".join(f"{o}={percent(r[o])}" for o in OUTPUTS),
                  file=sys.stderr, flush=True)
    except RecordingError as error:
        raise SystemExit(str(error)) from None
    print("\n".join(table(results, args.markdown)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0
