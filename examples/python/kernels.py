"""Three Python kernels as lab algorithms: a Triton matmul of our own, the lecture's shared-memory
tiled algorithm as a CuPy RawKernel, and torch.matmul with TF32 off (pure FP32, as cuBLAS SGEMM is
timed). Importing this module registers them (`import kernels`, then mmlab.run(algorithms=[...])).

Each is `fn(a, b, c, *, params, stream)`: a (m x k), b (k x n), c (m x n) are the lab's row-major
float32 device buffers, taken without a copy (torch.as_tensor / cupy.asarray through
__cuda_array_interface__); the lab's stream is torch's and CuPy's current stream during the call, so
their launches (and Triton's, which take torch's) land on it and are timed behind its blocking kernel.
"""
import time

import mmlab

try:
    import torch
except ImportError:  # the lab still imports; these algorithms then fail with the reason
    torch = None
try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None
try:
    import cupy
except ImportError:
    cupy = None


def _need(module, name):
    if module is None:
        raise RuntimeError(f"{name} is not installed")


# Every kernel has a `sleep` variant: the same launch after a 1 ms time.sleep in the function. Its GPU
# time must not move (the trial is timed behind the blocking kernel) while its host_ms grows by 1 ms.
VARIANTS = {"default": "the kernel", "sleep": "the kernel, after time.sleep(0.001) in the function"}


def _prologue(params):
    if params["variant"] == "sleep":
        time.sleep(0.001)


if triton is not None:
    @triton.jit
    def _triton_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        # One BM x BN tile of C per program; K in BK steps; FP32 products (input_precision "ieee": no TF32).
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            ka = k0 + rk
            x = tl.load(a + rm[:, None].to(tl.int64) * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K),
                        other=0.0)
            y = tl.load(b + ka[:, None].to(tl.int64) * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N),
                        other=0.0)
            acc = tl.dot(x, y, acc, input_precision="ieee")
        tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@mmlab.algorithm("triton_matmul", backend="gpu", variants=VARIANTS,
                 axes={"tile": [(64, 64), (128, 64), (128, 128)], "bk": [32, 16]})
def triton_matmul(a, b, c, *, params, stream):
    """Triton: a tile of C per program, FP32 tl.dot (input_precision ieee), masked edges."""
    _need(triton, "triton")
    _prologue(params)
    A, B, C = torch.as_tensor(a), torch.as_tensor(b), torch.as_tensor(c)
    (m, k), n = A.shape, B.shape[1]
    (bm, bn), bk = params["tile"], params["bk"]
    _triton_matmul[(triton.cdiv(m, bm), triton.cdiv(n, bn))](A, B, C, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=4,
                                                               num_stages=3)


_TILED = r"""
// The lecture's shared-memory tiling: a TILE x TILE block computes a TILE x TILE tile of C, staging
// TILE x TILE tiles of A and B through shared memory, one k step of TILE at a time.
extern "C" __global__ void tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? A[(long)row * K + k0 + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = col < N && k0 + threadIdx.y < K ? B[(long)(k0 + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) sum += As[threadIdx.y][i] * Bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[(long)row * N + col] = sum;
}
"""
_compiled = {}


@mmlab.algorithm("cupy_tiled", backend="gpu", variants=VARIANTS, axes={"tile": [16, 32]})
def cupy_tiled(a, b, c, *, params, stream):
    """CuPy RawKernel: the lecture's shared-memory tiled algorithm, TILE x TILE threads per block."""
    _need(cupy, "cupy")
    _prologue(params)
    t = params["tile"]
    if t not in _compiled:
        _compiled[t] = cupy.RawKernel(_TILED, "tiled", options=(f"-DTILE={t}",))
    A, B, C = cupy.asarray(a), cupy.asarray(b), cupy.asarray(c)
    (m, k), n = A.shape, B.shape[1]
    _compiled[t](((n + t - 1) // t, (m + t - 1) // t), (t, t), (A, B, C, cupy.int32(m), cupy.int32(n), cupy.int32(k)))


def _fp32_only():
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False


@mmlab.algorithm("torch_matmul", backend="gpu", variants=VARIANTS)
def torch_matmul(a, b, c, *, params, stream):
    """torch.matmul(A, B, out=C) with TF32 off: PyTorch's own FP32 GEMM (cuBLAS underneath)."""
    _need(torch, "torch")
    _prologue(params)
    _fp32_only()
    torch.matmul(torch.as_tensor(a), torch.as_tensor(b), out=torch.as_tensor(c))


@mmlab.algorithm("cupy_elsewhere", backend="gpu")
def cupy_elsewhere(a, b, c, *, params, stream):
    """A mistake on purpose: CuPy's matmul on a stream of its own, waited for inside the function. The
    lab's stream sees none of the work; at sizes where the time left implies more than the GPU's peak
    the row is a `failed` row, "not a measurement" (smaller problems: see README, From Python)."""
    _need(cupy, "cupy")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        cupy.matmul(cupy.asarray(a), cupy.asarray(b), out=cupy.asarray(c))
    s.synchronize()
