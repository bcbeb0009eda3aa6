// How a trial is timed (the `scope` axis of a sweep and column of a row), and the L2 setting's names.
#pragma once

#include <string>

#include "core/params.hpp"

namespace mmlab {

enum class Scope {
  kernel,      // one launch per trial, event-timed
  batched,     // a CUDA graph of `repeats` launches per trial; time / repeats
  end_to_end,  // copy A and B in, launch, copy C out (as the 2013 paper timed)
};

inline const char* scope_name(Scope s) {
  switch (s) {
    case Scope::kernel: return "kernel";
    case Scope::batched: return "batched";
    case Scope::end_to_end: return "end_to_end";
  }
  return "?";
}

inline Scope parse_scope(const std::string& text) {  // throws UsageError
  for (Scope s : {Scope::kernel, Scope::batched, Scope::end_to_end})
    if (text == scope_name(s)) return s;
  throw UsageError("scope: unknown value '" + text + "' (valid: kernel, batched, end_to_end)");
}

inline const char* l2_flush_name(bool on) { return on ? "on" : "off"; }  // as the CLI and the CSV say it

}  // namespace mmlab
