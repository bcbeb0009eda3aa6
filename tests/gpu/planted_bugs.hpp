#pragma once
#include "core/algorithm.hpp"

namespace mmlab::test {
const Algorithm& skips_last_term();    // each output misses its last product term
const Algorithm& leaves_corner();      // C[m-1][n-1] is never written
const Algorithm& reduced_precision();  // operands rounded to a 10-bit mantissa
const Algorithm& traps();              // the kernel traps: a sticky CUDA error
}  // namespace mmlab::test
