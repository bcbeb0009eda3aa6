// mmlab-analyze's commands as a function: the program (analysis/main.cpp) and the lab's C API run
// the same commands with the same options, messages and exit codes.
#pragma once

#include <string>

#include "analysis/report.hpp"

namespace mmlab::analysis {

// One call's caller's ends (the C API's), instead of any state of the process: with `tables`, the
// tables a command renders as JSON go to it as records and no text is written; `error` receives the
// message of a call that ends in an error ("" after one that does not).
struct Session {
  const TableSink* tables = nullptr;
  std::string error;
};

// `mmlab-analyze <argv[1]> ...`: output on std::cout (or --output), messages on std::cerr; the exit
// status (0 done, 2 bad input, 1 another failure).
int cli(int argc, char** argv, Session* session = nullptr);

}  // namespace mmlab::analysis
