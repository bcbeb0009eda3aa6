/* mmlab plugin ABI: algorithms in a shared library, loaded at run time.
 *
 *   mmlab run --plugin ./libmine.so --algorithms my_tiled,cublas --size 1024,4096
 *
 * A plugin exports one C function, mmlab_plugin(), returning a description that stays valid while
 * the library is loaded: the ABI version it was built against and its algorithms. mmlab checks the
 * version, then turns each algorithm into an entry of its registry, so the harness (verification
 * against float64 on NaN-poisoned outputs, timing scopes, interleaved trials, clocks, CSV rows) and
 * mmlab-analyze treat it like a built-in. Rows name the plugin file and a hash of it.
 *
 * Rules of the boundary: plain C types only; nothing is thrown across it. A function that fails
 * returns nonzero and writes a message into the buffer it is given (NUL-terminated, at most
 * `message_size` bytes). Matrices are row-major float32: C (m x n) = A (m x k) B (k x n).
 *
 * Build against the installed SDK (cmake --install): find_package(mmlab) and link mmlab::plugin.
 */
#ifndef MMLAB_PLUGIN_H
#define MMLAB_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes (and the SDK's version: find_package(mmlab 2)). A plugin built against
 * ABI 1 (mmlab_param without `number`) still loads: it is handed each value's text alone; its source
 * builds against this header as it is. Any other version is refused by name and version. */
#define MMLAB_PLUGIN_ABI_VERSION 2
#define MMLAB_PLUGIN_ABI_OLDEST 1

/* Where an algorithm's run() works: on the GPU (A, B, C and the workspace are device pointers,
 * work goes on `stream`, a cudaStream_t, and run() may return before it completes) or on the host
 * (host pointers; run() returns when C is complete). */
typedef enum mmlab_backend { MMLAB_BACKEND_DEVICE = 0, MMLAB_BACKEND_HOST = 1 } mmlab_backend;

/* How an axis's values are read: a whole number ("32"), a shape ("16x16"), or one of `values`. */
typedef enum mmlab_axis_kind {
  MMLAB_AXIS_INTEGER = 0,
  MMLAB_AXIS_SHAPE = 1,
  MMLAB_AXIS_CHOICE = 2
} mmlab_axis_kind;

typedef struct mmlab_problem {
  int64_t m, n, k;
} mmlab_problem;

/* One configuration: its variant and a value for every axis, as canonical text ("32", "16x16", a
 * choice's name) and, since ABI 2, as numbers: an integer axis's value in number[0], a shape's in
 * number[0] x number[1] (a choice's both 0), so no plugin reads back a number mmlab wrote. */
typedef struct mmlab_param {
  const char* name;
  const char* value;
  int64_t number[2];
} mmlab_param;
typedef struct mmlab_params {
  const char* variant;
  const mmlab_param* values;
  int32_t count;
} mmlab_params;

typedef struct mmlab_variant {
  const char* name;
  const char* summary;
} mmlab_variant;

typedef struct mmlab_axis {
  const char* name;
  mmlab_axis_kind kind;
  const char* description;
  const char* default_value;
  const char* const* values; /* what `all` and the GPU tests sweep (choice: the valid ones) */
  int32_t value_count;
} mmlab_axis;

/* Returns 0 and leaves `reason` alone when the configuration runs on this problem; 1 with the reason
 * when it does not (a `skipped` row); another value with a message on an error (a `failed` row). */
typedef int32_t (*mmlab_supports_fn)(const mmlab_problem* problem, const mmlab_params* params, char* reason,
                                     size_t reason_size);
/* Bytes of device (or host) workspace run() receives. */
typedef size_t (*mmlab_workspace_fn)(const mmlab_problem* problem, const mmlab_params* params);
/* C = A B. Returns 0, or nonzero with a message (a `failed` row). */
typedef int32_t (*mmlab_run_fn)(const mmlab_problem* problem, const mmlab_params* params, const float* a,
                                const float* b, float* c, void* workspace, void* stream, char* message,
                                size_t message_size);

typedef struct mmlab_algorithm {
  const char* name;    /* unique in the lab: [a-z0-9_]+, not a built-in's name */
  const char* summary; /* one line */
  mmlab_backend backend;
  const mmlab_variant* variants; /* at least one */
  int32_t variant_count;
  const mmlab_axis* axes;
  int32_t axis_count;
  mmlab_supports_fn supports;         /* NULL: every problem */
  mmlab_workspace_fn workspace_bytes; /* NULL: none */
  mmlab_run_fn run;
} mmlab_algorithm;

typedef struct mmlab_plugin_info {
  int32_t abi_version; /* MMLAB_PLUGIN_ABI_VERSION */
  const char* name;    /* the plugin, for messages */
  const mmlab_algorithm* algorithms;
  int32_t algorithm_count;
} mmlab_plugin_info;

/* The entry point every plugin exports. */
#define MMLAB_PLUGIN_ENTRY "mmlab_plugin"
typedef const mmlab_plugin_info* (*mmlab_plugin_fn)(void);

#if defined(__GNUC__)
#define MMLAB_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define MMLAB_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* MMLAB_PLUGIN_H */
