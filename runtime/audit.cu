#include "runtime/audit.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/random.hpp"
#include "runtime/cuda_check.hpp"

namespace mmlab {

namespace {

constexpr int kThreads = 256, kBlocks = 264;  // two blocks per SM of an H100, elements strided over them

struct State {
  unsigned long long hash;      // this trial's, being summed
  unsigned long long expected;  // the verified C's
  unsigned long long bad;       // this trial's failed samples
  unsigned int blocks_done;     // blocks of this trial's launch that have added their part
  long long trials, differed, entries, unwritten, wrong;
  int unwritten_now;  // the last kWritten launch found a poison (its trial already counted as differing)
};

enum Mode { kRecord = 0, kHash = 1, kSamples = 2, kWritten = 3 };

// One-to-one in (i, bits) for i < 2^32 (an odd multiplier and a xor-shift are bijections), so a change
// of one element always changes the sum; one 64-bit product per element keeps the audit near the copy
// rate of C.
__device__ unsigned long long mix(unsigned long long i, unsigned bits) {
  const unsigned long long z = ((i << 32) ^ bits) * 0x9E3779B97F4A7C15ull;
  return z ^ (z >> 29);
}

// One trial's audit: the hash of C (kRecord, kHash) or its sampled entries (kSamples); the last block
// to finish closes the trial's books and resets the running sums for the next launch.
__global__ void audit_kernel(const float* __restrict__ c, std::size_t elements, int mode,
                             const long long* __restrict__ index, const double* __restrict__ ref,
                             const double* __restrict__ sumabs, std::size_t samples, double tolerance,
                             bool uniform, double max_abs_ref, State* st) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (mode == kSamples) {
    unsigned long long bad = 0;
    for (std::size_t s = first; s < samples; s += stride) {
      const double got = c[index[s]], err = fabs(got - ref[s]);
      const double scale = uniform ? max_abs_ref : sumabs[s];
      const bool ok = isfinite(got) && (scale > 0 ? err <= tolerance * scale : err == 0);
      bad += !ok;
    }
    if (bad) atomicAdd(&st->bad, bad);
  } else if (mode == kWritten) {  // entries that still hold a poison (any NaN)
    unsigned long long bad = 0;
    for (std::size_t i = first; i < elements; i += stride) bad += isnan(c[i]);
    for (int o = 16; o > 0; o /= 2) bad += __shfl_down_sync(0xffffffffu, bad, o);
    if (threadIdx.x % 32 == 0 && bad) atomicAdd(&st->bad, bad);
  } else {
    unsigned long long h = 0;
    for (std::size_t i = first; i < elements; i += stride) h += mix(i, __float_as_uint(c[i]));
    for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
    if (threadIdx.x % 32 == 0 && h) atomicAdd(&st->hash, h);
  }
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) last = atomicAdd(&st->blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();
  const unsigned long long h = atomicAdd(&st->hash, 0ull), bad = atomicAdd(&st->bad, 0ull);
  if (mode == kRecord) {
    st->expected = h;
  } else {
    ++st->trials;
    const bool differed = mode == kHash ? h != st->expected : bad > 0;
    st->differed += differed;
    if (mode == kSamples) st->entries += (long long)bad;
    if (mode == kWritten) st->unwritten += differed, st->unwritten_now = differed;
  }
  st->hash = 0, st->bad = 0, st->blocks_done = 0;
}

// A trial on inputs of its own: block b judges sampled entry b of C against the float64 dot product of
// A's row and B's column as made from `seed` (input_value, the fill's own function); the last block
// closes the trial's books (counted as a trial by the kWritten launch before it).
constexpr int kSeededThreads = 128;
__global__ void seeded_kernel(const float* __restrict__ c, long m, long n, long k, long row0, long col0, long rows,
                              long cols, Inputs inputs, unsigned long long seed, double tolerance, bool uniform,
                              double max_abs_ref, State* st) {
  const std::uint64_t h = splitmix64(seed ^ (0x5EED5A3Dull + blockIdx.x));
  const long bi = long(h % std::uint64_t(rows)), bj = long(splitmix64(h) % std::uint64_t(cols));
  const long i = row0 + bi, j = col0 + bj;  // in the whole C
  double sum = 0, abs = 0;
  for (long l = threadIdx.x; l < k; l += blockDim.x) {
    const double p = double(input_value(inputs, seed, kMatrixA, i, l, m, k)) *
                     double(input_value(inputs, seed, kMatrixB, l, j, k, n));  // exact in double
    sum += p, abs += fabs(p);
  }
  __shared__ double sums[kSeededThreads], abss[kSeededThreads];
  sums[threadIdx.x] = sum, abss[threadIdx.x] = abs;
  __syncthreads();
  for (int o = kSeededThreads / 2; o > 0; o /= 2) {
    if (threadIdx.x < o) sums[threadIdx.x] += sums[threadIdx.x + o], abss[threadIdx.x] += abss[threadIdx.x + o];
    __syncthreads();
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    const double got = c[bi * cols + bj], err = fabs(got - sums[0]);
    const double scale = uniform ? max_abs_ref : abss[0];
    const bool ok = isfinite(got) && (scale > 0 ? err <= tolerance * scale : err == 0);
    if (!ok) atomicAdd(&st->bad, 1ull);
    __threadfence();
    last = atomicAdd(&st->blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();
  const unsigned long long bad = atomicAdd(&st->bad, 0ull);
  if (bad > 0) {
    st->entries += (long long)bad, ++st->wrong;
    // One trial: counted as differing once, whether or not its C also held a poison.
    if (!st->unwritten_now) ++st->differed;
  }
  st->hash = 0, st->bad = 0, st->blocks_done = 0;
}

__global__ void gather_kernel(const double* ref, const double* sumabs, const long long* index, std::size_t count,
                              double* ref_out, double* sumabs_out) {
  for (std::size_t s = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; s < count;
       s += std::size_t(gridDim.x) * blockDim.x)
    ref_out[s] = ref[index[s]], sumabs_out[s] = sumabs[index[s]];
}
// max |ref| by atomicMax on the bits (non-negative doubles order as their bits do).
__global__ void max_abs_kernel(const double* ref, std::size_t count, unsigned long long* out) {
  unsigned long long most = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double v = fabs(ref[i]);
    if (!isnan(v)) most = max(most, (unsigned long long)__double_as_longlong(v));
  }
  for (int o = 16; o > 0; o /= 2) most = max(most, __shfl_down_sync(0xffffffffu, most, o));
  if (threadIdx.x % 32 == 0 && most) atomicMax(out, most);
}

std::vector<long long> sample_indices(std::size_t elements, unsigned long long seed) {
  const std::size_t count = std::min(elements, kAuditSamples);
  std::vector<long long> index(count);
  for (std::size_t s = 0; s < count; ++s)
    index[s] = elements <= kAuditSamples ? (long long)s
                                         : (long long)(splitmix64(seed ^ (0xA0D17ull + s)) % elements);
  return index;
}

// `bytes` from pageable host memory to the device, landed before it returns. (cudaMemcpy from pageable
// memory returns once the data is staged, and its DMA, on the default stream, is not ordered before
// kernels on the lab's non-blocking streams: a gather that read the indices before they landed read
// whatever the allocation held, and once, beside other processes on the GPU, an address outside it.)
void to_device(void* dst, const void* src, std::size_t bytes) {
  MMLAB_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, nullptr));
  MMLAB_CHECK(cudaStreamSynchronize(nullptr));
}

