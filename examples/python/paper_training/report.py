"""report.md: its tables, its plots (paper_training.plots) and its verdict."""

import numpy as np

from paper_training.plots import plot_grid, plot_loss, plot_paper_b, plot_repeats
from paper_training.summary import (SPIKE_NATS, correlation, drift, loss_summary, per_head,
                                    weight_pair)
from paper_training.verdict import verdict_lines


def _fmt(x):
    return f"{x:+.2e}"


def write_report(folder, setup, runs, states, reference_runs, paper_b_pairs, command):
    """Writes folder/report.md and folder/*.png; returns the report's text. reference_runs:
    the fp32 run of each seed."""
    analysed = [r for r in runs if r.analyse]
    lines = ["# Paper A and paper B (Sec. V) at the level of training", "",
             f"Command: `{command}`", "", "## Setup", ""]
    lines += [f"- {line}" for line in setup]
    lines += ["", "| run | attention numerics | format | rest of the model | seed | s/step |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in runs:
        st = states[r.name]
        lines.append(f"| {r.name} | `{r.numerics.spec}` | {r.numerics.format} | "
                     f"{r.numerics.model_precision} | {r.seed} | "
                     f"{st['seconds'] / max(1, st['step']):.2f} |")
    lines += ["", "## Loss", "",
              "Every run sees the same batches; its excess is its loss minus the loss of the "
              "fp32 run of its seed on the same step. A spike: an excess above "
              f"{SPIKE_NATS} nats, or a NaN/inf loss.", "",
              "| run | first | mean of last 10 | lowest | excess, mean of last 10 | largest "
              "excess | NaN/inf steps | spike |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in runs:
        reference = states[reference_runs[r.seed]]["records"]
        s = loss_summary(states[r.name]["records"], reference)
        lines.append(f"| {r.name} | {s['first']:.3f} | {s['last10']:.3f} | {s['lowest']:.3f} | "
                     f"{s['excess_last10']:+.4f} | {s['excess_max']:+.4f} | {s['nonfinite']} | "
                     f"{'yes' if s['spike'] else 'no'} |")
    lines += ["", "![loss](loss.png)", ""]
    plot_loss(folder / "loss.png", runs, states, reference_runs)
    if analysed:
        lines += _paper_a_sections(folder, analysed, states)
    factors = {}
    if paper_b_pairs:
        lines += _paper_b_section(folder, paper_b_pairs, states, factors)
    lines += ["## Verdict", ""]
    lines += [f"- {line}" for line in
              verdict_lines(runs, analysed, states, reference_runs, factors)]
    text = "\n".join(lines) + "\n"
    (folder / "report.md").write_text(text)
    return text


def _paper_a_sections(folder, analysed, states):
    lines = ["## Paper A: the delta error and where it goes", "",
             "Per step, layer and head: delta error = sum over the batch's tokens of "
             "(delta_lp - delta_hp), delta = rowsum(dO o O), lp the run's emulated backward, hp "
             "the fp64 attention on the same Q, K, V, dO. Cumulative: its sum over the steps. "
             "z: the mean per-step error over its standard error across steps (|z| > 3: a "
             "drift of consistent sign). same sign: the share of steps whose error has the "
             "cumulative sum's sign.", ""]
    for r in analysed:
        recs = states[r.name]["records"]
        total, z, same = drift(per_head(recs, "delta_error"))
        lines += [f"### {r.name}", "", "| layer | head | cumulative delta error | z | same sign |",
                  "| --- | --- | --- | --- | --- |"]
        for layer in range(total.shape[0]):
            for head in range(total.shape[1]):
                lines.append(f"| {layer} | {head} | {_fmt(total[layer, head])} | "
                             f"{z[layer, head]:+.1f} | {same[layer, head]:.2f} |")
        lines.append("")
    lines += ["![cumulative delta error](delta_drift.png)", ""]
    plot_grid(folder / "delta_drift.png", analysed, states, "delta_error",
              "cumulative delta error:\nsum over steps and tokens of delta_lp - delta_hp",
              "nats", pooled=True)

    lines += ["## The drift per numerics (all layers and heads)", "",
              "rms: of the per-step delta error over steps, layers and heads (its size). "
              "Pooled: the per-step errors of all layers and heads summed, its cumulative sum "
              "and z.", "",
              "| run | rms per step | heads with z > 3 | heads with z < -3 | median abs z | "
              "largest abs cumulative | pooled cumulative | pooled z |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in analysed:
        errors = per_head(states[r.name]["records"], "delta_error")
        total, z, _ = drift(errors)
        pooled_total, pooled_z, _ = drift(errors.sum(axis=(1, 2)))
        lines.append(f"| {r.name} | {np.sqrt(np.mean(errors ** 2)):.2e} | "
                     f"{int((z > 3).sum())} | {int((z < -3).sum())} | "
                     f"{np.median(np.abs(z)):.1f} | {np.abs(total).max():.2e} | "
                     f"{_fmt(float(pooled_total))} | {float(pooled_z):+.1f} |")
    lines += ["", "## Repeated maxima", "",
              "Share of causal score rows (rows with two or more keys) whose maximum is at "
              "two or more keys: `exact` in the fp64 scores of the bf16 Q and K, `bf16` after "
              "rounding the scores once to bf16 (paper A's S), `bf16, same byte` the bf16 ties "
              "whose tied keys all hold the same input byte. `P-bar = 1 twice in a block`: "
              "the share of (row, key block) pairs where two or more bf16 scores of the block "
              "equal the running max, so that paper A's exp(S - m) is exactly 1 at each "
              "(what paper-a's block P.V sums). Means over steps and heads.", "",
              "| run | layer | exact | bf16 | bf16, same byte | P-bar = 1 twice in a block |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in analysed:
        recs = states[r.name]["records"]
        shares = [per_head(recs, n) for n in
                  ("repeat_exact", "repeat_rounded", "repeat_rounded_same_token",
                   "repeat_block")]
        for layer in range(shares[0].shape[1]):
            lines.append(f"| {r.name} | {layer} | "
                         + " | ".join(f"{s[:, layer].mean():.4f}" for s in shares) + " |")
    lines += ["", "![repeated maxima](repeated_maxima.png)", ""]
    plot_repeats(folder / "repeated_maxima.png", analysed, states)

    lines += ["## The weight-gradient error along the rank-1 direction", "",
              "dW_Q error of a head = x^T (dQ_lp - dQ_hp) over the batch's tokens; its "
              "component u1^T E v1 along the leading singular pair of R = x^T (P K) (paper A: "
              "E ~ -scale (sum delta error) R when the tokens' x (P K)^T are alike). corr: "
              "correlation across steps between that component and the part the delta error "
              "alone predicts (-scale x^T diag(delta error) P K). share: |u1^T E v1| / |E|_F.",
              "", "| run | layer | head | cumulative along rank 1 | z | corr with delta's part "
              "| mean share |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in analysed:
        recs = states[r.name]["records"]
        rank1 = per_head(recs, "rank1_error")
        total, z, _ = drift(rank1)
        corr = correlation(rank1, per_head(recs, "rank1_error_from_delta"))
        share = per_head(recs, "rank1_share").mean(axis=0)
        for layer in range(total.shape[0]):
            for head in range(total.shape[1]):
                lines.append(f"| {r.name} | {layer} | {head} | {_fmt(total[layer, head])} | "
                             f"{z[layer, head]:+.1f} | {corr[layer, head]:+.2f} | "
                             f"{share[layer, head]:.3f} |")
    lines += ["", "![rank-1 error](rank1.png)", ""]
    plot_grid(folder / "rank1.png", analysed, states, "rank1_error",
              "cumulative dW_Q error along rank 1, u1^T E v1", "nats per unit of W_Q")
    return lines


def _paper_b_section(folder, pairs, states, factors):
    """The section's lines; fills `factors` with {seed: {measure: {step: factor}}}, the factor
    (fp16 vs fp32) / (flash vs baseline) per seed at each snapshot after step 0, for the
    verdict and the plot."""
    lines = ["## Paper B, Sec. V: weights trained with flash vs baseline attention", "",
             "max |dw| and the Wasserstein-1 distance between the value distributions of all "
             "weights, between two runs at the same step. Paper B: flash vs baseline differs "
             "2-5x less than fp16 vs fp32 training. factor = (fp16 vs fp32) / (flash vs "
             "baseline), at the last step and as the median over the snapshots after step 0.",
             "", "| seed | pair | max abs dw (last) | W1 (last) |", "| --- | --- | --- | --- |"]
    distances = {}
    for seed, seed_pairs in pairs.items():
        for label, (a, b) in seed_pairs.items():
            d = weight_pair(states[a]["snapshots"], states[b]["snapshots"])
            distances[(seed, label)] = d
            last = d[max(d)]
            lines.append(f"| {seed} | {label} ({a} vs {b}) | {last[0]:.3e} | {last[1]:.3e} |")
    lines += ["", "| seed | factor max abs dw (last / median) | factor W1 (last / median) |",
              "| --- | --- | --- |"]
    for seed, seed_pairs in pairs.items():
        if "flash vs baseline" not in seed_pairs or "fp16 vs fp32" not in seed_pairs:
            continue
        f = distances[(seed, "flash vs baseline")]
        p = distances[(seed, "fp16 vs fp32")]
        cells = []
        for i, measure in enumerate(("max |dw|", "W1")):
            steps = [s for s in sorted(f) if s > 0 and f[s][i] > 0]
            last = max(f)
            ratio_last = p[last][i] / f[last][i] if f[last][i] > 0 else float("inf")
            ratios = {s: p[s][i] / f[s][i] for s in steps}
            median = np.median(list(ratios.values())) if steps else float("nan")
            factors.setdefault(seed, {})[measure] = ratios
            cells.append(f"{ratio_last:.2f} / {median:.2f}")
        lines.append(f"| {seed} | {cells[0]} | {cells[1]} |")
    lines += ["", "![paper B](paper_b.png)", ""]
    plot_paper_b(folder / "paper_b.png", distances, factors)
    return lines
