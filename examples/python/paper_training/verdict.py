"""The verdict of the training report: each finding with the confidence its data allow.

The steps of one run are the replicates for the delta error (a fresh batch each step), so
intervals and tests are taken across steps, treated as independent (a drift would make them
not, which is what the tests look for). Weight snapshots of one run are not independent of
each other; for paper B the seeds are the replicates, and they are few.
"""

import math

import numpy as np
from scipy import stats

from paper_training.summary import SPIKE_NATS, loss_summary, per_head

CONFIDENCE = 0.95
DRIFT_Z = 3.0  # the report's criterion for a drift of consistent sign, as in its tables
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


def mean_interval(values, confidence=CONFIDENCE):
    """Mean of a 1-d series, its Student-t interval across the entries, and its z (mean over
    standard error); the interval is (mean, mean) and z 0 where the entries do not vary."""
    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    se = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else 0.0
    if se == 0.0:
        return mean, mean, mean, 0.0
    half = float(stats.t.ppf(0.5 + confidence / 2, values.size - 1)) * se
    return mean, mean - half, mean + half, mean / se


def sign_test(values):
    """Entries above zero, entries not zero, and the two-sided binomial p-value of that count
    under a median of zero (1 where every entry is zero)."""
    values = np.asarray(values)
    positive, nonzero = int((values > 0).sum()), int((values != 0).sum())
    if nonzero == 0:
        return 0, 0, 1.0
    return positive, nonzero, float(stats.binomtest(positive, nonzero, 0.5).pvalue)


def rms_ratio_interval(errors, reference):
    """RMS of `errors` over RMS of `reference`, both (steps, ...) arrays of the same steps, and
    its percentile bootstrap interval, steps resampled in pairs (the runs see the same batches)."""
    a = np.square(errors).reshape(errors.shape[0], -1).mean(axis=1)
    b = np.square(reference).reshape(reference.shape[0], -1).mean(axis=1)

    def ratio(x, y, axis=-1):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sqrt(x.mean(axis=axis) / y.mean(axis=axis))

    point = float(ratio(a, b))
    if a.size < 2 or not np.isfinite(point):
        return point, math.nan, math.nan
    result = stats.bootstrap((a, b), ratio, paired=True, vectorized=True,
                             n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=CONFIDENCE,
                             method="percentile",
                             random_state=np.random.default_rng(BOOTSTRAP_SEED))
    return point, float(result.confidence_interval.low), float(result.confidence_interval.high)


def _pct(confidence=CONFIDENCE):
    return f"{100 * confidence:.0f}%"


def loss_line(runs, states, reference_runs):
    worst, spikes, nonfinite = None, [], 0
    for r in runs:
        recs = states[r.name]["records"]
        reference = states[reference_runs[r.seed]]["records"]
        s = loss_summary(recs, reference)
        nonfinite += s["nonfinite"]
        if s["spike"]:
            spikes.append(r.name)
        excess = np.array([x["loss"] for x in recs]) - np.array([x["loss"] for x in reference])
        if r.name != reference_runs[r.seed] and np.isfinite(excess).any():
            step = int(np.nanargmax(excess))
            if worst is None or excess[step] > worst[0]:
                worst = (float(excess[step]), r.name, recs[step]["step"])
    steps = len(states[runs[0].name]["records"])
    head = (f"**Loss: {'a spike in ' + ', '.join(spikes) if spikes else 'no spike'}** in "
            f"{len(runs)} runs of {steps} steps")
    detail = ""
    if worst is not None:
        detail = (f": the largest excess over the fp32 run of the same seed on the same batch is "
                  f"{worst[0]:+.4f} nats ({worst[1]}, step {worst[2]}), against a spike threshold "
                  f"of {SPIKE_NATS} nats; {nonfinite} NaN/inf losses")
    return (f"{head}{detail}. Confidence: every step was observed, so this is certain for "
            f"these {steps} steps and says nothing about longer training.")


