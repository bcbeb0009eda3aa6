// The GPU's SM clock, power, temperature and throttle reasons, sampled after every trial, so that
// a row says whether its trials ran at the clock the run started with, and an analysis can compare
// in clock cycles (nvbench's robust compare does the same). NVML when it is there (runtime/nvml.hpp);
// else a probe kernel measures the SM clock as clock64 cycles against %globaltimer nanoseconds.
#pragma once

#include <string>

#include "core/algorithm.hpp"
#include "runtime/gpu.hpp"

namespace mmlab {

struct ClockSample {
  double sm_mhz = 0;                // 0: not measured
  double power_w = -1;              // -1: unknown
  double temperature_c = -1;        // -1: unknown
  unsigned long long throttle = 0;  // NVML's clock event reason bits (0: none, or unknown)
  // The trial's energy, J (the pipeline's: NVML's energy counter before and after it, summed over a
  // job's GPUs); -1: unknown, or a trial shorter than kEnergyResolvedMs (not a trial's energy).
  double energy_j = -1;
};

// The shortest trial whose energy NVML's counter resolves. The counter moves in steps: in the four-H100
// runs (data/distributed/x4/, issue #79's audit) a 1 ms trial read 21 J and half of the trials 0 J, and
// trials below about 100 ms read steps, not their energy. Shorter trials record none.
inline constexpr double kEnergyResolvedMs = 100;
inline bool energy_resolved(double trial_ms) { return trial_ms >= kEnergyResolvedMs; }

// "sw_power_cap+hw_slowdown": the names of the reasons set ("" for none). Idle is left out: a trial
// that was just timed did not run at idle, whatever the sample taken after it says.
std::string throttle_names(unsigned long long reasons);

class ClockMonitor {
 public:
  // Source none without a GPU; else `source` ("nvml", "probe"), or the environment's MMLAB_CLOCKS,
  // or NVML where it answers and the probe otherwise.
  explicit ClockMonitor(const DeviceInfo& device, const char* source = nullptr);
  const char* source() const;  // "nvml", "probe" or "none"
  // A sample now (after a trial has completed); the probe runs on `stream`.
  ClockSample sample(CUstream_st* stream);
  // NVML's energy counter of this GPU, J since the driver loaded; -1 without NVML.
  double energy_j() const;
  // The run's reference: the SM clock of its first sample under load (0 until then). A trial below
  // kSlowFraction of it counts as slow in its row.
  double reference_mhz() const { return reference_mhz_; }
  static constexpr double kSlowFraction = 0.95;

 private:
  enum class Source { none, nvml, probe } source_ = Source::none;
  void* nvml_device_ = nullptr;
  Buffer probe_;  // the probe kernel's two counters
  double reference_mhz_ = 0;
};

}  // namespace mmlab
