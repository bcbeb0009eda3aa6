// GPU test entry: exits 77 (CTest's "skipped") where there is no GPU, so a machine without one
// reports a skip, never a pass.
#include <gtest/gtest.h>

#include <cstdio>

#include "runtime/gpu.hpp"
#include "runtime/job.hpp"

namespace mmlab {
const char* git_revision();
}

int main(int argc, char** argv) {
  const mmlab::DeviceInfo d = mmlab::query_device(0);
  if (!d.present) {
    std::printf("SKIPPED: %s\n", d.absent_reason.c_str());
    return 77;
  }
  std::printf("GPU tests on %s (%d SMs, cc %d.%d), mmlab %s\n", d.name.c_str(), d.sm_count, d.cc_major,
              d.cc_minor, mmlab::git_revision());
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  mmlab::finalize_job();  // the distributed algorithms ran in a one-rank MPI job
  return status;
}
