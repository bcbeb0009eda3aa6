#include "harness/workbench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/random.hpp"
#include "harness/progress.hpp"
#include "runtime/cuda_check.hpp"

namespace mmlab {

namespace {
// Above this many multiply-adds the reference is computed on the GPU, below it by Eigen.
constexpr double kHostReferenceLimit = 256.0 * 256.0 * 256.0;
// A device reference larger than this is freed after each comparison (made again when another
// configuration of the problem needs it): the device memory is the streamed algorithms' budget.
constexpr double kKeptReferenceBytes = 4.0 * (1 << 30);
// A host reference this large (about 4600 cubed; tens of seconds to minutes in float64 on a few
// cores) is announced before it starts.
constexpr double kAnnouncedHostReference = 1e11;
}  // namespace

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

Workbench::Workbench(const Problem& p, const DeviceInfo& d, unsigned long long seed)
    : problem_(p), device_(d), seed_(seed) {
  if (device_.present) {
    cudaStream_t s;
    MMLAB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    stream_ = s;
  }
}

Workbench::~Workbench() {
  // Work a configuration left on other streams (its own, another library's) ends before its buffers
  // go: a kernel that writes C after the lab freed it would end the process (a sticky error), and
  // every row after it. Work a thread enqueues later still can (tests/cheats).
  if (stream_) cudaDeviceSynchronize();
  if (stream_) cudaStreamDestroy(stream_);
}

bool Workbench::reference_on_device() const {
  const Problem& p = problem_;
  return device_.present && double(p.m) * double(p.n) * double(p.k) > kHostReferenceLimit;
}

Reason Workbench::prepare_device() {
  if (d_a_.get()) return std::nullopt;
  const Problem& p = problem_;
  const double bytes = 4.0 * (double(p.m) * p.k + double(p.k) * p.n + double(p.m) * p.n) +
                       (reference_on_device() ? 16.0 * double(p.m) * p.n : 0.0);
  const std::size_t free = free_device_bytes();
  if (bytes + kDeviceReserve > double(free))
    return "problem needs " + gib(bytes) + " of device memory (A, B, C" +
           (reference_on_device() ? ", float64 reference and sum |a b|" : "") + "), " + gib(double(free)) +
           " free";
  d_a_ = Buffer(sizeof(float) * p.m * p.k, Buffer::Kind::device);
  d_b_ = Buffer(sizeof(float) * p.k * p.n, Buffer::Kind::device);
  d_c_ = Buffer(sizeof(float) * p.m * p.n, Buffer::Kind::device);
  fill_device_inputs(seed_);
  return std::nullopt;
}

std::size_t available_host_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib << 10;
    in.ignore(1 << 10, '\n');
  }
  return std::size_t(sysconf(_SC_AVPHYS_PAGES)) * std::size_t(sysconf(_SC_PAGESIZE));
}

Reason Workbench::prepare_host() {
  if (h_a_) return std::nullopt;
  const Problem& p = problem_;
  const std::size_t na = std::size_t(p.m) * p.k, nb = std::size_t(p.k) * p.n, nc = std::size_t(p.m) * p.n;
  // A, B, C in float; a host reference casts A and B to double and writes C and |A| |B| in double.
  const double elements = double(na) + double(nb) + double(nc);
  const double bytes = 4.0 * elements + (reference_on_device() ? 0.0 : 8.0 * (elements + double(nc)));
  const std::size_t available = available_host_bytes();
  if (bytes + kHostReserve > double(available))
    return "problem needs " + gib(bytes) + " of host memory (A, B, C" +
           (reference_on_device() ? "" : ", float64 reference") + "), " + gib(double(available)) +
           " available";
  float* base;
  if (device_.present) {  // pinned, so end_to_end copies run at full speed
    pinned_ = Buffer(sizeof(float) * (na + nb + nc), Buffer::Kind::pinned_host);
    base = pinned_.as<float>();
  } else {
    host_storage_.resize(na + nb + nc);
    base = host_storage_.data();
  }
  h_a_ = base;
  h_b_ = base + na;
  h_c_ = base + na + nb;
  fill_input_host(h_a_, p.m, p.k, p.inputs, seed_, kMatrixA);
  fill_input_host(h_b_, p.k, p.n, p.inputs, seed_, kMatrixB);
  host_seed_ = seed_;
  return std::nullopt;
}

