// Executes a run plan: per problem, make inputs and the float64 reference once; per
// configuration, run its pipeline (pipeline.hpp) and append its row. The parts: workbench.hpp
// (inputs and reference), pipeline.hpp (one configuration), record.hpp (its CSV row), resume.hpp,
// progress.hpp, runner.cpp (the plan).
#pragma once

#include <atomic>

#include "harness/options.hpp"
#include "harness/sink.hpp"

namespace mmlab {

// The whole plan; returns the exit status (0, 1 when a configuration failed, 130 interrupted). Each
// configuration's samples and row go to the plan's output files (none when plan.output is empty) and
// to `sink` (when not null) as it finishes.
int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted,
            RowSink* sink = nullptr);

}  // namespace mmlab
