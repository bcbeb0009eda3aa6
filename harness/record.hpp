// A configuration's CSV row (the schema is core/schema.hpp) and the identity it carries.
#pragma once

#include <string>

#include "core/csv.hpp"
#include "core/revision.hpp"
#include "harness/options.hpp"
#include "harness/outcome.hpp"

namespace mmlab {

// "sm_90", "CUDA 13.0": versions as text that no CSV reader turns into a number.
std::string compute_capability_text(const DeviceInfo& d);
std::string cuda_version_text(int version);

Row make_row(const std::string& run_id, const RunPlan& plan, const DeviceInfo& device,
                const Configuration& cfg, const Outcome& o);

}  // namespace mmlab
