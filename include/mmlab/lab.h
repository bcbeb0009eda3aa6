/* mmlab's C API: the lab in a process of your own (libmmlab_lab.so). The Python package (python/)
 * loads it with ctypes; any language with a C FFI can.
 *
 * Handles (version 2): a lab (its algorithms: the built-in ones and the plugins and in-memory
 * algorithms added to it), a plan (one sweep: an experiment file and keywords, the options of
 * `mmlab run --help` without their dashes), and a run that hands each row to a sink as it finishes,
 * typed by the schema (mmlab_schema_json), with no file written unless the plan's `output` asks:
 *
 *   mmlab_lab* lab = mmlab_lab_new(message, sizeof message);
 *   mmlab_plan* plan = mmlab_plan_new(lab, NULL, message, sizeof message);
 *   mmlab_plan_set(plan, "algorithms", "eigen", message, sizeof message);
 *   mmlab_plan_set(plan, "size", "64,128", message, sizeof message);
 *   mmlab_row_sink sink = {my_state, my_row};           (my_row(my_state, table, values, count))
 *   int32_t status = mmlab_run(lab, plan, &sink, message, sizeof message);
 *   mmlab_plan_free(plan), mmlab_lab_free(lab);
 *
 * The commands (mmlab_command, mmlab_analyze) are mmlab's and mmlab-analyze's, with their options,
 * messages and exit statuses, over the process's lab (mmlab_lab_default): no second harness and no
 * second statistics.
 *
 * Threads: every function may be called from any thread; a lab may be shared between threads. Runs
 * and commands take turns in the process (they share the GPU, the signal handlers and standard
 * output), a second caller waiting until the first's ends. One called from inside a running one on
 * the same thread (an algorithm's body calling the lab) returns 2 with a message rather than wait for
 * itself.
 *
 * Rules of the boundary: plain C types only; nothing is thrown across it. Functions return an exit
 * status (0 done, 1 a failed row or a fatal error, 2 bad input, 3 an output not written, 130
 * interrupted) and, on an error, its message in `message` (NUL-terminated, at most `message_size`
 * bytes; "" when there was none); `message` may be NULL.
 */
#ifndef MMLAB_LAB_H
#define MMLAB_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "mmlab/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit statuses, the commands' (mmlab, mmlab-analyze) and every call's here, written once. */
enum {
  MMLAB_DONE = 0,
  MMLAB_FAILED = 1,      /* a failed row, or a fatal error */
  MMLAB_BAD_INPUT = 2,   /* bad input: nothing run */
  MMLAB_NOT_WRITTEN = 3, /* an output could not be written (the rows written before stay whole) */
  MMLAB_INTERRUPTED = 130
};

/* The API this header describes; a caller built against another refuses the library. */
#define MMLAB_LAB_API_VERSION 6
int32_t mmlab_lab_api_version(void);

/* The git revision the library was built from (as `mmlab --version` says it). */
const char* mmlab_version(void);

/* A lab: the built-in algorithms; NULL (and the message) where it cannot be made. Free it with
 * mmlab_lab_free once no plan of it is used: what its algorithms kept across its runs (the flagship's
 * measured picks, the GPU state of the candidates it timed) goes with it; another lab keeps its own. */
typedef struct mmlab_lab mmlab_lab;
mmlab_lab* mmlab_lab_new(char* message, size_t message_size);
void mmlab_lab_free(mmlab_lab* lab);
/* The process's lab, the one the commands and mmlab_add_algorithms use; never freed. */
mmlab_lab* mmlab_lab_default(void);

/* The lab's catalog: its algorithms, their variants and axes, as `mmlab list --format json` writes them
 * (one JSON array), handed to `put` whole, once. */
typedef void (*mmlab_text_put)(void* context, const char* text);
int32_t mmlab_catalog(mmlab_lab* lab, mmlab_text_put put, void* context, char* message, size_t message_size);

/* A configuration's text as a row's `params` or `resolved` column holds it ("tile=64x64;split=4"; a
 * flagship's "kernel=tf32x3:half3:stages=3;split=4;choice=measured") read by the axes of `lab`'s
 * `algorithm` (a value that is itself a configuration read whole): one JSON object {axis: value}, in
 * the text's order, handed to `put` once. 2 and the message for an algorithm the lab lacks. */
int32_t mmlab_read_params(mmlab_lab* lab, const char* algorithm, const char* text, mmlab_text_put put, void* context,
                          char* message, size_t message_size);

