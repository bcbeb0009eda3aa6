#!/usr/bin/python3
"""The reference values of tests/analysis/scipy_test.cpp, computed with SciPy (or, where SciPy has no
such function, by brute-force enumeration of the permutation distribution), so the C++ statistics
are checked against an implementation that shares none of their code.

  /usr/bin/python3 tests/analysis/scipy_fixtures.py > tests/analysis/golden/scipy.txt

(Debian's python3-scipy; the committed file was made with SciPy 1.10.1.) Each line is a record:
  mannwhitney METHOD P | X... | Y...      SciPy mannwhitneyu(x, y), method auto; METHOD = the one it took
  wilcoxon METHOD P | D...                SciPy wilcoxon(d), defaults (zero_method wilcox, no correction)
  median_ci N LO HI COVERAGE              the distribution-free 95% CI of the median: ranks, coverage (binom)
  shift_ci LO HI COVERAGE | X... | Y...   Hodges-Lehmann 95% interval of x - y (enumerated U distribution)
  paired_ci LO HI COVERAGE | D...         Walsh-average 95% interval of d (enumerated signed-rank distribution)
  verdict VERDICT | D...                  the paired verdict at a 2% margin on log speed-ups d, from paired_ci
  runs_needed R POWER | L...              the runs at which Student's t interval of the mean of the runs'
                                          log speed-ups L would decide at a 2% margin (t quantiles at R runs;
                                          POWER 0: the interval alone, else with that chance)
  trials_needed N BOOT | D...             the pairs at which the Walsh interval of D, keeping its
                                          Hodges-Lehmann centre and its reach toward the edge it must
                                          clear, would decide (N); BOOT: the smallest N at which half of
                                          400 resamples of N rounds drawn from D decide (the check)
"""
import itertools
import math

import numpy as np
import scipy
from scipy import stats

LEVEL, MARGIN = 0.95, 0.02
TAIL = (1 - LEVEL) / 2
rng = np.random.default_rng(20261124)


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


def mw_method(x, y):
    # SciPy's own rule (scipy.stats._mannwhitneyu._mwu_choose_method): exact when either sample
    # has at most 8 values and there are no ties.
    ties = len(set(np.concatenate([x, y]))) < len(x) + len(y)
    return "exact" if (len(x) <= 8 or len(y) <= 8) and not ties else "asymptotic"


def mannwhitney(x, y):
    p = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto").pvalue
    print(f"mannwhitney {mw_method(x, y)} {p!r} | {fmt(x)} | {fmt(y)}")


def wilcoxon(d):
    mode = "exact" if len(d) <= 50 and not np.any(d == 0) else "approx"
    p = stats.wilcoxon(d).pvalue
    print(f"wilcoxon {mode} {p!r} | {fmt(d)}")


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
        print(f"shift_ci {got[0]!r} {got[1]!r} {got[2]!r} | {fmt(x)} | {fmt(y)}")


def paired_ci(d):
    n = len(d)
    walsh = [(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n)]
    got = interval(walsh, signed_rank_null(n))
    if got:
        print(f"paired_ci {got[0]!r} {got[1]!r} {got[2]!r} | {fmt(d)}")
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
    print(f"runs_needed {runs} {power!r} | {fmt(logs)}")


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


def trials_needed(d, rng):
    n, m = len(d), math.log1p(MARGIN)
    lo, hi, c = walsh_interval(d, signed_rank_tail(n))
    assert not decides(lo, hi, m), "a decided design needs no more trials"
    gap = abs(abs(c) - m)
    reach = (hi - c) if (c >= 0) == (abs(c) < m) else (c - lo)
    formula = math.ceil(max(n * (reach / gap) ** 2, n + 1))
    boot, size = None, n + 1
    while boot is None and size < 5000:
        k = signed_rank_tail(size)
        hits = sum(decides(*walsh_interval(rng.choice(d, size), k)[:2], m) for _ in range(400))
        if hits >= 200:
            boot = size
        size = int(size * 1.08) + 1
    print(f"trials_needed {formula} {boot} | {fmt(d)}")


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
    # The row CI of the median: ranks and exact coverage from the binomial, n = 1 ... 60.
    for n in range(1, 61):
        lo = 0
        while lo < n // 2 and stats.binom.cdf(lo, n, 0.5) <= TAIL:
            lo += 1
        if lo == 0:
            print(f"median_ci {n} 1 {n} {1 - 2 * 0.5 ** n!r}")
        else:
            print(f"median_ci {n} {lo} {n + 1 - lo} {1 - 2 * stats.binom.cdf(lo - 1, n, 0.5)!r}")
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
    # The pairs a paired claim needs, checked by resampling: one-humped, skewed, and two-humped
    # rounds (most rounds near 1%, some near 3%: the median log-ratio far below the interval's centre).
    sample = np.random.default_rng(20261125)
    m = math.log1p(MARGIN)

    def undecided(draw):  # the first draw whose interval does not decide yet
        while True:
            d = draw()
            if not decides(*walsh_interval(d, signed_rank_tail(len(d)))[:2], m):
                return d

    trials_needed(undecided(lambda: sample.normal(0.014, 0.012, 30)), sample)
    trials_needed(undecided(lambda: 0.006 + sample.lognormal(-5.0, 0.8, 30)), sample)
    for seed in (3, 6, 9, 18):
        two = np.random.default_rng(seed)
        trials_needed(undecided(lambda: np.concatenate([two.normal(0.008, 0.003, 18), two.normal(0.030, 0.006, 12)])),
                      sample)


if __name__ == "__main__":
    main()
