/* mmlab's C API: the lab in a process of your own (libmmlab_lab.so). The Python package (python/)
 * loads it with ctypes; any language with a C FFI can.
 *
 *   const char* argv[] = {"mmlab", "run", "--algorithms", "eigen", "--size", "64", "--output", "r.csv"};
 *   char message[1024];
 *   int status = mmlab_command(8, argv, NULL, message, sizeof message);
 *
 * The commands are mmlab's and mmlab-analyze's, with their options, messages and exit statuses:
 * no second harness and no second statistics. Algorithms described in memory with the plugin ABI
 * (mmlab/plugin.h) join every later command as if a plugin file had described them.
 *
 * Threads: every function may be called from any thread; the commands (and mmlab_add_algorithms)
 * run one at a time in the process, a second caller waiting until the first's command ends. One
 * called from inside a running command on the same thread (an algorithm's body calling the lab)
 * returns 2 with a message rather than wait for itself.
 *
 * Rules of the boundary: plain C types only; nothing is thrown across it. Functions return the
 * command's exit status (0 done) and, on an error, its message in `message` (NUL-terminated, at most
 * `message_size` bytes; "" when there was none).
 */
#ifndef MMLAB_LAB_H
#define MMLAB_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "mmlab/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The API this header describes; a caller built against another refuses the library. */
#define MMLAB_LAB_API_VERSION 1
int32_t mmlab_lab_api_version(void);

/* `mmlab argv[1] ...` (list, run, terms, --version): argv[0] is the program's name. Its standard
 * output goes to the file `stdout_path` (replaced) where that is not NULL; progress and messages to
 * standard error. A `run` stopped by Ctrl-C returns with its rows whole; mmlab_interrupted() says so. */
int32_t mmlab_command(int32_t argc, const char* const* argv, const char* stdout_path, char* message,
                      size_t message_size);
int32_t mmlab_interrupted(void);

/* `mmlab-analyze argv[1] ...`, the same way. */
int32_t mmlab_analyze(int32_t argc, const char* const* argv, const char* stdout_path, char* message,
                      size_t message_size);

/* Adds the algorithms `info` describes to every later command; they name `source` (e.g.
 * "python:module.function") where a plugin's rows name its file, and `hash` for its hash. An
 * algorithm named like one added before replaces it. `info` and everything it points to must stay
 * valid while the process runs commands. Returns 0, or 2 with the message (nothing added). */
int32_t mmlab_add_algorithms(const mmlab_plugin_info* info, const char* source, const char* hash,
                             char* message, size_t message_size);

/* The CSV schema as JSON: {"version": "7", "results": [{"name", "type", "unit"}...], "samples": [...]};
 * type is one of text, choice, whole, number. Valid while the library is loaded. */
const char* mmlab_schema_json(void);

/* The layouts of mmlab/plugin.h's structs as this library was compiled with them, as JSON:
 * {"mmlab_problem": {"size": 24, "fields": {"m": 0, "n": 8, "k": 16}}, ...}: for a binding's test of
 * its own declarations (the Python package's ctypes ones). Valid while the library is loaded. */
const char* mmlab_layouts_json(void);

#ifdef __cplusplus
}
#endif

#endif /* MMLAB_LAB_H */
