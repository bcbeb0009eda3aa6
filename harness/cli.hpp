// mmlab's commands as a function: the program (harness/main.cpp) and the lab's C API (api/lab.cpp)
// run the same `mmlab list | run | terms` with the same options, messages and exit codes, over a Lab
// (harness/lab.hpp) each of them makes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "harness/lab.hpp"

namespace mmlab {

// `mmlab <argv[1]> ...` over `lab` (the plugins it names are loaded into it): output on std::cout,
// progress and messages on std::cerr, the exit status (0 done, 1 a failed row or a fatal error, 2 bad
// input, 3 an output not written); `message`, where given, the error's ("" when none).
int cli(Lab& lab, int argc, char** argv, std::string* message = nullptr);

// `mmlab list --format json`'s records of `which`: the catalog as the C API (mmlab_catalog) and Python's
// mmlab.algorithms() take it.
void list_json(const std::vector<const Algorithm*>& which, std::ostream& os);

}  // namespace mmlab
