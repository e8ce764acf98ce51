"""The report's plots (matplotlib, Agg backend: no display needed). Panels that are compared
share their scale, legends sit outside the data, every axis says what it holds and in what unit.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as ticker  # noqa: E402
import numpy as np  # noqa: E402

from paper_training.summary import per_head  # noqa: E402
from paper_training.verdict import DRIFT_Z  # noqa: E402

DPI = 90
# The loss, and what rounding does to it, in one unit: nats per predicted byte.
LOSS_UNIT = "nats/byte"


def _save(fig, path):
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def _power_of_ten(values):
    """The power of ten that brings the largest |value| into [1, 10): an axis in units of it
    needs no offset text of its own on every panel."""
    largest = float(np.max(np.abs(values))) if np.size(values) else 0.0
    return int(np.floor(np.log10(largest))) if np.isfinite(largest) and largest > 0 else 0


def _unit(power, unit):
    return f"{unit}" if power == 0 else f"1e{power} {unit}"


def _legend_right(fig, ax, **kwargs):
    fig.legend(*ax.get_legend_handles_labels(), loc="center left", bbox_to_anchor=(1.0, 0.5),
               fontsize=8, frameon=False, **kwargs)


def plot_loss(path, runs, states, reference_runs):
    """The fp32 loss of each seed on top; below it, every other run's excess over it on the
    same batch, which is where runs differ (their losses coincide to a few 1e-4 nats): paper A's
    runs (emulated attention, fp32 model) and paper B's (fp16 training) side by side, on one
    scale."""
    others = [r for r in runs if r.name not in reference_runs.values()]
    groups = [(title, members) for title, members in (
        ("paper A: attention numerics, fp32 model", [r for r in others if r.analyse]),
        ("paper B: fp16 training", [r for r in others if not r.analyse])) if members]
    fig = plt.figure(figsize=(11, 7))
    grid = fig.add_gridspec(2, max(1, len(groups)), height_ratios=[1, 1.4])
    top = fig.add_subplot(grid[0, :])
    for seed, name in sorted(reference_runs.items()):
        if name not in states:
            continue
        recs = states[name]["records"]
        top.plot([x["step"] for x in recs], [x["loss"] for x in recs], lw=1.2,
                 label=f"{name} (seed {seed})")
    top.set_ylabel(f"training loss\n({LOSS_UNIT})")
    top.set_xlabel("training step")
    top.set_title("fp32 training, one line per seed", fontsize=9)
    top.legend(fontsize=8, loc="upper right")
    excess = {r.name: np.array([x["loss"] - y["loss"] for x, y in zip(
        states[r.name]["records"], states[reference_runs[r.seed]]["records"])]) for r in others}
    power = _power_of_ten(np.concatenate(list(excess.values())) if excess else [])
    first = None
    for column, (title, members) in enumerate(groups):
        ax = fig.add_subplot(grid[1, column], sharey=first)
        first = first or ax
        for r in members:
            steps = [x["step"] for x in states[r.name]["records"]]
            ax.plot(steps, excess[r.name] / 10.0 ** power, lw=1, label=r.name)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xlabel("training step")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2,
                  frameon=False)
        if column == 0:
            ax.set_ylabel(f"loss minus the fp32 loss of its\nseed, same batch "
                          f"({_unit(power, LOSS_UNIT)})")
    fig.tight_layout()
    _save(fig, path)


def plot_grid(path, runs, states, measure, ylabel, unit, pooled=False):
    """Cumulative sums of a per-head measure, one row per run and one column per layer, on one
    scale for all panels (a run that rounds less shows as a flatter line, not as noise rescaled).
    pooled: a last column with the sum over all layers and heads and the band a sum without
    drift stays inside (|z| < DRIFT_Z at every step), the quantity the verdict tests. Returns
    the y label and every panel's y limits, for a check that they are one scale."""
    layers = len(states[runs[0].name]["records"][0]["layers"])
    columns = layers + (1 if pooled else 0)
    values = {r.name: per_head(states[r.name]["records"], measure) for r in runs}
    cumulative_sums = [np.cumsum(v, axis=0) for v in values.values()]
    if pooled:
        cumulative_sums += [np.cumsum(v.sum(axis=(1, 2))) for v in values.values()]
    power = _power_of_ten([np.abs(c).max() for c in cumulative_sums])
    scale = 10.0 ** power
    fig, axes = plt.subplots(len(runs), columns, figsize=(3.6 * columns, 1.9 * len(runs) + 0.8),
                             sharex=True, sharey=True, squeeze=False)
    for i, r in enumerate(runs):
        steps = np.arange(1, values[r.name].shape[0] + 1)
        cumulative = np.cumsum(values[r.name], axis=0) / scale
        for layer in range(layers):
            ax = axes[i][layer]
            for head in range(cumulative.shape[2]):
                ax.plot(steps, cumulative[:, layer, head], lw=1, label=f"head {head}")
            ax.set_title(f"{r.name}, layer {layer}", fontsize=8)
        if pooled:
            ax = axes[i][layers]
            total = values[r.name].sum(axis=(1, 2)) / scale
            sd = total.std(ddof=1) if total.size > 1 else 0.0
            band = DRIFT_Z * sd * np.sqrt(steps)
            ax.fill_between(steps, -band, band, color="0.85",
                            label=f"where a sum without drift stays (|z| < {DRIFT_Z:g})")
            ax.plot(steps, np.cumsum(total), color="black", lw=1.2,
                    label="all layers and heads")
            ax.set_title(f"{r.name}, pooled", fontsize=8)
        for ax in axes[i]:
            ax.axhline(0, color="black", lw=0.5)
            ax.tick_params(labelsize=7)
    handles, labels = [], []
    for ax in (axes[0][0], axes[0][columns - 1]) if pooled else (axes[0][0],):
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0),
               ncol=len(labels), fontsize=8, frameon=False)
    for ax in axes[-1]:
        ax.set_xlabel("training step", fontsize=8)
    label = f"{ylabel} ({_unit(power, unit)})"
    fig.supylabel(label, fontsize=9)
    fig.tight_layout()
    limits = [ax.get_ylim() for ax in axes.flat]
    _save(fig, path)
    return label, limits


