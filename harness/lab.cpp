#include "harness/lab.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <set>

#include "core/distributed.hpp"
#include "harness/pipelines.hpp"
#include "harness/runner.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/job.hpp"

namespace mmlab {

Lab::Lab(LabFactory compose) : compose_(std::move(compose)) {
  const std::lock_guard<std::mutex> lock(mutex_);
  set({});
}

void Lab::set(std::vector<std::shared_ptr<const Plugin>> plugins) {
  auto next = std::make_shared<Catalog>();
  next->registry = compose_(plugins);  // a name clash throws here, and nothing changes
  next->plugins = std::move(plugins);
  catalog_ = std::move(next);
}

std::shared_ptr<const Catalog> Lab::catalog() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return catalog_;
}

void Lab::load_plugin(const std::string& path) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& q : catalog_->plugins)
    if (q->path() == path) return;  // a file named twice (command line and experiment file) loads once
  std::vector<std::shared_ptr<const Plugin>> plugins = catalog_->plugins;
  plugins.push_back(Plugin::load(path));
  try {
    set(std::move(plugins));
  } catch (const std::logic_error& e) {  // a name given twice
    throw UsageError(path + ": " + e.what());
  }
}

void Lab::add_plugin(std::shared_ptr<const Plugin> p) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<const Plugin>> kept;
  for (const auto& q : catalog_->plugins) {  // one of the same algorithms' names is replaced (a function defined again)
    bool clash = false;
    for (const Algorithm* a : q->algorithms())
      for (const Algorithm* b : p->algorithms()) clash = clash || a->name == b->name;
    if (!clash) kept.push_back(q);
  }
  kept.push_back(std::move(p));
  try {
    set(std::move(kept));
  } catch (const std::logic_error& e) {
    throw UsageError(e.what());
  }
}