AuditSamples with_index(const std::vector<long long>& index) {
  AuditSamples a;
  a.count = index.size();
  a.index = Buffer(sizeof(long long) * std::max<std::size_t>(a.count, 1), Buffer::Kind::device);
  a.ref = Buffer(sizeof(double) * std::max<std::size_t>(a.count, 1), Buffer::Kind::device);
  a.sumabs = Buffer(sizeof(double) * std::max<std::size_t>(a.count, 1), Buffer::Kind::device);
  to_device(a.index.get(), index.data(), sizeof(long long) * a.count);
  return a;
}

}  // namespace

AuditSamples audit_samples_device(const double* ref, const double* sumabs, std::size_t elements,
                                  unsigned long long seed, CUstream_st* stream) {
  AuditSamples a = with_index(sample_indices(elements, seed));
  gather_kernel<<<64, kThreads, 0, stream>>>(ref, sumabs, a.index.as<long long>(), a.count, a.ref.as<double>(),
                                              a.sumabs.as<double>());
  MMLAB_CHECK_LAUNCH();
  Buffer most(sizeof(unsigned long long), Buffer::Kind::device);
  MMLAB_CHECK(cudaMemsetAsync(most.get(), 0, sizeof(unsigned long long), stream));
  max_abs_kernel<<<kBlocks, kThreads, 0, stream>>>(ref, elements, most.as<unsigned long long>());
  MMLAB_CHECK_LAUNCH();
  MMLAB_CHECK(cudaStreamSynchronize(stream));
  unsigned long long bits = 0;
  copy_to_host(&bits, most.get(), sizeof bits);
  std::memcpy(&a.max_abs_ref, &bits, sizeof bits);
  return a;
}