def plot_repeats(path, runs, states):
    layers = len(states[runs[0].name]["records"][0]["layers"])
    fig, axes = plt.subplots(1, layers, figsize=(4.5 * layers, 3.4), sharey=True, squeeze=False)
    for r in runs:
        rounded = per_head(states[r.name]["records"], "repeat_rounded").mean(axis=2)
        for layer in range(layers):
            axes[0][layer].plot(np.arange(rounded.shape[0]), 100 * rounded[:, layer], lw=1,
                                label=r.name)
    for layer in range(layers):
        axes[0][layer].set_title(f"layer {layer}", fontsize=9)
        axes[0][layer].set_xlabel("training step")
        axes[0][layer].set_ylim(bottom=0)
    axes[0][0].set_ylabel("score rows whose bf16 maximum\nis at two or more keys (%)")
    _legend_right(fig, axes[0][0])
    fig.tight_layout()
    _save(fig, path)


def plot_paper_b(path, distances, factors_by_step):
    """The two distances per pair of runs, and their factor (fp16 vs fp32) / (flash vs
    baseline) per seed, the quantity the verdict quotes, beside the paper's 2-5x."""
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    names = ("max |dw|", "W1")
    for (seed, label), d in distances.items():
        steps = sorted(d)
        name = label if "seed" in label else f"{label}, seed {seed}"
        for i in (0, 1):
            axes[i].plot(steps, [d[s][i] for s in steps], lw=1, label=name)
    for i, name in enumerate(names):
        axes[i].set_yscale("symlog", linthresh=1e-9)
        axes[i].set_title(f"{name} between the two runs' weights", fontsize=9)
        axes[i].set_ylabel(f"{name} (weight units)")
        axes[i].set_xlabel("training step")
    ax = axes[2]
    ax.axhspan(2, 5, color="0.88", label="paper B: 2-5x")
    ax.axhline(1, color="black", lw=0.6)
    for seed, by_measure in sorted(factors_by_step.items()):
        for name, ls in zip(names, ("--", "-")):
            points = by_measure.get(name, {})
            steps = sorted(points)
            ax.plot(steps, [points[s] for s in steps], ls=ls, marker=".", lw=1,
                    label=f"{name}, seed {seed}")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_title("factor: (fp16 vs fp32) / (flash vs baseline)", fontsize=9)
    ax.set_ylabel("factor (1 = as far apart)")
    ax.set_xlabel("training step")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center",
               bbox_to_anchor=(0.36, 0.0), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    _save(fig, path)