/* A plan of `lab`'s: the experiment file `experiment` (NULL for none; read now) and then keywords. */
typedef struct mmlab_plan mmlab_plan;
mmlab_plan* mmlab_plan_new(mmlab_lab* lab, const char* experiment, char* message, size_t message_size);
/* A keyword: an option of `mmlab run --help` without its dashes ('-' and '_' alike: "l2_flush"), or
 * ALGORITHM.AXIS, and its value as the command line writes it ("256:1024:256", "2x2"); a flag takes
 * "true" or "false"; `plugin` loads the plugins it lists into the plan's lab. Read now, by the key's own
 * parser: 2 and the message when unknown or malformed (the plan unchanged). What joins keys (a variant
 * of the algorithms chosen, m, n and k together, resume without an output) is checked by mmlab_run,
 * which makes the sweep once. Set again, a key's value replaces the last. */
int32_t mmlab_plan_set(mmlab_plan* plan, const char* key, const char* value, char* message, size_t message_size);
void mmlab_plan_free(mmlab_plan* plan);

/* A cell of a row: empty (a column with no value in this row), text, or a number. */
enum { MMLAB_EMPTY = 0, MMLAB_TEXT = 1, MMLAB_NUMBER = 2 };
typedef struct mmlab_value {
  int32_t kind;
  const char* text;  /* MMLAB_TEXT: the value; else NULL */
  double number;     /* MMLAB_NUMBER: the value */
} mmlab_value;

/* The tables a sink is handed rows of: the results (mmlab_schema_json's "results" columns, in that
 * order) and the samples (its "samples"). */
enum { MMLAB_RESULTS = 0, MMLAB_SAMPLES = 1 };
/* Called with each row as it is made (a configuration's samples before its row): `values` has
 * `count` cells, valid during the call only. */
typedef void (*mmlab_row_fn)(void* user, int32_t table, const mmlab_value* values, int32_t count);
typedef struct mmlab_row_sink {
  void* user;
  mmlab_row_fn row;
} mmlab_row_sink;

/* Runs `plan` on `lab` as `mmlab run` does (its checks, progress on standard error, Ctrl-C ending it
 * after the configuration it is in, mmlab_interrupted() then 1), each row and its samples to `sink`
 * (NULL: to the files only) and to the plan's output files where `output` was set. The exit status:
 * 0, 1 when a configuration failed (its row says why), 2 bad input, 3 an output not written, 130
 * interrupted. */
int32_t mmlab_run(mmlab_lab* lab, const mmlab_plan* plan, const mmlab_row_sink* sink, char* message,
                  size_t message_size);

/* mmlab_run, with the run's rows and samples also kept in memory as the text its files would hold,
 * under a name written to `name` (at most name_size bytes with its NUL; "<mmlab run N>.csv"). The name
 * stands for a results file wherever the lab reads one (mmlab_read, mmlab_analyze_tables, its samples
 * beside it): no file is written. Kept until mmlab_kept_free(name). */
int32_t mmlab_run_kept(mmlab_lab* lab, const mmlab_plan* plan, const mmlab_row_sink* sink, char* name,
                       size_t name_size, char* message, size_t message_size);
void mmlab_kept_free(const char* name);

/* A results file of the lab's (any schema version: upgraded to this one, as mmlab-analyze reads it)
 * to `sink`: its rows, then the samples of its samples file (<name>.samples.csv) where there is one.
 * 2 and the message on a file that is not one (a torn row, a foreign table). */
int32_t mmlab_read(mmlab_lab* lab, const char* path, const mmlab_row_sink* sink, char* message,
                   size_t message_size);

/* `mmlab argv[1] ...` (list, run, terms, --version) over the process's lab: argv[0] is the program's
 * name. Its standard output goes to the file `stdout_path` (replaced) where that is not NULL; progress
 * and messages to standard error. A `run` stopped by Ctrl-C returns with its rows whole;
 * mmlab_interrupted() says so. */
int32_t mmlab_command(int32_t argc, const char* const* argv, const char* stdout_path, char* message,
                      size_t message_size);
int32_t mmlab_interrupted(void);

/* `mmlab-analyze argv[1] ...`, the same way. */
int32_t mmlab_analyze(int32_t argc, const char* const* argv, const char* stdout_path, char* message,
                      size_t message_size);

