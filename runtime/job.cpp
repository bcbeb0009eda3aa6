// The MPI job (runtime/job.hpp).
#include "runtime/job.hpp"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/params.hpp"  // UsageError

namespace mmlab {

namespace {
Job g_job;
std::vector<std::function<void()>> g_at_end;
Placement g_placement;

// The watchdog's state: the wait under way (none: what == nullptr), since when, and the job's step.
struct Watchdog {
  std::mutex m;
  std::condition_variable stop_cv;
  const char* what = nullptr;
  std::chrono::steady_clock::time_point since;
  std::string step;
  double timeout = 0;
  bool stop = false;
  std::thread thread;

  void run() {
    std::unique_lock<std::mutex> lock(m);
    while (!stop_cv.wait_for(lock, std::chrono::milliseconds(250), [&] { return stop; })) {
      if (!what || timeout <= 0) continue;
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
      if (waited < timeout) continue;
      std::fprintf(stderr,
                   "mmlab: rank %d waited %.0f s in %s (step: %s), longer than --rank-timeout %.0f s: the other "
                   "ranks did not arrive; ending the job\n",
                   g_job.rank, waited, what, step.empty() ? "setting up" : step.c_str(), timeout);
      std::fflush(stderr);
      std::_Exit(kWatchdogExit);  // mpirun ends the other ranks of a job when one exits without finalizing
    }
  }
};
Watchdog& watchdog() {
  static Watchdog w;
  return w;
}

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}

void start_mpi(int* argc, char*** argv) {
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);  // a failed call ends the job
  g_job.mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_job.size);
  MPI_Comm node;  // the ranks on this host: the GPU is chosen by the node-local rank
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_job.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g_job.local_rank);
  MPI_Comm_size(node, &g_job.local_size);
  MPI_Comm_free(&node);
}
}  // namespace

const Job& job() { return g_job; }

bool under_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

void init_job(int* argc, char*** argv) {
  if (under_mpirun()) start_mpi(argc, argv);
}

void ensure_mpi() {
  if (!g_job.mpi) start_mpi(nullptr, nullptr);
}

void at_job_end(std::function<void()> release) { g_at_end.push_back(std::move(release)); }

void finalize_job() {
  Watchdog& w = watchdog();
  if (w.thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(w.m);
      w.stop = true;
    }
    w.stop_cv.notify_all();
    w.thread.join();
  }
  for (auto it = g_at_end.rbegin(); it != g_at_end.rend(); ++it) (*it)();
  g_at_end.clear();
  if (g_job.mpi) MPI_Finalize();
  g_job.mpi = false;
}

void abort_job(int code) {
  if (g_job.mpi && g_job.size > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

void barrier() {
  Waiting w("an MPI barrier");
  if (g_job.mpi) MPI_Barrier(MPI_COMM_WORLD);
}

void barrier_after_rank0_alone() {
  if (g_job.mpi) MPI_Barrier(MPI_COMM_WORLD);
}

double max_over_ranks(double v) {
  Waiting w("an MPI all-reduce");
  if (g_job.mpi) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

double sum_over_ranks(double v) {
  Waiting w("an MPI all-reduce");
  if (g_job.mpi) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

void broadcast_text(std::string& text) {
  if (!g_job.mpi || g_job.size == 1) return;
  Waiting w("an MPI broadcast");
  long n = long(text.size());
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  text.resize(std::size_t(n));
  MPI_Bcast(text.data(), int(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}

void broadcast_indices(std::vector<std::size_t>& indices) {
  if (!g_job.mpi || g_job.size == 1) return;
  Waiting w("an MPI broadcast");
  std::vector<unsigned long long> wide(indices.begin(), indices.end());
  long n = long(wide.size());
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  wide.resize(std::size_t(n));
  MPI_Bcast(wide.data(), int(n), MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  indices.assign(wide.begin(), wide.end());
}

std::vector<std::string> gather_texts(const std::string& mine) {
  if (!g_job.mpi || g_job.size == 1) return {mine};
  Waiting w("an MPI all-gather");
  const int n = int(mine.size());
  std::vector<int> sizes(std::size_t(g_job.size)), offsets(std::size_t(g_job.size));
  MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < g_job.size; ++r) offsets[std::size_t(r)] = total, total += sizes[std::size_t(r)];
  std::string all(std::size_t(total), '\0');
  MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < g_job.size; ++r)
    out.push_back(all.substr(std::size_t(offsets[std::size_t(r)]), std::size_t(sizes[std::size_t(r)])));
  return out;
}

void agree_on_errors(const std::string& mine) {
  const std::vector<std::string> all = gather_texts(mine);
  int first = -1;
  bool same = true;
  for (int r = 0; r < int(all.size()); ++r) {
    if (all[std::size_t(r)].empty()) {
      same = false;
      continue;
    }
    if (first < 0) first = r;
    same = same && all[std::size_t(r)] == all[std::size_t(first)];
  }
  if (first < 0) return;
  const std::string& text = all[std::size_t(first)];
  throw UsageError(same || all.size() == 1 ? text : "rank " + std::to_string(first) + ": " + text);
}

const Placement& placement() { return g_placement; }
void set_placement(Placement p) { g_placement = std::move(p); }

void set_rank_timeout(double seconds) {
  Watchdog& w = watchdog();
  {
    std::lock_guard<std::mutex> lock(w.m);
    w.timeout = seconds;
  }
  if (seconds > 0 && g_job.mpi && g_job.size > 1 && !w.thread.joinable()) w.thread = std::thread([&w] { w.run(); });
}

void job_step(std::string step) {
  Watchdog& w = watchdog();
  std::lock_guard<std::mutex> lock(w.m);
  w.step = std::move(step);
}

Waiting::Waiting(const char* what) {
  Watchdog& w = watchdog();
  std::lock_guard<std::mutex> lock(w.m);
  w.what = what;
  w.since = std::chrono::steady_clock::now();
}

Waiting::~Waiting() {
  Watchdog& w = watchdog();
  std::lock_guard<std::mutex> lock(w.m);
  w.what = nullptr;
}

}  // namespace mmlab
