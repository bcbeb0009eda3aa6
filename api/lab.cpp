// libmmlab_lab.so: the C API of include/mmlab/lab.h over the commands of harness/cli.cpp and
// analysis/cli.cpp. Like mmlab's main, a composition root: it names the lab's algorithm lists.
#include "mmlab/lab.h"

#include <cstddef>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/cli.hpp"
#include "core/json.hpp"
#include "core/schema.hpp"
#include "distributed/registry.hpp"
#include "harness/cli.hpp"

namespace {

// The lab's algorithms, handed to the commands once.
void ensure_lab() {
  static const bool set = (mmlab::set_lab(mmlab::lab_registry), true);
  (void)set;
}

void put(const std::string& text, char* out, size_t size) {
  if (!out || size == 0) return;
  std::strncpy(out, text.c_str(), size - 1);
  out[size - 1] = '\0';
}

// One command at a time in the process: the commands share the registry, the plugins, the last error
// and std::cout's buffer (swapped for a command's stdout_path), and a caller's threads may call at once
// (Python's ctypes releases the GIL). A second caller waits for the first's command to end.
std::mutex& commands() {
  static std::mutex m;
  return m;
}
thread_local bool t_in_command = false;  // a command called from inside one (a Python algorithm's body)

// Holds the process's one command, or refuses one called from inside a command on the same thread
// (it would wait for itself).
class OneCommand {
 public:
  OneCommand() {
    if (t_in_command) return;
    lock_ = std::unique_lock<std::mutex>(commands());
    t_in_command = true;
  }
  ~OneCommand() {
    if (lock_.owns_lock()) t_in_command = false;
  }
  bool held() const { return lock_.owns_lock(); }

 private:
  std::unique_lock<std::mutex> lock_;
};
const char* kReentered = "mmlab: a command was called from inside a running command (an algorithm's body calling "
                         "the lab?): commands run one at a time";

// A command with its standard output in a file (where asked), its message copied out, and nothing
// thrown across the boundary.
template <class Command, class Error>
int32_t call(Command command, Error error, int32_t argc, const char* const* argv, const char* stdout_path,
             char* message, size_t message_size) {
  const OneCommand one;
  put(one.held() ? "" : kReentered, message, message_size);
  if (!one.held()) return 2;
  std::ofstream file;
  std::streambuf* saved = nullptr;
  try {
    ensure_lab();
    if (stdout_path) {
      file.open(stdout_path, std::ios::binary | std::ios::trunc);
      if (!file) {
        put(std::string("cannot write ") + stdout_path, message, message_size);
        return 3;
      }
      std::cout.flush();
      saved = std::cout.rdbuf(file.rdbuf());
    }
    std::vector<std::string> storage(argv, argv + argc);
    std::vector<char*> args;
    for (std::string& a : storage) args.push_back(a.data());
    args.push_back(nullptr);
    const int status = command(argc, args.data());
    if (saved) std::cout.rdbuf(saved);
    put(error(), message, message_size);
    return status;
  } catch (const std::exception& e) {
    if (saved) std::cout.rdbuf(saved);
    put(e.what(), message, message_size);
    return 1;
  }
}

template <class Columns>
std::string columns_json(const Columns& columns) {
  std::string out = "[";
  for (const mmlab::Column& c : columns) {  // a choice column with its values, as core/columns.hpp has them
    std::string values;
    for (std::size_t i = 0; i < c.values.count; ++i)
      values += (values.empty() ? "" : ", ") + mmlab::json_string(c.values.names[i]);
    out += std::string(out.size() > 1 ? ", " : "") + "{\"name\": " + mmlab::json_string(c.name) +
           ", \"type\": \"" + mmlab::column_type_name(c.type) + "\", \"unit\": " + mmlab::json_string(c.unit) +
           (c.type == mmlab::ColumnType::choice
                ? ", \"values\": [" + values + "], \"open\": " + (c.values.open ? "true" : "false")
                : std::string()) +
           "}";
  }
  return out + "]";
}

// {"size": sizeof, "fields": {name: offset}} of one of plugin.h's structs, for the Python package's
// test of its ctypes layouts (tests/python/test_package.py).
#define MMLAB_LAYOUT_FIELD(T, f) (std::string("\"" #f "\": ") + std::to_string(offsetof(T, f)))
template <class T>
std::string layout(const char* name, std::initializer_list<std::string> fields) {
  std::string out = std::string("\"") + name + "\": {\"size\": " + std::to_string(sizeof(T)) + ", \"fields\": {";
  bool first = true;
  for (const std::string& f : fields) out += (first ? "" : ", ") + f, first = false;
  return out + "}}";
}

}  // namespace

