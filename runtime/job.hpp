// The MPI job this process is part of (one process when not launched by mpirun): its ranks, the
// collectives the harness and the distributed algorithms use, and the job-wide abort. MPI is
// initialised only under mpirun or when a distributed algorithm needs it, so a plain `mmlab run`
// stays a plain process.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace mmlab {

struct Job {
  int rank = 0, size = 1;              // in the world
  int local_rank = 0, local_size = 1;  // on this node
  bool mpi = false;                    // MPI initialised
};
const Job& job();
bool under_mpirun();                     // launched by mpirun (an MPI process manager's variables are set)
void init_job(int* argc, char*** argv);  // MPI_Init when under mpirun
void ensure_mpi();                       // MPI_Init now (a singleton job) if not yet
void finalize_job();                     // runs the at_job_end actions, then MPI_Finalize
void at_job_end(std::function<void()> release);  // e.g. free communicators while MPI still runs
[[noreturn]] void abort_job(int code);           // every rank ends (MPI_Abort), not just this one
// Collectives over the world (no-ops in a one-process job).
void barrier();
// A barrier the watchdog does not time: the other ranks wait here while rank 0 runs its
// single-process configurations alone, which take as long as they take (a one-GPU baseline at 30001,
// its choice of kernel measured, outlasted a 60 s --rank-timeout on four H100s). Rank 0 waits on no
// one meanwhile; if it dies mpirun ends the job, if it stops it aborts the job.
void barrier_after_rank0_alone();
double max_over_ranks(double v);
double sum_over_ranks(double v);
void broadcast_text(std::string& text);  // from rank 0
void broadcast_indices(std::vector<std::size_t>& indices);  // from rank 0
std::vector<std::string> gather_texts(const std::string& mine);  // every rank's, in rank order, on every rank

// Errors that may differ between ranks (a GPU absent, a plugin missing on one host), agreed on before
// any rank goes on into a collective: every rank passes its own ("" for none); when any rank has one,
// every rank throws UsageError with it ("rank R: ..." where the ranks did not all say the same).
void agree_on_errors(const std::string& mine);

// Where the ranks' GPUs are, the same on every rank once found (harness: after each rank has chosen
// its GPU). Empty texts: nothing in the way.
struct Placement {
  std::string shared;    // ranks that share one GPU ("ranks 0 and 1 share GPU 0 ... on host h")
  std::string unmapped;  // ranks on one host whose GPUs cannot map each other's memory (CUDA IPC)
};
const Placement& placement();
void set_placement(Placement p);

// The watchdog: a rank that waits longer than the rank timeout (seconds; 0: no watchdog) at a place
// marked by a Waiting guard ends the whole job, on stderr the rank, the wait and the job's step; the
// other ranks may be waiting for a rank that never comes (mismatched command lines, a rank stuck).
void set_rank_timeout(double seconds);
inline constexpr int kWatchdogExit = 4;  // the exit status of a rank the watchdog ended
void job_step(std::string step);  // what the job is doing, for that message
class Waiting {
 public:
  explicit Waiting(const char* what);  // e.g. "an MPI all-reduce"
  ~Waiting();
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;
};

}  // namespace mmlab
