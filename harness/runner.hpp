// Executes a run plan: per problem, make inputs and the float64 reference once; per
// configuration, run its pipeline (pipeline.hpp) and append its row. The parts: workbench.hpp
// (inputs and reference), pipeline.hpp (one configuration), record.hpp (its CSV row), resume.hpp,
// progress.hpp, runner.cpp (the plan).
#pragma once

#include <atomic>

#include "harness/options.hpp"

namespace mmlab {

// The whole plan; returns the exit status (0, 1 when a configuration failed, 130 interrupted).
int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted);

}  // namespace mmlab