extern "C" {

MMLAB_PLUGIN_EXPORT int32_t mmlab_lab_api_version(void) { return MMLAB_LAB_API_VERSION; }

MMLAB_PLUGIN_EXPORT int32_t mmlab_command(int32_t argc, const char* const* argv, const char* stdout_path,
                                          char* message, size_t message_size) {
  return call(mmlab::cli, [] { return mmlab::last_error(); }, argc, argv, stdout_path, message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_interrupted(void) { return mmlab::interrupted() ? 1 : 0; }

MMLAB_PLUGIN_EXPORT int32_t mmlab_analyze(int32_t argc, const char* const* argv, const char* stdout_path,
                                          char* message, size_t message_size) {
  return call(mmlab::analysis::cli, [] { return mmlab::analysis::last_error(); }, argc, argv, stdout_path, message,
              message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_add_algorithms(const mmlab_plugin_info* info, const char* source,
                                                 const char* hash, char* message, size_t message_size) {
  const OneCommand one;
  put(one.held() ? "" : kReentered, message, message_size);
  if (!one.held()) return 2;
  try {
    ensure_lab();
    mmlab::add_plugin(mmlab::Plugin::adopt(info, source ? source : "memory", hash ? hash : ""));
    return 0;
  } catch (const std::exception& e) {
    put(e.what(), message, message_size);
    return 2;
  }
}

MMLAB_PLUGIN_EXPORT const char* mmlab_layouts_json(void) {
#define F MMLAB_LAYOUT_FIELD
  static const std::string json =
      "{" + layout<mmlab_problem>("mmlab_problem", {F(mmlab_problem, m), F(mmlab_problem, n), F(mmlab_problem, k)}) +
      ", " + layout<mmlab_param>("mmlab_param", {F(mmlab_param, name), F(mmlab_param, value)}) + ", " +
      layout<mmlab_params>("mmlab_params", {F(mmlab_params, variant), F(mmlab_params, values), F(mmlab_params, count)}) +
      ", " + layout<mmlab_variant>("mmlab_variant", {F(mmlab_variant, name), F(mmlab_variant, summary)}) + ", " +
      layout<mmlab_axis>("mmlab_axis", {F(mmlab_axis, name), F(mmlab_axis, kind), F(mmlab_axis, description),
                                        F(mmlab_axis, default_value), F(mmlab_axis, values), F(mmlab_axis, value_count)}) +
      ", " +
      layout<mmlab_algorithm>("mmlab_algorithm",
                              {F(mmlab_algorithm, name), F(mmlab_algorithm, summary), F(mmlab_algorithm, backend),
                               F(mmlab_algorithm, variants), F(mmlab_algorithm, variant_count), F(mmlab_algorithm, axes),
                               F(mmlab_algorithm, axis_count), F(mmlab_algorithm, supports),
                               F(mmlab_algorithm, workspace_bytes), F(mmlab_algorithm, run)}) +
      ", " +
      layout<mmlab_plugin_info>("mmlab_plugin_info",
                                {F(mmlab_plugin_info, abi_version), F(mmlab_plugin_info, name),
                                 F(mmlab_plugin_info, algorithms), F(mmlab_plugin_info, algorithm_count)}) +
      "}";
#undef F
  return json.c_str();
}
#undef MMLAB_LAYOUT_FIELD

MMLAB_PLUGIN_EXPORT const char* mmlab_schema_json(void) {
  static const std::string json = std::string("{\"version\": ") + mmlab::json_string(mmlab::kSchemaVersion) +
                                  ", \"results\": " + columns_json(mmlab::kResultColumns) +
                                  ", \"samples\": " + columns_json(mmlab::kSampleColumns) + "}";
  return json.c_str();
}

}  // extern "C"