Plan Plan::from_arguments(Lab& lab, std::vector<std::string> args) {
  for (const std::string& path : take_plugin_paths(args, true)) lab.load_plugin(path);
  Plan plan(lab);
  plan.files_by_default_ = true;
  for (const std::string& a : args) plan.help_ = plan.help_ || a == "--help" || a == "-h";
  std::vector<const char*> argv = {"run"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {  // an error waits for resolve(), where `mmlab run` (every rank of a job alike) reports it
    const Registry& registry = lab.catalog()->registry;
    plan.cli_ = read_settings(parse_command_line(int(argv.size()), argv.data(), registry), registry);
    if (plan.cli_.experiment)
      plan.file_ = read_settings(parse_experiment_file(plan.cli_.experiment->value, registry), registry);
  } catch (const UsageError& e) {
    plan.argument_error_ = e.what();
  }
  return plan;
}

void Plan::experiment(const std::string& path) {
  std::vector<std::string> args = {path};
  for (const std::string& p : take_plugin_paths(args, true)) lab_->load_plugin(p);
  const Registry& registry = lab_->catalog()->registry;
  file_ = read_settings(parse_experiment_file(path, registry), registry);
  cli_.experiment = Given<std::string>{path, Setting(path, "the experiment file")};
}

void Plan::set(const std::string& key, const std::string& value) {
  if (key.empty() || key[0] == '-') throw UsageError("a keyword names an option without its dashes: '" + key + "'");
  if (key == "plugin") {
    for (const std::string& path : split_list(value, "plugin")) lab_->load_plugin(path);
    return;
  }
  if (key == "experiment") return experiment(value);
  const auto catalog = lab_->catalog();
  std::string folded = key;  // '-' and '_' alike, as the option table reads them
  std::replace(folded.begin(), folded.end(), '_', '-');
  const bool flag = is_flag_option(folded);
  const std::string arg = "--" + key + (flag ? "" : "=" + value);
  const char* argv[] = {"run", arg.c_str()};
  // The option table's spelling of the key (UsageError, with the nearest, for one it does not have).
  const Settings one = parse_command_line(2, argv, catalog->registry);
  const auto& [name, given] = *one.begin();
  SweepSettings next = cli_;  // the plan unchanged when the value is malformed
  read_setting(next, name, flag ? Setting(value.empty() ? "false" : value, given.origin) : given, catalog->registry);
  cli_ = std::move(next);
}

bool Plan::help() const { return help_; }

RunPlan Plan::resolve(const Catalog& catalog) const {
  if (!argument_error_.empty()) throw UsageError(argument_error_);
  RunPlan plan = make_plan(cli_, file_, catalog.registry);
  if (!files_by_default_ && !cli_.output) {  // keywords write files only where asked
    if (plan.resume) throw UsageError("resume: name the output to resume (the `output` key)");
    plan.output.clear(), plan.samples_output.clear();
  }
  return plan;
}

namespace {

// Under mpirun: one GPU per rank, chosen by the node-local rank; every rank takes the same plan,
// and a sweep none of whose grids uses this many ranks is an error on every rank.
DeviceInfo job_device(RunPlan& plan, bool device_given) {
  const Job& j = job();
  bool gpus = false, distributed = false, fits = false;
  std::set<std::string> grids;
  for (const Configuration& c : plan.configurations) {
    gpus = gpus || uses_gpus(c);
    if (!c.pipeline().collective) continue;
    distributed = true;
    if (!c.params.has("grid")) {  // a variant on every rank of the job, whatever its count (cuBLASMp's matmul)
      fits = true;
      continue;
    }
    const Grid g = parse_grid(c.params.text("grid"));
    grids.insert(g.text());
    fits = fits || g.volume() == j.size;
  }
  if (j.size > 1 && !distributed)
    throw UsageError("launched on " + std::to_string(j.size) +
                     " ranks, but the sweep has no distributed algorithm (dist_cannon, dist_summa, dist_dns, cublasmp)");
  if (j.size > 1 && !fits) {
    std::string list;
    for (const auto& g : grids) list += (list.empty() ? "" : ", ") + g;
    throw UsageError("no grid of the sweep (" + list + ") uses " + std::to_string(j.size) +
                     " ranks; run with mpirun -np <rows x cols x layers>");
  }
  if (j.size > 1 && !device_given) plan.device = j.local_rank;
  try {
    return query_device(plan.device);
  } catch (const CudaError& e) {
    if (gpus && j.size > 1)
      throw UsageError(std::to_string(j.local_size) + " ranks on this node, more than its GPUs (" + e.what() +
                       "); launch one rank per GPU, or --device 0 to put every rank on "
                       "GPU 0 (transport copy_engine runs; NCCL refuses ranks that share a GPU)");
    if (gpus) throw;
    DeviceInfo none;
    none.absent_reason = "this rank has no GPU of its own";
    return none;
  }
}

}  // namespace

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int sig) {
  if (g_interrupted.exchange(true)) {  // a second Ctrl-C: stop at once (rows are already whole)
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // delivered as the handler returns
    return;
  }
  // The first says what happens (write(2): safe in a handler); a host reference of a large problem
  // or a long configuration goes on until it ends.
  static const char said[] =
      "\nmmlab: interrupted: the sweep ends when the step it is in ends (a configuration, or the host's "
      "float64 reference of a large problem, which can take minutes); Ctrl-C again stops at once (the rows "
      "written are whole; --resume goes on)\n";
  if (::write(STDERR_FILENO, said, sizeof said - 1) < 0) return;
}

}  // namespace

bool interrupted() { return g_interrupted; }

int run(const Plan& plan, RowSink* sink) {
  // The catalog the run started with stays alive to its end, whatever is added meanwhile; what its
  // algorithms keep across runs is its lab's.
  const std::shared_ptr<const Catalog> catalog = plan.lab().catalog();
  const LabScope scope(plan.lab().states());
  RunPlan resolved;
  DeviceInfo device;
  std::string error;
  try {
    resolved = plan.resolve(*catalog);
    device = job_device(resolved, resolved.device_given);
  } catch (const UsageError& e) {
    error = e.what();
  }
  agree_on_errors(error);  // every rank's, before any goes on
  set_placement(find_placement(device));
  set_rank_timeout(resolved.rank_timeout_s);
  // Ctrl-C ends the sweep after the configuration it is in; the handlers the process had (Python's,
  // in the C API) come back after it.
  g_interrupted = false;
  const auto old_int = std::signal(SIGINT, on_signal), old_term = std::signal(SIGTERM, on_signal);
  const int status = execute(resolved, device, g_interrupted, sink);
  std::signal(SIGINT, old_int), std::signal(SIGTERM, old_term);
  return status;
}

}  // namespace mmlab
