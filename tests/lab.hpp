// The registry the test programs use: mmlab's own, the list of algorithms/ then that of distributed/
// (as harness/main.cpp joins them).
#pragma once

#include "algorithms/registry.hpp"
#include "core/algorithm.hpp"
#include "distributed/registry.hpp"

namespace mmlab::test {

inline const Registry& lab() {
  static const Registry registry{algorithms::single_process(), algorithms::distributed()};
  return registry;
}

}  // namespace mmlab::test
