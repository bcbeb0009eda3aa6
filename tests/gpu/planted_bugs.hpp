#pragma once
#include "core/algorithm.hpp"

namespace mmlab::test {
const Algorithm& skips_last_term();    // each output misses its last product term
const Algorithm& leaves_corner();      // C[m-1][n-1] is never written
const Algorithm& reduced_precision();  // operands rounded to a 10-bit mantissa
const Algorithm& traps();              // the kernel traps: a sticky CUDA error
// Right when verified, then wrong on every third call (a race that strikes now and then): declared
// deterministic (its timed C is hashed), and declared nondeterministic (sampled entries are checked).
const Algorithm& wrong_now_and_then();
const Algorithm& wrong_now_and_then_nondeterministic();
void restart_now_and_then();  // their next call counts as the first
}  // namespace mmlab::test
