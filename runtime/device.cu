// Device query, buffers and the ranks' placement on GPUs.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/nvml.hpp"

namespace mmlab {

int DeviceInfo::fp32_lanes_per_sm() const {
  switch (cc_major * 10 + cc_minor) {
    case 70:
    case 72:
    case 75:
    case 80: return 64;
    case 86:
    case 87:
    case 89:
    case 90:
    case 100:
    case 103:
    case 110:
    case 120:
    case 121: return 128;
    default: return 0;
  }
}

double DeviceInfo::peak_gflops(const Arithmetic& a) const {
  // Dense FP16 tensor FLOP per clock per SM: V100/T4 1024, A100 2048, H100 and later 4096.
  const int cc = cc_major * 10 + cc_minor;
  const double fp16 = cc >= 90 ? 4096 : cc >= 80 ? 2048 : cc >= 70 ? 1024 : 0;
  double per_clock = 0;
  switch (a.unit) {
    case MathUnit::fp32: per_clock = 2.0 * fp32_lanes_per_sm(); break;
    case MathUnit::tf32_tensor: per_clock = fp16 / 2; break;
    case MathUnit::fp16_tensor: per_clock = fp16; break;
    case MathUnit::int8_tensor: per_clock = 2 * fp16; break;
  }
  return 1e-6 * sm_count * per_clock * double(clock_khz) / std::max(a.passes, 1);
}

namespace {

// The NVIDIA driver's version ("580.159.04"): from the kernel module's banner, else from NVML.
std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::smatch m;
  if (std::getline(in, line) && std::regex_search(line, m, std::regex(R"(\s(\d+\.\d+(\.\d+)?)\s)")))
    return m[1];
  return nvml::driver_version();
}

}  // namespace

DeviceInfo query_device(int ordinal) {
  DeviceInfo d;
  cudaRuntimeGetVersion(&d.cuda_runtime);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear it: absence is not an error for the harness
    // Without the NVIDIA kernel module the runtime's own words ("CUDA driver version is
    // insufficient") mislead: there is no driver at all.
    const bool driver = std::ifstream("/proc/driver/nvidia/version").good();
    d.absent_reason = !driver ? std::string("no NVIDIA driver or GPU found on this machine")
                      : status != cudaSuccess
                          ? std::string("no CUDA GPU found (") + cudaGetErrorString(status) + ")"
                          : std::string("no CUDA GPU on this machine");
    return d;
  }
  if (ordinal >= count)
    throw CudaError("device " + std::to_string(ordinal) + " requested, " + std::to_string(count) +
                    " present");
  MMLAB_CHECK(cudaSetDevice(ordinal));
  cudaDeviceProp p{};
  MMLAB_CHECK(cudaGetDeviceProperties(&p, ordinal));
  d.present = true;
  d.ordinal = ordinal;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.shared_per_block_optin = p.sharedMemPerBlockOptin;
  d.l2_bytes = std::size_t(p.l2CacheSize);
  d.max_grid_y = unsigned(p.maxGridSize[1]);
  d.max_grid_z = unsigned(p.maxGridSize[2]);
  MMLAB_CHECK(cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, ordinal));
  MMLAB_CHECK(cudaDriverGetVersion(&d.cuda_driver));
  d.driver_version = nvidia_driver_version();
  return d;
}

std::size_t free_device_bytes() {
  std::size_t free = 0, total = 0;
  MMLAB_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

void synchronize_device() { MMLAB_CHECK(cudaDeviceSynchronize()); }

Buffer::Buffer(std::size_t bytes, Kind kind) : bytes_(bytes), kind_(kind) {
  if (bytes == 0) return;
  if (kind == Kind::device)
    MMLAB_CHECK(cudaMalloc(&ptr_, bytes));
  else
    MMLAB_CHECK(cudaMallocHost(&ptr_, bytes));
}

Buffer::~Buffer() {
  if (!ptr_) return;
  // Errors here would only hide the one being reported; the memory goes with the context anyway.
  if (kind_ == Kind::device)
    cudaFree(ptr_);
  else
    cudaFreeHost(ptr_);
}

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  MMLAB_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

Placement find_placement(const DeviceInfo& device) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char bus[32] = "none";
  if (device.present) MMLAB_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device.ordinal));
  const std::vector<std::string> all = gather_texts(std::string(host) + "|" + bus);
  Placement p;
  std::map<std::string, std::vector<int>> by_gpu;  // host|bus -> ranks, in rank order
  for (int r = 0; r < int(all.size()); ++r)
    if (all[std::size_t(r)].substr(all[std::size_t(r)].find('|') + 1) != "none") by_gpu[all[std::size_t(r)]].push_back(r);
  for (const auto& [gpu, ranks] : by_gpu) {
    if (ranks.size() < 2) continue;
    std::ostringstream text;
    for (std::size_t i = 0; i < ranks.size(); ++i) text << (i ? ", " : "ranks ") << ranks[i];
    text << " share GPU " << gpu.substr(gpu.find('|') + 1) << " on host " << gpu.substr(0, gpu.find('|'));
    p.shared = text.str();
    break;
  }
  // This rank's view of the other GPUs of its host: can its GPU map their memory (peer access)?
  std::string mine;
  for (int r = 0; r < int(all.size()) && device.present && mine.empty(); ++r) {
    const std::string& other = all[std::size_t(r)];
    const std::string other_host = other.substr(0, other.find('|')), other_bus = other.substr(other.find('|') + 1);
    if (other_host != host || other_bus == bus || other_bus == "none") continue;
    int ordinal = -1, can = 0;
    if (cudaDeviceGetByPCIBusId(&ordinal, other_bus.c_str()) != cudaSuccess) {
      cudaGetLastError();  // not visible to this rank: nothing to say
      continue;
    }
    MMLAB_CHECK(cudaDeviceCanAccessPeer(&can, device.ordinal, ordinal));
    if (!can)
      mine = "ranks " + std::to_string(job().rank) + " and " + std::to_string(r) + " on host " + host + ": GPU " +
             bus + " cannot map the memory of GPU " + other_bus + " (no peer access)";
  }
  for (const std::string& view : gather_texts(mine))
    if (!view.empty() && p.unmapped.empty()) p.unmapped = view;
  return p;
}

}  // namespace mmlab
