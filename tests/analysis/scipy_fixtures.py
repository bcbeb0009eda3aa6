#!/usr/bin/env python3
"""The reference values of tests/analysis/scipy_test.cpp, computed with SciPy (or, where SciPy has no
such function, by brute-force enumeration of the permutation distribution), so the C++ statistics
are checked against an implementation that shares none of their code.

  python3 -m venv /tmp/scipy && /tmp/scipy/bin/pip install scipy==1.17.1 numpy==2.4.6
  /tmp/scipy/bin/python tests/analysis/scipy_fixtures.py > tests/analysis/golden/scipy.txt

(the committed file was made with SciPy 1.17.1 and NumPy 2.4.6; it reads the rounds of two of the
issue's repro rows from data/cutlass/yardstick-run2.csv). Each line is a record:
  mannwhitney METHOD P | X... | Y...      SciPy mannwhitneyu(x, y), method auto; METHOD = the one it took
  wilcoxon METHOD P | D...                SciPy wilcoxon(d), defaults (zero_method wilcox, no correction,
                                          method auto: exact, permutation (ties or zeros, n <= 13) or approx)
  median_ci N LO HI COVERAGE              the distribution-free 95% CI of the median: ranks, coverage (binom)
  shift_ci LO HI COVERAGE | X... | Y...   Hodges-Lehmann 95% interval of x - y (enumerated U distribution)
  paired_ci LO HI COVERAGE | D...         Walsh-average 95% interval of d (enumerated signed-rank distribution)
  verdict VERDICT | D...                  the paired verdict at a 2% margin on log speed-ups d, from paired_ci
  runs_needed R POWER | L...              the runs at which Student's t interval of the mean of the runs'
                                          log speed-ups L would decide at a 2% margin (t quantiles at R runs;
                                          POWER 0: the interval alone, else with that chance)
  trials_needed BOOT | D...               the smallest N at which half of 400 resampled experiments of N
                                          rounds drawn from D decide (their Walsh interval, every average
                                          sorted), found by doubling, then bisection to 3%
  trials_independent BOOT | X... | Y...   the same for independent samples (N of each, the
                                          Hodges-Lehmann shift interval of every difference)
"""
import csv
import os
import itertools
import math

import numpy as np
import scipy
from scipy import stats

LEVEL, MARGIN = 0.95, 0.02
TAIL = (1 - LEVEL) / 2
rng = np.random.default_rng(20261124)


def num(value):
    """A number as Python writes a float (NumPy 2's scalars write themselves as np.float64(...))."""
    return repr(float(value))


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


def mw_method(x, y):
    # SciPy's own rule (scipy.stats._mannwhitneyu._mwu_choose_method): exact when either sample
    # has at most 8 values and there are no ties.
    ties = len(set(np.concatenate([x, y]))) < len(x) + len(y)
    return "exact" if (len(x) <= 8 or len(y) <= 8) and not ties else "asymptotic"


def mannwhitney(x, y):
    p = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto").pvalue
    print(f"mannwhitney {mw_method(x, y)} {num(p)} | {fmt(x)} | {fmt(y)}")


def wilcoxon(d):
    # SciPy's own rule (scipy.stats._wilcoxon, 1.13 on): more than 50 differences, approx; else exact
    # without ties or zeros, with them a permutation test up to 13, approx above.
    ties = len(set(np.abs(d[d != 0]))) < np.count_nonzero(d)
    if len(d) > 50:
        mode = "approx"
    elif not ties and not np.any(d == 0):
        mode = "exact"
    else:
        mode = "permutation" if len(d) <= 13 else "approx"
    p = stats.wilcoxon(d).pvalue
    print(f"wilcoxon {mode} {num(p)} | {fmt(d)}")


def u_null(n1, n2):
    """P(U = u) by enumerating which of the n1 + n2 ranks the first sample takes."""
    counts = {}
    for ranks in itertools.combinations(range(1, n1 + n2 + 1), n1):
        u = sum(ranks) - n1 * (n1 + 1) // 2
        counts[u] = counts.get(u, 0) + 1
    total = math.comb(n1 + n2, n1)
    return [counts.get(u, 0) / total for u in range(n1 * n2 + 1)]


