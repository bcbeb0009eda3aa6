// mmlab-analyze's commands as a function: the program (analysis/main.cpp) and the lab's C API run
// the same commands with the same options, messages and exit codes.
#pragma once

#include <string>

namespace mmlab::analysis {

// `mmlab-analyze <argv[1]> ...`: output on std::cout (or --output), messages on std::cerr; the exit
// status (0 done, 2 bad input, 1 another failure).
int cli(int argc, char** argv);

// The message of the last cli() that ended in an error ("" after one that did not).
const std::string& last_error();

}  // namespace mmlab::analysis
