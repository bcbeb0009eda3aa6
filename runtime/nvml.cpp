// NVML through dlopen (runtime/nvml.hpp).
#include "runtime/nvml.hpp"

#include <dlfcn.h>

namespace mmlab::nvml {

namespace {
constexpr int kSuccess = 0;         // NVML_SUCCESS
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
}  // namespace

struct Api {
  int (*init)() = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*by_pci_bus_id)(const char*, Device**) = nullptr;
  int (*clock_info)(Device*, int, unsigned*) = nullptr;
  int (*power_usage)(Device*, unsigned*) = nullptr;
  int (*temperature)(Device*, int, unsigned*) = nullptr;
  int (*reasons)(Device*, unsigned long long*) = nullptr;
  int (*energy)(Device*, unsigned long long*) = nullptr;
};

const Api* api() {
  static const Api* loaded = []() -> const Api* {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) return nullptr;
    static Api a;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name));
    };
    get(a.init, "nvmlInit_v2");
    get(a.driver_version, "nvmlSystemGetDriverVersion");
    get(a.by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    get(a.clock_info, "nvmlDeviceGetClockInfo");
    get(a.power_usage, "nvmlDeviceGetPowerUsage");
    get(a.temperature, "nvmlDeviceGetTemperature");
    get(a.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!a.reasons) get(a.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");  // drivers before 535
    get(a.energy, "nvmlDeviceGetTotalEnergyConsumption");
    if (!a.init || a.init() != kSuccess) return nullptr;  // the library stays loaded: the process needs it
    return &a;
  }();
  return loaded;
}

std::string driver_version() {
  const Api* a = api();
  char buf[96] = {};
  if (!a || !a->driver_version || a->driver_version(buf, sizeof buf) != kSuccess) return "";
  return buf;
}

Device* device_by_pci_bus_id(const char* bus_id) {
  const Api* a = api();
  Device* d = nullptr;
  if (!a || !a->by_pci_bus_id || a->by_pci_bus_id(bus_id, &d) != kSuccess) return nullptr;
  return d;
}

bool sm_clock_mhz(Device* d, unsigned* mhz) {
  const Api* a = api();
  return d && a && a->clock_info && a->clock_info(d, kClockSm, mhz) == kSuccess;
}

bool power_mw(Device* d, unsigned* mw) {
  const Api* a = api();
  return d && a && a->power_usage && a->power_usage(d, mw) == kSuccess;
}

bool temperature_c(Device* d, unsigned* c) {
  const Api* a = api();
  return d && a && a->temperature && a->temperature(d, kTemperatureGpu, c) == kSuccess;
}

bool throttle_reasons(Device* d, unsigned long long* reasons) {
  const Api* a = api();
  return d && a && a->reasons && a->reasons(d, reasons) == kSuccess;
}

bool energy_mj(Device* d, unsigned long long* mj) {
  const Api* a = api();
  return d && a && a->energy && a->energy(d, mj) == kSuccess;
}

}  // namespace mmlab::nvml
