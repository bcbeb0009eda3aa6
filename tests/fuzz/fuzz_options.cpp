// libFuzzer: the command line and its value parsers. The input is the arguments of `mmlab run`,
// one per line; every outcome must be a plan or a UsageError (anything else is a finding).
#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "harness/options.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mmlab;
  std::vector<std::string> args = {"run"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(char(data[i]));
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    const Settings cli = parse_command_line(int(argv.size()), argv.data(), fuzz::registry());
    if (!cli.count("experiment")) (void)make_plan(cli, {}, fuzz::registry());
  } catch (const UsageError&) {
  }
  // The same words through the value parsers directly.
  for (const std::string& a : args) {
    try {
      (void)parse_int_list(a, "fuzz");
    } catch (const UsageError&) {
    }
    try {
      (void)parse_shapes(a);
    } catch (const UsageError&) {
    }
    try {
      (void)parse_bounded(a, "fuzz", 0, ~0ull);
    } catch (const UsageError&) {
    }
    for (const Axis& axis : fuzz::registry().find("axes")->axes) try {
        (void)canonical_value(axis, a);
      } catch (const UsageError&) {
      }
  }
  return 0;
}
