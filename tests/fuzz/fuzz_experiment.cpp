// libFuzzer: experiment files. The input is the file's text; every outcome must be a plan or a
// UsageError.
#include <cstdint>
#include <string>

#include "harness/options.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mmlab;
  const std::string path = fuzz::scratch() + "/e.ini";
  fuzz::write_file(path, std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)make_plan({}, parse_experiment_file(path, fuzz::registry()), fuzz::registry());
  } catch (const UsageError&) {
  }
  return 0;
}
