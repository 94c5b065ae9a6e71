/* memory.c — `hlo memory`: the memory a compiled program needs, from the
 * CPU backend's buffer assignment, in the terms of XLA's memory_analysis():
 * argument, output, alias and temp bytes, plus hlo's peak. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "hlo/bench.h"
#include "runtime/runtime.h"

static const char *const usage_memory =
    "usage: hlo memory FILE [--entry NAME] [--passes LIST] [--dump-to DIR] [--json]\n"
    "\n"
    "Compiles FILE's entry function for the CPU (its pass pipeline, fusion, buffer\n"
    "assignment) without running it and prints the bytes it needs, as XLA's\n"
    "memory_analysis() names them:\n"
    "  argument   the parameters\n"
    "  output     the results (each an allocation of its own, handed to the caller)\n"
    "  alias      results that reuse a donated parameter (none yet: 0)\n"
    "  temp       the arena of temporaries: kernel and library-call results, placed by\n"
    "             liveness so that values not live at once share bytes\n"
    "  constant   constants made at compile time\n"
    "  interp     the most bytes of interpreter-thunk temporaries live at once\n"
    "  peak       argument + output + temp + interp: an upper bound of a run's use\n"
    "--dump-to DIR also writes DIR/buffer_assignment.txt (each buffer, its size,\n"
    "offset and live range). A program with dynamic shapes has no fixed sizes: it\n"
    "is refused.\n"
    "\n"
    "  --entry NAME  the function (default: main)\n"
    "  --passes LIST the pass pipeline (default: the CPU backend's, `cpu`)\n"
    "  --backend cpu|cuda|cpu-devmem  the compiled backend (default: cpu)\n"
    "  --json        one JSON object with the fields above (bytes)\n";

int cmd_memory(int argc, char **argv) {
  const char *path = NULL;
  hlo_compile_options co = {.backend = HLO_BACKEND_CPU};
  const char *entry = NULL;
  bool json = false;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (cli_is_flag(a, "--help") || cli_is_flag(a, "-h")) {
      fputs(usage_memory, stdout);
      return 0;
    } else if (cli_is_flag(a, "--json")) json = true;
    else if (cli_is_flag(a, "--entry") && has_val) entry = argv[++i];
    else if (cli_is_flag(a, "--passes") && has_val) co.passes = argv[++i];
    else if (cli_is_flag(a, "--backend") && has_val) {
      if (!cli_parse_backend("memory", argv[++i], &co.backend)) return 2;
    }
    else if (cli_is_flag(a, "--dump-to") && has_val) co.dump_dir = argv[++i];
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "hlo memory: unknown flag or missing value '%s'\n%s", a, usage_memory);
      return 2;
    } else if (!path) path = a;
    else {
      fprintf(stderr, "hlo memory: more than one FILE ('%s')\n%s", a, usage_memory);
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "hlo memory: missing FILE\n%s", usage_memory);
    return 2;
  }
  hlo_compile_times ct;
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_status st = hlo_bench_compile(path, entry, &co, &ct, &m, &e);
  if (st) return cli_report(st);
  const runtime_cpu_stats *s = runtime_executable_cpu_stats(e);
  const char *fname = runtime_executable_entry(e)->name; /* @main, or the only function */
  int rc = 0;
  if (!s) {
    fprintf(stderr, "hlo memory: %s: @%s has dynamic shapes: its buffers are sized per run "
            "(no fixed assignment to report)\n", path, fname);
    rc = 1;
  } else if (json) {
    printf("{\"file\": ");
    cli_json_string(stdout, path);
    printf(", \"argument_bytes\": %lld, \"output_bytes\": %lld, \"alias_bytes\": 0, "
           "\"temp_bytes\": %lld, \"constant_bytes\": %lld, \"interp_peak_bytes\": %lld, "
           "\"peak_bytes\": %lld, \"arena_buffers\": %u}\n",
           (long long)s->arg_bytes, (long long)s->out_bytes, (long long)s->temp_bytes,
           (long long)s->const_bytes, (long long)s->heap_peak_bytes, (long long)s->peak_bytes,
           s->arena_buffers);
  } else {
    printf("%s: @%s on %s\n", path, fname, cli_backend_name(co.backend));
    printf("  argument  %12lld bytes\n", (long long)s->arg_bytes);
    printf("  output    %12lld bytes\n", (long long)s->out_bytes);
    printf("  alias     %12lld bytes\n", 0LL);
    printf("  temp      %12lld bytes  (%u buffers in one arena)\n", (long long)s->temp_bytes,
           s->arena_buffers);
    printf("  constant  %12lld bytes\n", (long long)s->const_bytes);
    printf("  interp    %12lld bytes  (interpreter-thunk temporaries live at once, at most)\n",
           (long long)s->heap_peak_bytes);
    printf("  peak      %12lld bytes\n", (long long)s->peak_bytes);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  return rc;
}
