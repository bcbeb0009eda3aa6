// cuBLASMp through dlopen (cublasmp_api.hpp).
#include "distributed/cublasmp_api.hpp"

#include <dlfcn.h>
#include <nccl.h>
#include <glob.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "runtime/job.hpp"

namespace mmlab::dist::cublasmp {

namespace {

// The folder of the running program (libcublasmp.so.0 may be copied beside it).
std::string program_folder() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  std::string p(path, std::size_t(n));
  return p.substr(0, p.rfind('/'));
}

std::vector<std::string> matches(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

// NVSHMEM's host library, loaded with its symbols global (libcublasmp.so.0 links against it).
void* load_nvshmem(std::string* where) {
  setenv("NVSHMEM_DISABLE_NVLS", "1", 0);  // no NVLink multicast in this lab (as NCCL_NVLS_ENABLE=0)
  std::vector<std::string> tries = {"libnvshmem_host.so.3"};
  if (const char* dir = std::getenv("MMLAB_NVSHMEM_DIR")) tries.insert(tries.begin(), std::string(dir) + "/libnvshmem_host.so.3");
  for (const char* pattern : {"/usr/local/lib/python3*/dist-packages/nvidia/nvshmem/lib/libnvshmem_host.so.3",
                              "/usr/lib/python3*/dist-packages/nvidia/nvshmem/lib/libnvshmem_host.so.3",
                              "/usr/local/lib/python3*/site-packages/nvidia/nvshmem/lib/libnvshmem_host.so.3"})
    for (const std::string& m : matches(pattern)) tries.push_back(m);
  for (const std::string& t : tries)
    if (void* h = dlopen(t.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      *where = t;
      return h;
    }
  *where = "libnvshmem_host.so.3 not found (pip's nvidia-nvshmem-cu13 has it: set MMLAB_NVSHMEM_DIR to its lib folder)";
  return nullptr;
}

const Api* load(std::string* why) {
  static Api a;
  void* nvshmem = load_nvshmem(&a.nvshmem);
  std::vector<std::string> tries;
  if (const char* lib = std::getenv("MMLAB_CUBLASMP_LIB")) tries.push_back(lib);
  tries.push_back(program_folder() + "/libcublasmp.so.0");
#ifdef MMLAB_CUBLASMP_DEPS
  tries.push_back(MMLAB_CUBLASMP_DEPS "/nvidia/cublasmp/cu13/lib/libcublasmp.so.0");
#endif
  tries.push_back("libcublasmp.so.0");
  void* lib = nullptr;
  std::string errors;
  for (const std::string& t : tries) {
    if ((lib = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      a.library = t;
      break;
    }
    const char* e = dlerror();
    if (e && errors.find(e) == std::string::npos) errors += std::string(errors.empty() ? "" : "; ") + e;
  }
  if (!lib) {
    // Without a driver the library is there but cannot load (it needs libcuda.so.1): say that, not the fetch.
    if (errors.find("libcuda.so.1") != std::string::npos && !dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))
      *why = "no NVIDIA driver on this machine (libcuda.so.1, which cuBLASMp needs, is not here)";
    else
      *why = "cuBLASMp is not here (scripts/setup fetches it; MMLAB_CUBLASMP_LIB names the library): " + errors +
             (nvshmem ? "" : "; " + a.nvshmem);
    return nullptr;
  }
  bool complete = true;
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name));
    complete = complete && fn;
  };
  get(a.create, "cublasMpCreate");
  get(a.destroy, "cublasMpDestroy");
  get(a.stream_set, "cublasMpStreamSet");
  get(a.get_version, "cublasMpGetVersion");
  get(a.grid_create, "cublasMpGridCreate");
  get(a.grid_destroy, "cublasMpGridDestroy");
  get(a.descriptor_create, "cublasMpMatrixDescriptorCreate");
  get(a.descriptor_destroy, "cublasMpMatrixDescriptorDestroy");
  get(a.gemm_buffer_size, "cublasMpGemm_bufferSize");
  get(a.gemm, "cublasMpGemm");
  get(a.matmul_desc_create, "cublasMpMatmulDescriptorCreate");
  get(a.matmul_desc_destroy, "cublasMpMatmulDescriptorDestroy");
  get(a.matmul_desc_set, "cublasMpMatmulDescriptorAttributeSet");
  get(a.matmul_buffer_size, "cublasMpMatmul_bufferSize");
  get(a.matmul, "cublasMpMatmul");
  if (!complete) {
    *why = a.library + " lacks a call of cuBLASMp 0.7's API (another version?)";
    return nullptr;
  }
  if (a.get_version(&a.version) != kSuccess) a.version = 0;
  a.versions = "cuBLASMp " + std::to_string(a.version / 1000) + "." + std::to_string(a.version % 1000 / 100) + "." +
               std::to_string(a.version % 100);
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess)
    a.versions += ", NCCL " + std::to_string(nccl / 10000) + "." + std::to_string(nccl % 10000 / 100) + "." +
                  std::to_string(nccl % 100);
  if (nvshmem) {
    a.nvshmem_malloc = reinterpret_cast<void* (*)(std::size_t)>(dlsym(nvshmem, "nvshmem_malloc"));
    a.nvshmem_free = reinterpret_cast<void (*)(void*)>(dlsym(nvshmem, "nvshmem_free"));
    using Version = void (*)(int*, int*, int*);
    if (auto v = reinterpret_cast<Version>(dlsym(nvshmem, "nvshmemx_vendor_get_version_info"))) {
      int major = 0, minor = 0, patch = 0;
      v(&major, &minor, &patch);
      a.versions += ", NVSHMEM " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    }
  }
  return &a;
}

}  // namespace

const Api* api(std::string* why) {
  static std::string reason;
  static const Api* loaded = load(&reason);
  if (!loaded && why) *why = reason;
  return loaded;
}

int shared_handle(Stream stream, Handle* out) {
  static std::map<int, Handle> handles = [] {
    at_job_end([] {  // registered after the communicators' release, so it runs before it
      for (auto& [device, h] : handles) {
        cudaSetDevice(device);
        api()->destroy(h);
      }
      handles.clear();
    });
    return std::map<int, Handle>{};
  }();
  int device = 0;
  cudaGetDevice(&device);
  if (auto it = handles.find(device); it != handles.end()) {
    *out = it->second;
    return kSuccess;
  }
  const int status = api()->create(out, stream);
  if (status == kSuccess) handles[device] = *out;
  return status;
}

std::string status_text(int status) {
  static const char* kNames[] = {"SUCCESS",           "NOT_INITIALIZED",  "ALLOCATION_FAILED", "INVALID_VALUE",
                                 "ARCHITECTURE_MISMATCH", "EXECUTION_FAILED", "INTERNAL_ERROR",    "NOT_SUPPORTED"};
  if (status >= 0 && status < 8) return std::string("CUBLASMP_STATUS_") + kNames[status];
  return "cuBLASMp status " + std::to_string(status);
}

}  // namespace mmlab::dist::cublasmp
