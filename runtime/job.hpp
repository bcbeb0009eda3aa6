// The MPI job this process is part of (one process when not launched by mpirun): its ranks, the
// collectives the harness and the distributed algorithms use, and the job-wide abort. MPI is
// initialised only under mpirun or when a distributed algorithm needs it, so a plain `mmlab run`
// stays a plain process.
#pragma once

#include <functional>
#include <string>

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
double max_over_ranks(double v);
double sum_over_ranks(double v);
void broadcast_text(std::string& text);  // from rank 0

}  // namespace mmlab
