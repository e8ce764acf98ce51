"""Tables of comparison results, as plain text (columns padded to their widest cell) or
markdown: compare_torch's per-shape table and the rendering bench_table shares."""

from simprec.recordings.layout import OUTPUTS


def percent(share):
    """A share in [0, 1] as a percentage with 3 decimals; "n/a" for None."""
    return "n/a" if share is None else f"{100 * share:.3f}"


def render(head, rows, markdown):
    """The lines of a table of string cells: markdown, or plain text whose columns are
    left-aligned and padded to their widest cell, two spaces apart."""
    if markdown:
        return (["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)] +
                ["| " + " | ".join(row) + " |" for row in rows])
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(head)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)) for line in [head] + rows]


def describe(dims):
    """(BxH, SqxSk, d, causal, kind) cells of a shape (B, H, Sq, Sk, d, causal, kind)."""
    b_, h_, sq, sk, d, causal, kind = dims
    return f"{b_}x{h_}", f"{sq}x{sk}", str(d), "yes" if causal else "no", kind


def results_table(results, markdown):
    """The lines compare_torch prints for its results (one dict per shape, compare_shape's):
    a row per shape with the share of bit-identical elements of each output, whether the whole
    head's digests match and the recorded run-to-run agreement, then the lowest share of each
    output over the shapes."""
    head = ["shape", "BxH", "SqxSk", "d", "causal", "inputs", "O %", "LSE %", "dQ %", "dK %",
            "dV %", "O digest", "grad digests", "run-to-run O/dQ/dK/dV %"]
    from_lse = "dq_from_lse" in results[0]
    if from_lse:
        head.append("from recorded LSE dQ/dK/dV %")
    rows = []
    for r in results:
        grads = "".join("y" if r["digest_" + g] else "n" for g in ("dq", "dk", "dv"))
        run = "/".join(percent(r["run_to_run"][o]) for o in ("o", "dq", "dk", "dv"))
        rows.append([r["shape"], *describe(r["dims"])] + [percent(r[o]) for o in OUTPUTS] +
                    ["yes" if r["digest_o"] else "no", grads, run] +
                    (["/".join(percent(r[g + "_from_lse"]) for g in ("dq", "dk", "dv"))]
                     if from_lse else []))
    worst = {o: min(r[o] for r in results) for o in OUTPUTS}
    digests = sum(r["digest_o"] for r in results)
    return render(head, rows, markdown) + [
        ("\n" if markdown else "") + "lowest share over the shapes: " +
        ", ".join(f"{o} {percent(worst[o])}%" for o in OUTPUTS) +
        f"; whole-head O digest equal on {digests}/{len(results)} shapes"]