void Workbench::ensure_reference() {
  if (reference_ready_) return;
  const Problem& p = problem_;
  if (reference_on_device()) {
    if (auto why = prepare_device()) throw CudaError("float64 reference: " + *why);
    d_ref_ = Buffer(sizeof(double) * p.m * p.n, Buffer::Kind::device);
    d_sumabs_ = Buffer(sizeof(double) * p.m * p.n, Buffer::Kind::device);
    use_device_inputs(seed_);
    reference_device(device_a(), device_b(), d_ref_.as<double>(), d_sumabs_.as<double>(), p.m, p.n, p.k,
                     stream_);
    MMLAB_CHECK(cudaStreamSynchronize(stream_));
    if (!audit_samples_)
      audit_samples_ = std::make_unique<AuditSamples>(audit_samples_device(
          d_ref_.as<double>(), d_sumabs_.as<double>(), std::size_t(p.m) * p.n, seed_, stream_));
  } else {
    if (Reason why = prepare_host()) throw std::runtime_error("float64 reference: " + *why);
    const double fmas = double(p.m) * double(p.n) * double(p.k);
    if (fmas >= kAnnouncedHostReference) {  // said before it starts: Ctrl-C waits for it
      end_progress_line();
      std::fprintf(stderr,
                   "mmlab: the float64 reference of %ldx%ldx%ld on the host (%.2g multiply-adds) can take "
                   "minutes; Ctrl-C ends the sweep after it, twice stops at once\n",
                   p.m, p.n, p.k, fmas);
    }
    h_ref_.resize(std::size_t(p.m) * p.n);
    h_sumabs_.resize(std::size_t(p.m) * p.n);
    use_host_inputs(seed_);
    reference_host(h_a_, h_b_, h_ref_.data(), h_sumabs_.data(), p.m, p.n, p.k);
    if (!audit_samples_ && device_.present)
      audit_samples_ = std::make_unique<AuditSamples>(
          audit_samples_host(h_ref_.data(), h_sumabs_.data(), h_ref_.size(), seed_));
  }
  reference_ready_ = true;
}

Verdict Workbench::verify_device_output(const float* c_device, Precision precision) {
  ensure_reference();
  const Problem& p = problem_;
  const std::size_t count = std::size_t(p.m) * p.n;
  if (reference_on_device()) {
    const Verdict v = judge(compare_device(c_device, d_ref_.as<double>(), d_sumabs_.as<double>(), count, stream_),
                            p.k, p.inputs, precision);
    if (16.0 * double(count) > kKeptReferenceBytes) release_reference();
    return v;
  }
  if (Reason why = prepare_host()) throw std::runtime_error("verification: " + *why);
  MMLAB_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(h_c_, c_device, count * sizeof(float));
  return verify_host_output(h_c_, precision);
}

Verdict Workbench::verify_host_output(const float* c_host, Precision precision) {
  ensure_reference();
  const Problem& p = problem_;
  const std::size_t count = std::size_t(p.m) * p.n;
  if (!reference_on_device())
    return judge(compare_host(c_host, h_ref_.data(), h_sumabs_.data(), count), p.k, p.inputs, precision);
  MMLAB_CHECK(cudaMemcpyAsync(device_c(), c_host, count * sizeof(float), cudaMemcpyHostToDevice, stream_));
  return verify_device_output(device_c(), precision);
}

void Workbench::use_device_inputs(unsigned long long seed) {
  if (d_a_.get() && device_seed_ != seed) fill_device_inputs(seed);
}

