/* Plugins that are wrong on purpose, one per definition (tests/CMakeLists.txt builds each): the CPU
 * tests load them and expect a clear message naming the file (tests/cpu/plugin_test.cpp). */
#include <mmlab/plugin.h>
#include <stdio.h>

static int32_t fail_supports(const mmlab_problem* p, const mmlab_params* q, char* reason, size_t size) {
  (void)p;
  if (q->variant[0] == 's') {
    snprintf(reason, size, "the supports() of this plugin fails on purpose");
    return 2;
  }
  return 0;
}
static int32_t fail_run(const mmlab_problem* p, const mmlab_params* q, const float* a, const float* b, float* c,
                        void* w, void* s, char* message, size_t size) {
  (void)p, (void)q, (void)a, (void)b, (void)c, (void)w, (void)s;
  snprintf(message, size, "the run() of this plugin fails on purpose");
  return 3;
}

static const mmlab_variant kVariants[] = {{"supports_fails", ""}, {"run_fails", ""}};
#ifdef BAD_DUPLICATE
#define NAME "tiled" /* a built-in's */
#else
#define NAME "failing"
#endif
static const mmlab_algorithm kAlgorithms[] = {
    {NAME, "fails", MMLAB_BACKEND_HOST, kVariants, 2, 0, 0, fail_supports, 0, fail_run}};
#ifdef BAD_ABI
static const mmlab_plugin_info kInfo = {MMLAB_PLUGIN_ABI_VERSION + 1, "bad", kAlgorithms, 1};
#else
static const mmlab_plugin_info kInfo = {MMLAB_PLUGIN_ABI_VERSION, "bad", kAlgorithms, 1};
#endif

#ifndef BAD_NO_ENTRY
MMLAB_PLUGIN_EXPORT const mmlab_plugin_info* mmlab_plugin(void) { return &kInfo; }
#else
MMLAB_PLUGIN_EXPORT const mmlab_plugin_info* not_the_entry(void) { return &kInfo; }
#endif
