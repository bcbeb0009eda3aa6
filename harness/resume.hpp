// --resume: the keys of the configurations already recorded in the plan's output (and the samples
// of unfinished ones dropped from its samples file). Anything mmlab would not have written is a
// UsageError naming the file and line; nothing is rewritten then.
#pragma once

#include <set>
#include <string>

#include "harness/options.hpp"

namespace mmlab {

std::set<std::string> recorded_keys(const RunPlan& plan);

}  // namespace mmlab