// A and B made, then left in the L2 as the trials before them would have left repeated inputs
// (data/cheats/h200-cd6ea9c/, h200-958132b/ and h200-13ff038/, on an H200):
// - the fill's lines are written back here, not when a trial's own lines evict them inside the clock
//   (without it tf32x3 presplit2/3 at 2000x500x3000 took up to 1.02x their time on repeated inputs; half3
//   at 1400^3 still takes up to 1.035x on some H200s): A and B are stored evict-first, then a buffer of
//   twice the L2, read evict-first, takes those lines' place (where the device has room for it). The L2's
//   other lines, the kernels' own, stay, as the trial times show (tf32x3 half2 at 256 0.98-1.00x); read
//   through as any read, at 256 they left with it and half2 took 1.4x;
// - where A and B fit in the L2 together, they are then read (kInputReaders, runtime/gpu.hpp): a trial finds
//   them as reads leave them, not as the fill's writes did (without it outer_product at 256 and 1024 took
//   1.07-1.09x its time on repeated inputs).
void Workbench::fill_device_inputs(unsigned long long seed) {
  const Problem& p = problem_;
  const std::size_t a = std::size_t(p.m) * p.k, b = std::size_t(p.k) * p.n;
  fill_input_device(d_a_.as<float>(), p.m, p.k, p.inputs, seed, kMatrixA, stream_, L2Keep::evict_first);
  fill_input_device(d_b_.as<float>(), p.k, p.n, p.inputs, seed, kMatrixB, stream_, L2Keep::evict_first);
  // Without room for the buffer the fill's lines stay where they are.
  if (l2_flush_.get() || free_device_bytes() > 4 * device_.l2_bytes) {
    const Buffer& through = l2_flush_buffer();
    read_from_blocks(through.as<float>(), through.bytes() / sizeof(float), 1, stream_, L2Keep::evict_first);
  }
  if (sizeof(float) * (a + b) <= device_.l2_bytes) {
    read_from_blocks(d_a_.as<float>(), a, kInputReaders, stream_);
    read_from_blocks(d_b_.as<float>(), b, kInputReaders, stream_);
  }
  MMLAB_CHECK(cudaStreamSynchronize(stream_));
  device_seed_ = seed;
}

void Workbench::use_host_inputs(unsigned long long seed) {
  const Problem& p = problem_;
  if (!h_a_ || host_seed_ == seed) return;
  if (d_a_.get()) {  // made on the GPU and copied down: the same values (input_value), far sooner
    use_device_inputs(seed);
    copy_to_host(h_a_, d_a_.get(), std::size_t(p.m) * p.k * sizeof(float));
    copy_to_host(h_b_, d_b_.get(), std::size_t(p.k) * p.n * sizeof(float));
  } else {
    fill_input_host(h_a_, p.m, p.k, p.inputs, seed, kMatrixA);
    fill_input_host(h_b_, p.k, p.n, p.inputs, seed, kMatrixB);
  }
  host_seed_ = seed;
}

const AuditSamples& Workbench::audit_samples() {
  if (!audit_samples_) ensure_reference();
  if (!audit_samples_) throw std::logic_error("audit samples need a GPU");
  return *audit_samples_;
}

void Workbench::release_reference() {
  d_ref_ = Buffer();
  d_sumabs_ = Buffer();
  reference_ready_ = false;
}

const Buffer& Workbench::l2_flush_buffer() {
  if (!l2_flush_.get()) {  // zeroed once: fill_device_inputs reads it
    l2_flush_ =
        Buffer(std::max<std::size_t>(2 * device_.l2_bytes, std::size_t(1) << 20), Buffer::Kind::device);
    MMLAB_CHECK(cudaMemsetAsync(l2_flush_.get(), 0, l2_flush_.bytes(), stream_));
  }
  return l2_flush_;
}

}  // namespace mmlab
