// The axes every distributed algorithm has (grid, engine, transport, NCCL's thread blocks) and the
// checks of a configuration against the job and the machine (context.hpp declares them).
#include "distributed/context.hpp"
#include "runtime/job.hpp"

namespace mmlab::dist {

Axis grid_axis(const std::string& default_value, std::vector<std::string> values) {
  return {"grid", AxisKind::grid, "process grid rows x cols [x layers]; its volume is the job's rank count",
          default_value, std::move(values)};
}

Axis engine_axis() {
  return {
      "engine",
      AxisKind::choice,
      "local product of each rank, a lab algorithm: on its GPU cublas (cublas:default, pure FP32), "
      "register_tiled (register_tiled:tuned), tensor_cores (flagship:tensor_cores, the FP32-accurate "
      "tensor-core dispatcher; tf32x3 before) or cublas_tf32 (cublas:tf32, TF32 tensor cores, judged as TF32); "
      "or eigen (eigen:default, the CPU backend: host memory, MPI messages)",
      "cublas",
      {"cublas", "register_tiled", "tensor_cores", "eigen"},
      {},
      2147483647,
      {"cublas_tf32"}};
}

Axis transport_axis() {
  return {"transport",
          AxisKind::choice,
          "how blocks move between GPUs: nccl (NCCL's kernels) or copy_engine (the copy engines: peer buffers "
          "mapped once through CUDA IPC, pulled by cudaMemcpyAsync; ranks on one host, else NCCL with the "
          "reason in the row); mpi: MPI messages between host processes, the eigen engine's (which resolves "
          "nccl to it)",
          "nccl",
          {"nccl", "copy_engine", "mpi"}};
}

Axis comm_ctas_axis() {
  return {"comm_ctas",
          AxisKind::choice,
          "most thread blocks NCCL may run a transfer with (fewer SMs taken from the overlapped products); "
          "auto: NCCL's "
          "choice",
          "auto",
          {"auto", "2", "4", "8", "16"}};
}

Reason check_job(const Grid& grid, const Params& q, const DeviceInfo& device) {
  if (grid.volume() != job().size)
    return "grid " + grid.text() + " needs " + std::to_string(grid.volume()) + " ranks; this job has " +
           std::to_string(job().size) + " (mpirun -np " + std::to_string(grid.volume()) + ")";
  const std::string engine = q.text("engine");
  const bool on_host = mmlab::Engine::on_host(engine_spec(engine));
  if (on_host && q.text("transport") == "copy_engine")
    return std::string("transport copy_engine moves device memory; the eigen engine's blocks are host memory "
                       "(MPI moves them: transport mpi)");
  if (!on_host && q.text("transport") == "mpi")
    return "transport mpi moves host memory (the eigen engine's); engine " + engine +
           "'s blocks are on GPUs: transport nccl or copy_engine";
  if (!on_host && !device.present) return device.absent_reason;
  // Facts of the placement, found once on every rank alike (runtime/job.hpp), before any collective.
  if (!on_host && q.text("transport") == "nccl" && !placement().shared.empty())
    return "NCCL needs a GPU of its own per rank: " + placement().shared +
           " (transport copy_engine runs here; or launch as many ranks per host as it has GPUs)";
  if (!on_host && q.text("transport") == "copy_engine" && !placement().unmapped.empty())
    return "the copy engines need every GPU of a host to map the others' memory: " + placement().unmapped +
           " (transport nccl)";
  return std::nullopt;
}

}  // namespace mmlab::dist
