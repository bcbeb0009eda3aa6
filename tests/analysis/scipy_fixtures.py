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


if __name__ == "__main__":
    main()