def drift_line(run, states):
    errors = per_head(states[run.name]["records"], "delta_error")
    pooled = errors.sum(axis=(1, 2))
    mean, low, high, z = mean_interval(pooled)
    positive, nonzero, p = sign_test(pooled)
    rms = float(np.sqrt(np.mean(pooled ** 2)))
    found = abs(z) >= DRIFT_Z
    bound = max(abs(low), abs(high))
    what = "a drift of consistent sign" if found else "no drift of consistent sign detected"
    line = (f"**{run.name}: {what}** in the delta error (all layers and heads pooled): mean "
            f"{mean:+.2e} per step, {_pct()} interval [{low:+.2e}, {high:+.2e}] (Student t over "
            f"{pooled.size} steps taken as independent), z = {z:+.1f} (criterion |z| >= "
            f"{DRIFT_Z:g}); {positive} of {nonzero} steps positive (sign test p = {p:.2g})")
    if not found and rms > 0:
        line += (f"; a drift larger than {bound:.1e} per step ({100 * bound / rms:.0f}% of the "
                 f"pooled error's RMS per step, {rms:.1e}) is excluded at {_pct()}")
    return line + "."


def size_line(analysed, states, reference="paper-a"):
    names = [r.name for r in analysed]
    if reference not in names or len(names) < 2:
        return None
    base = per_head(states[reference]["records"], "delta_error")
    parts = []
    for r in analysed:
        if r.name == reference:
            continue
        point, low, high = rms_ratio_interval(per_head(states[r.name]["records"], "delta_error"),
                                              base)
        if not np.isfinite(low):
            verdict = "too few steps for an interval"
        elif high < 1:
            verdict = "smaller"
        elif low > 1:
            verdict = "larger"
        else:
            verdict = "not distinguishable"
        parts.append(f"{r.name} {point:.3g}x [{low:.3g}, {high:.3g}] ({verdict})")
    return (f"**Size of the per-step delta error against {reference}'s** (RMS over steps, "
            f"layers and heads; {_pct()} percentile bootstrap over steps resampled in pairs, "
            f"{BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}): " + "; ".join(parts) + ".")


def paper_b_line(factors):
    """factors: {seed: {"max |dw|": {step: factor}, "W1": {step: factor}}}, the factor
    (fp16 vs fp32) / (flash vs baseline) per seed at each snapshot after step 0 (what
    paper_b.png plots on its right)."""
    factors = {seed: by_measure for seed, by_measure in factors.items()
               if all(by_measure.get(m) for m in ("W1", "max |dw|"))}
    if not factors:
        return None
    seeds = sorted(factors)
    parts = []
    for measure in ("W1", "max |dw|"):
        series = [factors[s][measure] for s in seeds]
        medians = [float(np.median(list(f.values()))) for f in series]
        if all(2 <= m <= 5 for m in medians):
            verdict = "holds"
        elif all(m > 5 for m in medians):
            verdict = "holds and more (over 5x)"
        elif all(m < 2 for m in medians):
            verdict = "does not hold (under 2x)"
        else:
            verdict = "holds for some seeds only"
        moves = [f"{f[min(f)]:.2g} at step {min(f)} to {f[max(f)]:.2g} at step {max(f)}"
                 for f in series]
        # Whether snapshots of one run fall on different sides of the 2-5 band.
        leaves = any(len({(v >= 2) + (v > 5) for v in f.values()}) > 1 for f in series)
        parts.append(f"for {measure} it {verdict} by the median factor over the snapshots ("
                     + ", ".join(f"{m:.2f} for seed {s}" for s, m in zip(seeds, medians))
                     + "); the factor goes from " + " and from ".join(
                         f"{m} (seed {s})" for s, m in zip(seeds, moves))
                     + (", on both sides of 2-5 during the run, so the reading depends on the "
                        "step" if leaves else ""))
    confidence = (f"{len(seeds)} seed{'s are' if len(seeds) > 1 else ' is'} the only "
                  "independent replicate" + ("s" if len(seeds) > 1 else "") + " (the snapshots "
                  "of one run are not), too few for an interval: the values per seed are the "
                  "spread")
    return ("**Paper B, Sec. V (flash vs baseline differs 2-5x less than fp16 vs fp32):** "
            + "; ".join(parts) + f". Confidence: {confidence}.")


def verdict_lines(runs, analysed, states, reference_runs, paper_b_factors):
    lines = [loss_line(runs, states, reference_runs)]
    lines += [drift_line(r, states) for r in analysed]
    lines += [x for x in (size_line(analysed, states), paper_b_line(paper_b_factors)) if x]
    return lines
