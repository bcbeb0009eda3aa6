// The registry the test programs use: mmlab's own (lab_registry, as harness/main.cpp takes it) with the
// example plugin's algorithms (examples/plugin, built with the tests) loaded as `mmlab run --plugin`
// loads them, so every test covers them too.
#pragma once

#include <cstdlib>
#include <string>

#include "core/algorithm.hpp"
#include "core/plugin.hpp"
#include "distributed/registry.hpp"

namespace mmlab::test {

// A machine without a GPU, as the CPU tests run the harness on.
inline DeviceInfo no_gpu() {
  DeviceInfo d;
  d.absent_reason = "no CUDA GPU (test)";
  return d;
}

// The example plugin's file: MMLAB_TEST_PLUGIN when set (tests run on another machine than they were
// built on), else the one built with the tests. A build without it tests the built-ins only.
inline std::string example_plugin_path() {
  if (const char* env = std::getenv("MMLAB_TEST_PLUGIN")) return env;
#ifdef MMLAB_EXAMPLE_PLUGIN
  return MMLAB_EXAMPLE_PLUGIN;
#else
  return "";
#endif
}

// Why the example plugin could not be loaded ("" when it was, or when the build has none). The
// registry is made while the tests are listed, before any runs: an error there would abort the whole
// program, so it is kept and reported by the test TestPlugin.Loads instead.
inline std::string& plugin_error() {
  static std::string error;
  return error;
}

inline const std::vector<std::shared_ptr<const Plugin>>& plugins() {
  static const std::vector<std::shared_ptr<const Plugin>> loaded = [] {
    std::vector<std::shared_ptr<const Plugin>> out;
    const std::string path = example_plugin_path();
    try {
      if (!path.empty()) out.push_back(Plugin::load(path));
    } catch (const std::exception& e) {
      plugin_error() = std::string(e.what()) + " (set MMLAB_TEST_PLUGIN to the example plugin's path, "
                       "examples/plugin's libmy_plugin.so, when the tests run away from their build)";
    }
    return out;
  }();
  return loaded;
}

inline const Registry& lab() {
  static const Registry registry = lab_registry(plugins());
  return registry;
}

}  // namespace mmlab::test
