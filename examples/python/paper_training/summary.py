"""The numbers of the report, from the runs' per-step records and weight snapshots."""

import math

import numpy as np

from paper_training.measures import weight_distances

SPIKE_NATS = 0.5  # a loss this far above the fp32 run's on the same step (same batch) is a spike


def per_head(records, name):
    """(steps, layers, heads) array of one per-step measure."""
    return np.array([[layer[name] for layer in r["layers"]] for r in records], dtype=np.float64)


def drift(values):
    """Of a (steps, ...) series: its sum, the z-score of its mean across steps (mean / (sd /
    sqrt(steps)); the steps are treated as independent, which a drift makes them not), and
    the share of steps whose sign is the sum's."""
    steps = values.shape[0]
    total = values.sum(axis=0)
    sd = values.std(axis=0, ddof=1) if steps > 1 else np.zeros_like(total)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, values.mean(axis=0) / (sd / math.sqrt(steps)), 0.0)
    same_sign = (np.sign(values) == np.sign(total)).mean(axis=0)
    return total, z, same_sign


def correlation(a, b):
    """Pearson correlation across steps, per (layer, head)."""
    a = a - a.mean(axis=0)
    b = b - b.mean(axis=0)
    denominator = np.sqrt((a * a).sum(axis=0) * (b * b).sum(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, (a * b).sum(axis=0) / denominator, 0.0)


def loss_summary(records, reference):
    """The loss of a run, and its excess over `reference` (the fp32 run of the same seed: the
    same batches and initial weights) step by step, which removes the batch-to-batch noise
    that a spike must stand out from."""
    losses = np.array([r["loss"] for r in records])
    finite = np.isfinite(losses)
    excess = losses - np.array([r["loss"] for r in reference])
    largest = float(np.max(excess[finite])) if finite.any() else math.nan
    tail = losses[-min(10, len(losses)):]
    return {"first": float(losses[0]), "last10": float(np.mean(tail)),
            "lowest": float(np.min(losses[finite])) if finite.any() else math.nan,
            "excess_last10": float(np.mean(excess[-min(10, len(excess)):])),
            "excess_max": largest, "nonfinite": int((~finite).sum()),
            "spike": bool(largest > SPIKE_NATS or not finite.all())}


def weight_pair(snapshots_a, snapshots_b):
    """max |dw| and W1 at every step both runs snapshotted: {step: (max, w1)}."""
    steps = sorted(set(snapshots_a) & set(snapshots_b))
    return {s: weight_distances(snapshots_a[s], snapshots_b[s]) for s in steps}
