// mmlab's commands as a function: the program (harness/main.cpp) and the lab's C API (api/lab.cpp)
// run the same `mmlab list | run | terms` with the same options, messages and exit codes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/algorithm.hpp"
#include "core/plugin.hpp"

namespace mmlab {

// The lab's registry for a set of plugins: the built-in lists joined with them (lab_registry).
using LabFactory = std::function<Registry(const std::vector<std::shared_ptr<const Plugin>>&)>;

// Which algorithms the commands know; set once, before cli().
void set_lab(LabFactory compose);

// Adds algorithms held in memory (Plugin::adopt: the Python package's) to every later command; one
// named like an algorithm added before replaces it. UsageError (nothing changed) on a clash with a
// built-in or a file plugin's algorithm.
void add_plugin(std::shared_ptr<const Plugin> plugin);

// `mmlab <argv[1]> ...`: output on std::cout, progress and messages on std::cerr, the exit status
// (0 done, 1 a failed row or a fatal error, 2 bad input, 3 an output not written).
int cli(int argc, char** argv);

// The message of the last cli() that ended in an error ("" after one that did not).
const std::string& last_error();

// Whether the last `run` was stopped by Ctrl-C (rows already written stay whole).
bool interrupted();

}  // namespace mmlab
