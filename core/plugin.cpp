#include "core/plugin.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "mmlab/plugin.h"

namespace mmlab {

namespace {

// ABI 1's mmlab_param (a plugin built against it reads this stride): the text alone.
struct ParamV1 {
  const char* name;
  const char* value;
};

// A configuration as the C ABI sees it, at the plugin's ABI (`abi`): each value's text, and from ABI 2
// its numbers, from the configuration's typed accessors; the text is the configuration's (which outlives
// this), an ABI 1 plugin's array of the old stride beside it.
class CParams {
 public:
  CParams(const Algorithm& a, const Params& q, int abi) : variant_(q.variant()) {
    for (const Axis& x : a.axes) {
      if (!x.applies_to(q.variant()) || !q.has(x.name)) continue;
      mmlab_param p{x.name.c_str(), q.text(x.name).c_str(), {0, 0}};  // q outlives this
      if (x.kind == AxisKind::integer) p.number[0] = q.integer(x.name);
      if (x.kind == AxisKind::shape) p.number[0] = q.shape(x.name).x, p.number[1] = q.shape(x.name).y;
      items_.push_back(p);
    }
    c_ = {variant_.c_str(), items_.data(), int32_t(items_.size())};
    if (abi == 1) {
      for (const mmlab_param& p : items_) v1_.push_back({p.name, p.value});
      c_.values = reinterpret_cast<const mmlab_param*>(v1_.data());
    }
  }
  const mmlab_params* get() const { return &c_; }

 private:
  std::string variant_;
  std::vector<mmlab_param> items_;
  std::vector<ParamV1> v1_;
  mmlab_params c_{};
};

mmlab_problem c_problem(const Problem& p) { return {p.m, p.n, p.k}; }

std::string text_of(const char* s) { return s ? s : ""; }

bool good_name(const std::string& s) {
  if (s.empty() || !std::islower(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '_'))
      return false;
  return true;
}

// The registry entry for one C descriptor; `where` names the plugin in messages.
std::unique_ptr<Algorithm> adapt(const mmlab_algorithm& c, int abi, const std::string& where,
                                 const std::string& path, const std::string& hash) {
  auto a = std::make_unique<Algorithm>();
  a->name = text_of(c.name);
  const std::string who = where + ": algorithm '" + a->name + "'";
  if (!good_name(a->name))
    throw UsageError(who + ": a name is lowercase letters, digits and _, from a letter");
  if (c.backend != MMLAB_BACKEND_DEVICE && c.backend != MMLAB_BACKEND_HOST)
    throw UsageError(who + ": unknown backend " + std::to_string(int(c.backend)));
  if (!c.run) throw UsageError(who + ": no run function");
  if (c.variant_count < 1 || !c.variants) throw UsageError(who + ": no variant (at least one)");
  a->summary = text_of(c.summary);
  a->source = path;
  a->plugin_hash = hash;
  a->backend = c.backend == MMLAB_BACKEND_DEVICE ? Backend::device : Backend::host;
  for (int i = 0; i < c.variant_count; ++i) {
    const std::string v = text_of(c.variants[i].name);
    if (!good_name(v)) throw UsageError(who + ": variant '" + v + "' is not a name");
    a->variants.push_back({v, text_of(c.variants[i].summary)});
  }
  for (int i = 0; i < c.axis_count; ++i) {
    const mmlab_axis& x = c.axes[i];
    Axis axis;
    axis.name = text_of(x.name);
    if (!good_name(axis.name)) throw UsageError(who + ": axis '" + axis.name + "' is not a name");
    if (x.kind != MMLAB_AXIS_INTEGER && x.kind != MMLAB_AXIS_SHAPE && x.kind != MMLAB_AXIS_CHOICE)
      throw UsageError(who + ": axis '" + axis.name + "' has an unknown kind " + std::to_string(int(x.kind)));
    axis.kind = x.kind == MMLAB_AXIS_INTEGER ? AxisKind::integer
                : x.kind == MMLAB_AXIS_SHAPE ? AxisKind::shape
                                             : AxisKind::choice;
    axis.description = text_of(x.description);
    for (int j = 0; j < x.value_count; ++j) axis.values.push_back(text_of(x.values[j]));
    try {
      for (std::string& v : axis.values) v = canonical_value(axis, v);
      axis.default_value = canonical_value(axis, text_of(x.default_value));
    } catch (const UsageError& e) {
      throw UsageError(who + ": " + e.what());
    }
    a->axes.push_back(std::move(axis));
  }
  const mmlab_algorithm fn = c;  // the library's descriptor, by value (function pointers)
  const std::string name = a->name;
  const Algorithm* self = a.get();
  if (fn.supports)
    a->supports = [fn, self, who, abi](const Problem& p, const Params& q, const DeviceInfo&) -> Reason {
      char message[1024] = "";
      const mmlab_problem cp = c_problem(p);
      const CParams cq(*self, q, abi);
      const int32_t status = fn.supports(&cp, cq.get(), message, sizeof message);
      message[sizeof message - 1] = '\0';
      if (status == 0) return std::nullopt;
      if (status == 1) return message[0] ? std::string(message) : "not supported (the plugin gave no reason)";
      throw PluginError(who + ": supports() failed: " + (message[0] ? message : "no message"));
    };
  if (fn.workspace_bytes)
    a->workspace_bytes = [fn, self, abi](const Problem& p, const Params& q) {
      const mmlab_problem cp = c_problem(p);
      const CParams cq(*self, q, abi);
      return fn.workspace_bytes(&cp, cq.get());
    };
  a->run = [fn, self, who, abi](const RunArgs& r) {
    char message[1024] = "";
    const mmlab_problem cp = c_problem(r.problem);
    const CParams cq(*self, *r.params, abi);
    const int32_t status =
        fn.run(&cp, cq.get(), r.a, r.b, r.c, r.workspace, r.stream, message, sizeof message);
    message[sizeof message - 1] = '\0';
    if (status != 0) throw PluginError(who + ": run() failed: " + (message[0] ? message : "no message"));
  };
  return a;
}

}  // namespace

std::string file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t h = 14695981039346656037ull;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) h = (h ^ std::uint8_t(buf[i])) * 1099511628211ull;
    if (!in) break;
  }
  char out[32];
  std::snprintf(out, sizeof out, "fnv1a64:%016llx", (unsigned long long)h);
  return out;
}