def signed_rank_null(n):
    counts = {}
    for signs in itertools.product((0, 1), repeat=n):
        t = sum(r + 1 for r, s in enumerate(signs) if s)
        counts[t] = counts.get(t, 0) + 1
    return [counts.get(t, 0) / 2 ** n for t in range(n * (n + 1) // 2 + 1)]


def interval(values, pmf):
    """[v_(k), v_(N+1-k)] with the largest k whose lower tail P(stat <= k-1) stays within TAIL."""
    values = sorted(values)
    k, below = 0, 0.0
    while k < len(pmf) and below + pmf[k] <= TAIL:
        below += pmf[k]
        k += 1
    if k == 0:
        return None
    return values[k - 1], values[len(values) - k], 1 - 2 * below


def shift_ci(x, y):
    got = interval([a - b for a in x for b in y], u_null(len(x), len(y)))
    if got:
        print(f"shift_ci {num(got[0])} {num(got[1])} {num(got[2])} | {fmt(x)} | {fmt(y)}")


def paired_ci(d):
    n = len(d)
    walsh = [(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n)]
    got = interval(walsh, signed_rank_null(n))
    if got:
        print(f"paired_ci {num(got[0])} {num(got[1])} {num(got[2])} | {fmt(d)}")
    return got


def verdict(d):
    got = paired_ci(d)
    m = math.log1p(MARGIN)
    if not got:
        v = "none"
    elif got[0] > m:
        v = "faster"
    elif got[1] < -m:
        v = "slower"
    elif got[0] >= -m and got[1] <= m:
        v = "equivalent"
    else:
        v = "inconclusive"
    print(f"verdict {v} | {fmt(d)}")


def runs_needed(logs, power):
    r, mean, sd = len(logs), float(np.mean(logs)), float(np.std(logs, ddof=1))
    gap = abs(abs(mean) - math.log1p(MARGIN))
    runs = max(r + 1, 2)
    while runs <= 1000:
        q = stats.t.ppf(1 - TAIL, runs - 1) + (stats.t.ppf(power, runs - 1) if power else 0.0)
        if q * sd / math.sqrt(runs) <= gap:
            break
        runs += 1
    print(f"runs_needed {runs} {num(power)} | {fmt(logs)}")


def signed_rank_tail(n):
    """The largest k with P(T <= k - 1) <= TAIL, T the signed-rank statistic of n pairs: the exact
    distribution by counting subsets of ranks (a polynomial product), or the normal approximation
    beyond 400 pairs, as the analysis takes it."""
    if n > 400:
        sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        return max(int(math.floor(n * (n + 1) / 4 + 0.5 + stats.norm.ppf(TAIL) * sigma)), 0)
    counts = [1]
    for r in range(1, n + 1):
        nxt = counts + [0] * r
        for t, c in enumerate(counts):
            nxt[t + r] += c
        counts = nxt
    total, k, below = 2 ** n, 0, 0
    while k < len(counts) and (below + counts[k]) / total <= TAIL:
        below += counts[k]
        k += 1
    return k


def walsh_interval(d, k):
    d = np.asarray(d)
    i, j = np.triu_indices(len(d))
    w = np.sort((d[i] + d[j]) / 2)
    return w[k - 1], w[len(w) - k], float(np.median(w))


def decides(lo, hi, m):
    return lo > m or hi < -m or (lo >= -m and hi <= m)


def shift_tail(n):
    """The largest k with P(U <= k - 1) <= TAIL for n values a side (SciPy's exact U distribution up to
    464 a side, the normal approximation above, as the analysis takes it)."""
    if n ** 3 / 2 > 5e7:
        sigma = math.sqrt(n * n * (2 * n + 1) / 12)
        return max(int(math.floor(n * n / 2 + 0.5 + stats.norm.ppf(TAIL) * sigma)), 0)
    from scipy.stats._mannwhitneyu import _MWU
    dist, lo, hi = _MWU(n, n), 0, n * n // 2 + 1  # P(U <= lo - 1) <= TAIL < P(U <= hi - 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if dist.cdf(mid - 1) <= TAIL:
            lo = mid
        else:
            hi = mid
    return lo


def decides_sorted(values, k, m):
    values = np.sort(values)
    if k == 0:
        return False
    return decides(values[k - 1], values[len(values) - k], m)


def search(n, decided_at):
    """The smallest N above n at which at least half of 400 resampled experiments decide."""
    def rate(size):
        return sum(decided_at(size) for _ in range(400)) / 400

    lo, hi = n, n + 1
    while rate(hi) < 0.5:
        lo, hi = hi, max(hi + 1, hi * 2)
        if lo > 20000:
            return None
    while hi - lo > max(1, lo // 33):
        mid = (lo + hi) // 2
        if rate(mid) >= 0.5:
            hi = mid
        else:
            lo = mid
    return hi


def trials_needed(d, rng):
    m = math.log1p(MARGIN)
    d = np.asarray(d)

    def decided_at(size):
        draw = rng.choice(d, size)
        i, j = np.triu_indices(size)
        return decides_sorted((draw[i] + draw[j]) / 2, signed_rank_tail(size), m)

    print(f"trials_needed {search(len(d), decided_at)} | {fmt(d)}")


def trials_independent(x, y, rng):
    m = math.log1p(MARGIN)
    x, y = np.asarray(x), np.asarray(y)
    tails = {}

    def decided_at(size):
        if size not in tails:
            tails[size] = shift_tail(size)
        a, b = rng.choice(x, size), rng.choice(y, size)
        return decides_sorted(np.subtract.outer(a, b).ravel(), tails[size], m)

    print(f"trials_independent {search(min(len(x), len(y)), decided_at)} | {fmt(x)} | {fmt(y)}")


def committed_rounds(shape, configuration):
    """The rounds' log speed-ups of `configuration` against cuBLAS at `shape` in the committed
    data/cutlass/yardstick-run2.csv (trials interleaved: trial i of each ran in round i)."""
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "..", "data", "cutlass", "yardstick-run2")
    ids = {}
    with open(data + ".csv") as f:
        for r in csv.DictReader(f):
            name = " ".join(v for v in (r["algorithm"], r["variant"], r["params"]) if v)
            if f'{r["m"]}x{r["n"]}x{r["k"]}' == shape and r["status"] == "ok":
                ids[name] = r["run_id"]
    times = {ids["cublas default"]: {}, ids[configuration]: {}}
    with open(data + ".samples.csv") as f:
        for r in csv.DictReader(f):
            if r["run_id"] in times:
                times[r["run_id"]][int(r["trial"])] = float(r["ms"])
    base, other = times[ids["cublas default"]], times[ids[configuration]]
    return [math.log(base[t]) - math.log(other[t]) for t in sorted(base)]


def main():
    print(f"# made by tests/analysis/scipy_fixtures.py with SciPy {scipy.__version__}")
    # The exact/asymptotic rule at its edges: 8 vs 8, 3 vs 10, 5 vs 30 tie-free (exact), 9 vs 9
    # (asymptotic), ties (asymptotic), and separated samples (the smallest p).
    for n1, n2, shift in [(8, 8, 0.8), (3, 10, 1.5), (5, 30, 1.2), (9, 9, 0.7), (8, 40, 0.3), (12, 15, 0.4)]:
        x = rng.normal(0, 1, n1) + shift
        y = rng.normal(0, 1, n2)
        mannwhitney(x, y)
    mannwhitney(np.arange(8.0), np.arange(8.0, 16.0))
    mannwhitney(np.arange(3.0), np.arange(3.0, 13.0))
    mannwhitney(np.array([1.0, 2, 2, 3, 4, 5]), np.array([2.0, 3, 3, 6, 7, 8, 9]))
    # Wilcoxon: exact (n <= 50, no zeros, no ties), approximate (n > 50; zeros; ties).
    for n, loc in [(6, 1.0), (10, 0.3), (20, 0.2), (50, 0.1), (51, 0.1), (120, 0.05)]:
        wilcoxon(rng.normal(loc, 1, n))
    wilcoxon(np.arange(1.0, 7.0))
    wilcoxon(np.array([0.5, -0.2, 0.0, 0.7, 0.3, 0.9, -0.1, 0.4, 0.6, 0.8]))
    wilcoxon(np.round(rng.normal(0.3, 1, 60), 1))
    # Ties and zeros where SciPy 1.13 on takes the permutation distribution (n <= 13) or the normal
    # approximation (14 ... 50): rounds of equal times, as the timer's resolution makes them.
    wilcoxon(np.array([0.0, 0.3, 0.3, -0.1, 0.5, 0.2, 0.2, 0.7, 0.0, 0.4]))
    wilcoxon(np.array([0.2, 0.2, 0.2, 0.1, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]))
    wilcoxon(np.array([0.0, 0.0, 0.1, -0.1, 0.2]))
    wilcoxon(np.round(rng.normal(0.2, 1, 20), 1))
    wilcoxon(np.concatenate([np.zeros(3), np.round(rng.normal(0.1, 1, 40), 1)]))
    wilcoxon(np.concatenate([np.zeros(5), np.round(rng.normal(0.1, 1, 70), 2)]))
    # The repro: streamk pure against cuBLAS at 1024 in data/cutlass/yardstick-run2.csv (10
    # rounds, all of one sign, with ties): SciPy 1.10 said 0.00503, today 2 / 2^10.
    wilcoxon(np.array(committed_rounds("1024x1024x1024",
                                       "streamk pure tile=128x128;warp=32x64;depth=32;stages=3;a=transposed")))
    # The row CI of the median: ranks and exact coverage from the binomial, n = 1 ... 60.
    for n in range(1, 61):
        lo = 0
        while lo < n // 2 and stats.binom.cdf(lo, n, 0.5) <= TAIL:
            lo += 1
        if lo == 0:
            print(f"median_ci {n} 1 {n} {num(1 - 2 * 0.5 ** n)}")
        else:
            print(f"median_ci {n} {lo} {n + 1 - lo} {num(1 - 2 * stats.binom.cdf(lo - 1, n, 0.5))}")
    for n1, n2 in [(3, 3), (4, 4), (5, 5), (4, 7), (6, 6), (8, 5)]:
        shift_ci(rng.normal(0.1, 0.02, n1), rng.normal(0.0, 0.02, n2))
    for n in [5, 6, 7, 9, 12, 14]:
        paired_ci(rng.normal(0.02, 0.01, n))
    # Verdicts of paired log speed-ups at a 2% margin: clearly faster, slower, within, straddling.
    for loc, sd in [(0.10, 0.01), (-0.08, 0.01), (0.002, 0.003), (0.02, 0.01), (0.05, 0.04), (0.0, 0.05)]:
        verdict(rng.normal(loc, sd, 12))
    # The runs a claim needs: README's two inconclusive claims of revision 1c5ac7e, as it printed
    # them (1.014, 1.003, 1.018 and 1.007, 0.991, 1.033), and drawn ones.
    for ratios in ([1.014, 1.003, 1.018], [1.007, 0.991, 1.033]):
        for power in (0, 0.8):
            runs_needed(np.log(ratios), power)
    for r, loc, sd in [(2, 0.01, 0.01), (3, -0.012, 0.006), (5, 0.025, 0.01), (4, 0.0, 0.015)]:
        runs_needed(rng.normal(loc, sd, r), 0.8)
    # The trials a claim needs, by resampling the observed rounds: one-humped, skewed (one outlier),
    # two-humped rounds (most near 1%, some near 3%), near the margin, and the repro rows.
    sample = np.random.default_rng(20261125)
    m = math.log1p(MARGIN)

    def undecided(draw):  # the first draw whose interval does not decide yet
        while True:
            d = draw()
            if not decides(*walsh_interval(d, signed_rank_tail(len(d)))[:2], m):
                return d

    trials_needed(undecided(lambda: sample.normal(0.014, 0.012, 30)), sample)
    trials_needed(undecided(lambda: 0.006 + sample.lognormal(-5.0, 0.8, 30)), sample)
    trials_needed(undecided(lambda: np.append(sample.normal(0.03, 0.004, 9), -0.05)), sample)
    trials_needed(undecided(lambda: sample.normal(0.024, 0.01, 10)), sample)
    for seed in (3, 6, 9, 18):
        two = np.random.default_rng(seed)
        trials_needed(undecided(lambda: np.concatenate([two.normal(0.008, 0.003, 18), two.normal(0.030, 0.006, 12)])),
                      sample)
    trials_needed(committed_rounds("14791x2090x3465", "cutlass simt tile=128x128"), sample)
    trials_needed(committed_rounds("1784x1361x1369",
                                   "streamk hybrid tile=128x128;warp=32x64;depth=32;stages=3;a=transposed"), sample)
    # Independent samples (trials not interleaved): log times near a 2.5% difference.
    for seed in (4, 5):
        ind = np.random.default_rng(seed)
        trials_independent(ind.normal(0.025, 0.02, 10), ind.normal(0.0, 0.02, 10), sample)
    trials_independent(np.append(sample.normal(0.03, 0.01, 9), 0.2), sample.normal(0.0, 0.01, 10), sample)


if __name__ == "__main__":
    main()