/* The analysis' results as typed tables: `mmlab-analyze argv[1] ... --format json`, each table it
 * makes handed to `sink` instead of written: `table` with its number (0, 1, ...), title, note and
 * columns (their names and types: whole, number, choice, text or flag, "" where the table declares
 * none), then `row` with that number for each of its records (a flag as the number 1 or 0). Nothing is
 * written to standard output; the status and message as mmlab_analyze's. */
typedef void (*mmlab_table_fn)(void* user, int32_t table, const char* title, const char* note,
                               const char* const* names, const char* const* types, int32_t count);
typedef struct mmlab_table_sink {
  void* user;
  mmlab_table_fn table;
  mmlab_row_fn row;
} mmlab_table_sink;
int32_t mmlab_analyze_tables(int32_t argc, const char* const* argv, const mmlab_table_sink* sink, char* message,
                             size_t message_size);

/* `mmlab-analyze records FILE --format json` (API 6): one CSV as a typed table handed to `sink` as
 * mmlab_analyze_tables hands tables: a samples file's columns typed by the samples schema, any other
 * table's cells as text. No command line, nothing written. The status and message as mmlab_analyze's. */
int32_t mmlab_read_table(const char* path, const mmlab_table_sink* sink, char* message, size_t message_size);

/* `mmlab-analyze compare`'s options as values (API 6). mmlab_compare_defaults sets each to the command's
 * default; the text it sets stays valid while the library is loaded. NULL text reads as "". */
typedef struct mmlab_compare_options {
  const char* baseline;       /* ALG[:variant[:params]], or best:SPEC,SPEC...: required */
  const char* run;            /* latest (per configuration, its last row), all, or a run's id */
  const char* const* sizes;   /* only these problems ("4096", "1041x1247x139", "4096/wide_exponent") */
  int32_t size_count;         /* 0: every problem */
  double level;               /* the intervals' confidence, in (0, 1) */
  int32_t resamples;          /* bootstrap resamples, >= 100 */
  uint64_t seed;              /* the bootstrap's seed */
  double margin;              /* practical margin, in [0, 1): faster / slower beyond it, equivalent within */
  const char* family;         /* what Holm adjusts within: problem or table */
  const char* metric;         /* gpu, host or sum */
  int32_t cycles;             /* 1: in SM clock cycles (metric gpu only) */
  int32_t across_runs;        /* 1: every run in the files, one estimate per configuration */
  const char* baseline_scope; /* "": the baseline at each row's own scope; else kernel, batched or end_to_end */
  const char* bad_samples;    /* a row whose samples do not match it: error or leave-out */
} mmlab_compare_options;
void mmlab_compare_defaults(mmlab_compare_options* options);

/* `mmlab-analyze compare FILE... --format json` with `options`, its table handed to `sink` as
 * mmlab_analyze_tables hands tables: no command line, nothing written. A results file may be the name a
 * kept run's rows stand under (mmlab_run_kept). The status and message as mmlab_analyze's. */
int32_t mmlab_compare(const char* const* files, int32_t file_count, const mmlab_compare_options* options,
                      const mmlab_table_sink* sink, char* message, size_t message_size);

/* Adds the algorithms `info` describes to `lab`'s later runs and commands; they name `source` (e.g.
 * "python:module.function") where a plugin's rows name its file, and `hash` for its hash. An
 * algorithm named like one added before replaces it. `info` and everything it points to must stay
 * valid while the process runs commands. Returns 0, or 2 with the message (nothing added). */
int32_t mmlab_lab_add_algorithms(mmlab_lab* lab, const mmlab_plugin_info* info, const char* source,
                                 const char* hash, char* message, size_t message_size);
/* The same, to the process's lab. */
int32_t mmlab_add_algorithms(const mmlab_plugin_info* info, const char* source, const char* hash,
                             char* message, size_t message_size);

/* The CSV schema as JSON: {"version": "8", "results": [{"name", "type", "unit"}...], "samples": [...]};
 * type is one of text, choice, whole, number. Valid while the library is loaded. */
const char* mmlab_schema_json(void);

/* The layouts of mmlab/plugin.h's structs and this header's as this library was compiled with them, as JSON:
 * {"mmlab_problem": {"size": 24, "fields": {"m": 0, "n": 8, "k": 16}}, ...}: for a binding's test of
 * its own declarations (the Python package's ctypes ones). Valid while the library is loaded. */
const char* mmlab_layouts_json(void);

#ifdef __cplusplus
}
#endif

#endif /* MMLAB_LAB_H */