AuditSamples audit_samples_host(const double* ref, const double* sumabs, std::size_t elements,
                                unsigned long long seed) {
  const std::vector<long long> index = sample_indices(elements, seed);
  AuditSamples a = with_index(index);
  std::vector<double> r(index.size()), s(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) r[i] = ref[index[i]], s[i] = sumabs[index[i]];
  to_device(a.ref.get(), r.data(), sizeof(double) * r.size());
  to_device(a.sumabs.get(), s.data(), sizeof(double) * s.size());
  for (std::size_t i = 0; i < elements; ++i)
    if (!std::isnan(ref[i])) a.max_abs_ref = std::max(a.max_abs_ref, std::fabs(ref[i]));
  return a;
}

AuditSamples audit_samples_of(const EntrySamples& e, double max_abs_ref) {
  AuditSamples a = with_index(e.index);
  to_device(a.ref.get(), e.ref.data(), sizeof(double) * e.ref.size());
  to_device(a.sumabs.get(), e.sumabs.data(), sizeof(double) * e.sumabs.size());
  a.max_abs_ref = max_abs_ref;
  return a;
}

OutputAudit::OutputAudit(const float* verified_c, std::size_t elements, bool deterministic,
                         const AuditSamples& samples, double tolerance, bool uniform, CUstream_st* stream)
    : elements_(elements),
      deterministic_(deterministic),
      uniform_(uniform),
      samples_(samples),
      tolerance_(tolerance),
      state_(sizeof(State), Buffer::Kind::device) {
  MMLAB_CHECK(cudaMemsetAsync(state_.get(), 0, sizeof(State), stream));
  if (deterministic_) launch(verified_c, kRecord, stream);
}

OutputAudit::~OutputAudit() = default;

void OutputAudit::launch(const float* c, int mode, CUstream_st* stream) {
  const std::size_t work = mode == kSamples ? samples_.count : elements_;
  const unsigned blocks = unsigned(std::clamp<std::size_t>((work + kThreads - 1) / kThreads, 1, kBlocks));
  audit_kernel<<<blocks, kThreads, 0, stream>>>(c, elements_, mode, samples_.index.as<long long>(),
                                                samples_.ref.as<double>(), samples_.sumabs.as<double>(),
                                                samples_.count, tolerance_, uniform_, samples_.max_abs_ref,
                                                state_.as<State>());
  MMLAB_CHECK_LAUNCH();
}

void OutputAudit::after_trial(const float* c, CUstream_st* stream) {
  launch(c, deterministic_ ? kHash : kSamples, stream);
}

void OutputAudit::after_fresh_trial(const float* c, CUstream_st* stream, long m, long n, long k, const Inputs& inputs,
                                    unsigned long long seed, long row0, long col0, long rows, long cols) {
  launch(c, kWritten, stream);
  if (rows < 0) rows = m, cols = n;
  if (rows <= 0 || cols <= 0) return;
  seeded_kernel<<<kSeededSamples, kSeededThreads, 0, stream>>>(c, m, n, k, row0, col0, rows, cols, inputs, seed,
                                                               tolerance_, uniform_, samples_.max_abs_ref,
                                                               state_.as<State>());
  MMLAB_CHECK_LAUNCH();
}

OutputAudit::Result OutputAudit::result(CUstream_st* stream) {
  MMLAB_CHECK(cudaStreamSynchronize(stream));
  State st;
  copy_to_host(&st, state_.get(), sizeof st);
  return {st.trials, st.differed, st.entries, st.unwritten, st.wrong};
}

std::string OutputAudit::describe(const Result& r, bool deterministic) {
  if (r.differed == 0) return {};
  // Each trial's audit is enqueued right behind its stop event, before the stream is let go: work
  // that reaches the stream later (a thread's, after the call returned) finds it already judged.
  const std::string when = " (judged on the GPU right after each trial's stop event, work enqueued after it unseen)";
  const long long judged = r.differed - r.unwritten - r.wrong;
  std::string out;
  if (judged > 0 && deterministic)
    out = "the C of " + std::to_string(judged) + " of " + std::to_string(r.trials) +
          " timed trials differs from the verified C (a deterministic configuration: hashed bit for bit)";
  else if (judged > 0)
    out = std::to_string(r.entries) + " sampled entries of C failed the tolerance in " + std::to_string(judged) +
          " of " + std::to_string(r.trials) + " timed trials (checked against float64 after each trial)";
  if (r.wrong > 0)
    out += (out.empty() ? "" : "; ") + std::string("the C of ") + std::to_string(r.wrong) + " of " +
           std::to_string(r.trials) + " timed trials is not the product of that trial's inputs (each trial's A and B "
           "made again from a seed of its own, outside the clock; " + std::to_string(r.entries) + " of " +
           std::to_string(r.wrong * kSeededSamples) + " sampled entries failed against float64): a C kept from "
           "an earlier call, or work skipped";
  if (r.unwritten > 0)
    out += (out.empty() ? "" : "; ") + std::string("the C of ") + std::to_string(r.unwritten) +
           " trial(s) on inputs of their own still held the poison in places";
  return out + when;
}

}  // namespace mmlab
