// What an exception means as an exit status (include/mmlab/lab.h's MMLAB_DONE ... MMLAB_INTERRUPTED):
// the commands' (harness/cli.cpp, analysis/cli.cpp) and the C API's calls (api/lab.cpp) map them here.
#pragma once

#include <exception>

#include "core/csv.hpp"
#include "core/params.hpp"
#include "core/results.hpp"
#include "mmlab/lab.h"

namespace mmlab {

// Bad input (a usage or an analysis error): MMLAB_BAD_INPUT; an output not written: MMLAB_NOT_WRITTEN;
// anything else: MMLAB_FAILED.
inline int exit_status_of(const std::exception& e) {
  if (dynamic_cast<const UsageError*>(&e) || dynamic_cast<const AnalysisError*>(&e)) return MMLAB_BAD_INPUT;
  if (dynamic_cast<const IoError*>(&e)) return MMLAB_NOT_WRITTEN;
  return MMLAB_FAILED;
}

}  // namespace mmlab