std::shared_ptr<const Plugin> Plugin::load(const std::string& path) {
  const std::string where = "plugin " + path;
  if (std::filesystem::is_directory(path))
    throw UsageError(where + ": a folder; --plugin takes the shared library itself (lib<name>.so)");
  if (!std::filesystem::is_regular_file(path)) throw UsageError(where + ": no such file");
  std::shared_ptr<Plugin> p(new Plugin);
  p->path_ = std::filesystem::absolute(path).lexically_normal().string();
  // A path without a slash would make dlopen search the library path instead of this file.
  p->handle_ = dlopen(p->path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p->handle_) {
    const char* why = dlerror();
    throw UsageError(where + ": not a loadable shared library (" + text_of(why) + ")");
  }
  const auto entry = reinterpret_cast<mmlab_plugin_fn>(dlsym(p->handle_, MMLAB_PLUGIN_ENTRY));
  if (!entry)
    throw UsageError(where + ": no " + MMLAB_PLUGIN_ENTRY +
                     "() entry point (an mmlab plugin exports one; see " + "include/mmlab/plugin.h)");
  p->hash_ = file_hash(p->path_);
  p->describe(entry(), where);
  return p;
}

std::shared_ptr<const Plugin> Plugin::adopt(const mmlab_plugin_info* info, const std::string& source,
                                            const std::string& hash) {
  std::shared_ptr<Plugin> p(new Plugin);
  p->path_ = source, p->hash_ = hash;
  p->describe(info, source);
  return p;
}

void Plugin::describe(const mmlab_plugin_info* info, const std::string& where) {
  if (!info) throw UsageError(where + ": " + MMLAB_PLUGIN_ENTRY + "() returned nothing");
  if (info->abi_version < MMLAB_PLUGIN_ABI_OLDEST || info->abi_version > MMLAB_PLUGIN_ABI_VERSION)
    throw UsageError(where + ": built against mmlab plugin ABI " + std::to_string(info->abi_version) +
                     "; this mmlab loads ABI " + std::to_string(MMLAB_PLUGIN_ABI_OLDEST) + " to " +
                     std::to_string(MMLAB_PLUGIN_ABI_VERSION) + " (rebuild it)");
  if (info->algorithm_count < 1 || !info->algorithms) throw UsageError(where + ": describes no algorithm");
  for (int i = 0; i < info->algorithm_count; ++i)
    algorithms_.push_back(adapt(info->algorithms[i], info->abi_version, where, path_, hash_));
  for (std::size_t i = 0; i < algorithms_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (algorithms_[i]->name == algorithms_[j]->name)
        throw UsageError(where + ": two algorithms are named '" + algorithms_[i]->name + "'");
}

Plugin::~Plugin() {
  algorithms_.clear();
  if (handle_) dlclose(handle_);
}

std::vector<const Algorithm*> Plugin::algorithms() const {
  std::vector<const Algorithm*> out;
  for (const auto& a : algorithms_) out.push_back(a.get());
  return out;
}

Registry join_plugins(std::initializer_list<std::vector<const Algorithm*>> built_in,
                      const std::vector<std::shared_ptr<const Plugin>>& plugins) {
  Registry base(built_in);
  std::vector<const Algorithm*> added;
  for (const auto& p : plugins)
    for (const Algorithm* a : p->algorithms()) {
      if (const Algorithm* b = base.find(a->name))
        throw UsageError("plugin " + p->path() + ": algorithm '" + a->name + "' is already " +
                         (b->plugin_hash.empty() ? "built in" : "in plugin " + b->source));
      for (const Algorithm* c : added)
        if (c->name == a->name)
          throw UsageError("plugin " + p->path() + ": algorithm '" + a->name + "' is already in plugin " +
                           c->source);
      added.push_back(a);
    }
  std::vector<const Algorithm*> all = base.all();
  all.insert(all.end(), added.begin(), added.end());
  Registry joined({all});
  return joined;
}

}  // namespace mmlab
