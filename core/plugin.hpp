// Algorithms from shared libraries (the C ABI of include/mmlab/plugin.h), turned into registry
// entries: the harness and the analysis know no difference. CUDA-free: a device plugin's stream
// passes through as the opaque handle it is.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/algorithm.hpp"

struct mmlab_plugin_info;

namespace mmlab {

// A plugin's function reported an error while running: the configuration's row is `failed`.
struct PluginError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One loaded plugin: the library (closed when the last reference goes) and its algorithms, whose
// `source` is the file and `plugin_hash` its FNV-1a hash.
class Plugin {
 public:
  // Loads and checks `path`; a UsageError naming the file when it is missing, not a shared
  // library, has no mmlab_plugin() entry point, was built against another ABI version, or
  // describes an algorithm badly (no name, no variant, an unknown axis kind or a bad default).
  static std::shared_ptr<const Plugin> load(const std::string& path);
  // The same checks on a description held in memory (the Python package's algorithms, whose
  // functions stay valid while it keeps them): `source` stands for the file in rows and messages
  // ("python:module.function"), `hash` for its hash (of the functions' code).
  static std::shared_ptr<const Plugin> adopt(const mmlab_plugin_info* info, const std::string& source,
                                             const std::string& hash);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& path() const { return path_; }
  const std::string& hash() const { return hash_; }
  std::vector<const Algorithm*> algorithms() const;

 private:
  Plugin() = default;
  void describe(const mmlab_plugin_info* info, const std::string& where);
  void* handle_ = nullptr;
  std::string path_, hash_;
  std::vector<std::unique_ptr<Algorithm>> algorithms_;
};

// "fnv1a64:<16 hex digits>" of a file's bytes (what a row records of the plugin that ran).
std::string file_hash(const std::string& path);

// The built-in lists joined with the plugins' algorithms; a plugin algorithm named like a built-in
// or another plugin's is a UsageError naming both.
Registry join_plugins(std::initializer_list<std::vector<const Algorithm*>> built_in,
                      const std::vector<std::shared_ptr<const Plugin>>& plugins);

}  // namespace mmlab
