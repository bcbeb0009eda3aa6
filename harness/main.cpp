// mmlab: the command-line entry point (the commands are harness/cli.cpp). The one place in the
// program that knows which algorithms it has: it joins algorithms/ and distributed/'s lists into the
// Lab it hands to the commands.
#include "distributed/registry.hpp"
#include "harness/cli.hpp"
#include "runtime/job.hpp"

int main(int argc, char** argv) {
  mmlab::init_job(&argc, &argv);
  mmlab::Lab lab(mmlab::lab_registry);
  const int status = mmlab::cli(lab, argc, argv);
  mmlab::finalize_job();
  return status;
}
