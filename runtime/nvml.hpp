// NVML, the driver's management library, loaded at run time (dlopen("libnvidia-ml.so.1"), which
// the driver installs): no build or link dependency, and a machine without it simply has none.
// Only the calls the lab uses, with NVML's own C types spelled out here.
#pragma once

#include <string>

namespace mmlab::nvml {

struct Device;  // nvmlDevice_t

// The library, initialised once per process; null when it cannot be loaded or initialised.
struct Api;
const Api* api();

std::string driver_version();                      // "" when unknown
Device* device_by_pci_bus_id(const char* bus_id);  // "0000:18:00.0"; null when unknown
// Each returns false when NVML or the device does not say.
bool sm_clock_mhz(Device* d, unsigned* mhz);
bool power_mw(Device* d, unsigned* mw);
bool temperature_c(Device* d, unsigned* c);
bool throttle_reasons(Device* d, unsigned long long* reasons);  // NVML's "clock event reasons" bits
bool energy_mj(Device* d, unsigned long long* mj);  // the GPU's energy since the driver loaded, mJ

}  // namespace mmlab::nvml
