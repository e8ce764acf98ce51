"""The FP8 training report: loss per run, its excess over the fp32 run on the same batches, plots
and a verdict with the confidence its data allow.

One seed per run, so the steps are the only replicates, and neighbouring steps are not
independent (the weights carry over): the intervals are Student-t over the means of blocks of
BLOCK steps of the second half of the run, which are much less correlated than single steps;
they still understate the spread another seed would show.
"""

import numpy as np

from paper_training.verdict import mean_interval, sign_test

BLOCK = 10


def losses(state):
    return np.array([r["loss"] for r in state["records"]], dtype=np.float64)


def excess_blocks(state, reference):
    """Means of the loss excess over `reference` in blocks of BLOCK steps of the second half
    (single steps where the half is shorter than a block), and the block's length."""
    excess = losses(state) - losses(reference)
    half = excess[excess.size // 2:]
    blocks = half[:half.size // BLOCK * BLOCK].reshape(-1, BLOCK)
    return (blocks.mean(axis=1), BLOCK) if blocks.size else (half, 1)


def excess_line(name, state, reference, against="fp32"):
    blocks, length = excess_blocks(state, reference)
    if not np.isfinite(blocks).all():
        return f"**{name}: non-finite losses** in the second half; no interval."
    mean, low, high, _ = mean_interval(blocks)
    positive, nonzero, p = sign_test(blocks)
    if low > 0:
        verdict = f"higher than {against}'s"
    elif high < 0:
        verdict = f"lower than {against}'s"
    else:
        verdict = f"not distinguishable from {against}'s"
    return (f"**{name}: loss {verdict}** over the second half: mean excess {mean:+.4f} nats, "
            f"95% interval [{low:+.4f}, {high:+.4f}] (Student t over {blocks.size} blocks of "
            f"{length} step{'s' if length > 1 else ''}); {positive} of {nonzero} blocks above (sign test p = {p:.2g}).")


def peak_line(name, state, reference):
    """The largest excess over `reference` as a mean of BLOCK consecutive steps, and where."""
    excess = losses(state) - losses(reference)
    if excess.size < BLOCK or not np.isfinite(excess).all():
        return None
    means = np.convolve(excess, np.ones(BLOCK) / BLOCK, mode="valid")
    start = int(np.argmax(means))
    return (f"**{name}: largest excess** {means[start]:+.4f} nats as a mean of steps {start} to "
            f"{start + BLOCK - 1} (every step observed: certain for this run).")


def plot(names, states, reference, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name in names:
        loss = losses(states[name])
        ax1.plot(np.arange(loss.size), loss, label=name, linewidth=1)
        if name != reference:
            excess = loss - losses(states[reference])
            kernel = np.ones(BLOCK) / BLOCK
            smooth = np.convolve(excess, kernel, mode="valid")
            ax2.plot(np.arange(smooth.size) + BLOCK - 1, smooth, label=name, linewidth=1)
    ax1.set_xlabel("step")
    ax1.set_ylabel("loss (nats)")
    ax1.set_title("training loss")
    ax1.legend(fontsize=8)
    ax2.axhline(0, color="black", linewidth=0.8)
    ax2.set_xlabel("step")
    ax2.set_ylabel(f"loss − {reference} loss (nats), mean of {BLOCK} steps")
    ax2.set_title(f"excess over {reference} on the same batches")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(out, setup, runs, states, reference, command, pairs=()):
    """OUT/report.md and OUT/loss.png. pairs: (a, b) run names whose losses are compared
    directly (b as the reference)."""
    names = [r.name for r in runs]
    plot(names, states, reference, out / "loss.png")
    lines = ["# FP8 training of the tiny GPT, emulated on the CPU", "", f"Command: `{command}`",
             ""] + [f"- {s}" for s in setup] + ["", "| run | attention | linear layers | "
                                                "first loss | last 10 (mean) | excess over "
                                                f"{reference}, last 10 | s/step |",
                                                "| --- | --- | --- | --- | --- | --- | --- |"]
    ref = losses(states[reference])
    for r in runs:
        loss = losses(states[r.name])
        st = states[r.name]
        lines.append(f"| {r.name} | {r.numerics.spec} ({r.numerics.format}) | "
                     f"{r.linear or 'PyTorch fp32'} | {loss[0]:.4f} | {loss[-10:].mean():.4f} | "
                     f"{(loss - ref)[-10:].mean():+.4f} | "
                     f"{st['seconds'] / max(1, st['step']):.2f} |")
    lines += ["", "![loss](loss.png)", "", "## Verdict", ""]
    for r in runs:
        if r.name != reference:
            lines.append("- " + excess_line(r.name, states[r.name], states[reference]))
            peak = peak_line(r.name, states[r.name], states[reference])
            if peak:
                lines.append("- " + peak)
    for a, b in pairs:
        if a in states and b in states:
            lines.append("- " + excess_line(f"{a} against {b}", states[a], states[b], b))
    lines += ["", "Confidence: one seed per run; the blocks of one run are not fully "
              "independent (the weights carry over), so the intervals understate what another "
              "seed would show; every step was observed, so the losses themselves are certain "
              "for these steps.", ""]
    (out / "report.md").write_text("\n".join(lines))
