// The MPI job (runtime/job.hpp).
#include "runtime/job.hpp"

#include <mpi.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace mmlab {

namespace {
Job g_job;
std::vector<std::function<void()>> g_at_end;

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
  if (g_job.mpi) MPI_Barrier(MPI_COMM_WORLD);
}

double max_over_ranks(double v) {
  if (g_job.mpi) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

double sum_over_ranks(double v) {
  if (g_job.mpi) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

void broadcast_text(std::string& text) {
  if (!g_job.mpi || g_job.size == 1) return;
  long n = long(text.size());
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  text.resize(std::size_t(n));
  MPI_Bcast(text.data(), int(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}

}  // namespace mmlab
