// Clock, power, temperature and throttle samples (runtime/clocks.hpp).
#include <cstdlib>

#include "runtime/clocks.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/nvml.hpp"

namespace mmlab {

namespace {

// Spins for about `ns` of the global timer and reports the SM cycles and nanoseconds that passed.
__global__ void clock_probe_kernel(long long ns, unsigned long long* out) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < (unsigned long long)ns);
  const long long c1 = clock64();
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = t1 - t0;
}

}  // namespace

std::string throttle_names(unsigned long long reasons) {
  static const std::pair<unsigned long long, const char*> kNames[] = {
      {0x2, "app_clocks"},  {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"},  {0x10, "sync_boost"},
      {0x20, "sw_thermal"}, {0x40, "hw_thermal"},  {0x80, "power_brake"}, {0x100, "display_clocks"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (reasons & bit) out += (out.empty() ? "" : "+") + std::string(name);
  return out;
}

ClockMonitor::ClockMonitor(const DeviceInfo& device, const char* source) {
  if (!device.present) return;
  if (!source) source = std::getenv("MMLAB_CLOCKS");
  const std::string asked = source ? source : "";
  if (asked == "none") return;
  char bus_id[32] = {};
  if (asked != "probe" && cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device.ordinal) == cudaSuccess)
    nvml_device_ = nvml::device_by_pci_bus_id(bus_id);
  unsigned mhz = 0;
  if (nvml_device_ && nvml::sm_clock_mhz(static_cast<nvml::Device*>(nvml_device_), &mhz)) {
    source_ = Source::nvml;
  } else {
    source_ = Source::probe;
    probe_ = Buffer(2 * sizeof(unsigned long long), Buffer::Kind::device);
  }
}

const char* ClockMonitor::source() const {
  return source_ == Source::nvml ? "nvml" : source_ == Source::probe ? "probe" : "none";
}

double ClockMonitor::energy_j() const {
  unsigned long long mj = 0;
  if (source_ != Source::nvml || !nvml::energy_mj(static_cast<nvml::Device*>(nvml_device_), &mj)) return -1;
  return double(mj) / 1e3;
}

ClockSample ClockMonitor::sample(CUstream_st* stream) {
  ClockSample s;
  if (source_ == Source::none) return s;
  if (source_ == Source::nvml) {
    auto* d = static_cast<nvml::Device*>(nvml_device_);
    unsigned v = 0;
    unsigned long long reasons = 0;
    if (nvml::sm_clock_mhz(d, &v)) s.sm_mhz = v;
    if (nvml::power_mw(d, &v)) s.power_w = v / 1000.0;
    if (nvml::temperature_c(d, &v)) s.temperature_c = v;
    if (nvml::throttle_reasons(d, &reasons)) s.throttle = reasons;
  } else {
    clock_probe_kernel<<<1, 1, 0, stream>>>(20000, probe_.as<unsigned long long>());
    MMLAB_CHECK_LAUNCH();
    unsigned long long out[2] = {};
    MMLAB_CHECK(cudaMemcpyAsync(out, probe_.get(), sizeof out, cudaMemcpyDeviceToHost, stream));
    MMLAB_CHECK(cudaStreamSynchronize(stream));
    if (out[1] > 0) s.sm_mhz = 1e3 * double(out[0]) / double(out[1]);
  }
  if (reference_mhz_ == 0 && s.sm_mhz > 0) reference_mhz_ = s.sm_mhz;
  return s;
}

}  // namespace mmlab
