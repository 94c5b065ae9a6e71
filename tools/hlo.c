/* hlo.c — the `hlo` command-line program: main, the table of verbs and the
 * usage they share. Each verb lives in its own file under tools/builtin/
 * (print.c, check.c, run.c, bench.c: git's builtin/ shape) and is a thin
 * layer over the library (include/hlo/ and the stage headers); the helpers
 * the verbs share are in tools/cli_input.c and tools/cli_output.c. Errors
 * print as FILE:LINE:COL with the source line and exit with status 1; usage
 * errors exit with status 2.
 *
 * Adding a verb: write tools/builtin/NAME.c with `int cmd_NAME(int argc,
 * char **argv)` (it prints its own usage for --help), declare it in
 * tools/builtin/builtin.h and add a row to `verbs` below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin/builtin.h"
#include "hlo/hlo.h"

/* One verb: its name, what `hlo --help` says of it, its entry point. */
typedef struct verb {
  const char *name;
  const char *summary;
  int (*fn)(int argc, char **argv);
} verb;

static const verb verbs[] = {
    {"print", "parse a program and print it back in canonical form", cmd_print},
    {"check", "parse and verify a program against the StableHLO spec", cmd_check},
    {"run", "run a program on inputs from .npy files and write its results", cmd_run},
    {"bench", "time a program: compile once, run warm, median and minimum per run", cmd_bench},
    {"cost", "FLOPs, transcendentals and bytes accessed, counted as XLA counts them", cmd_cost},
    {"compile", "compile without running: kernels, library calls, time per stage, passes", cmd_compile},
    {"dot", "the fused graph as Graphviz DOT, each fusion a cluster", cmd_dot},
    {"memory", "bytes a compiled program needs: arguments, outputs, temporaries, peak", cmd_memory},
    {"cache", "the compilation cache: list, stats, clear, verify its entries", cmd_cache},
};
#define NUM_VERBS (sizeof verbs / sizeof verbs[0])

static void usage_main(FILE *o) {
  fputs("usage: hlo [--help] [--version] COMMAND [ARGS]\n"
        "\n"
        "hlo reads StableHLO programs as JAX prints them (jax.jit(f).lower(...).as_text())\n"
        "and runs them.\n"
        "\n"
        "commands:\n", o);
  for (size_t i = 0; i < NUM_VERBS; i++) fprintf(o, "  %-7s %s\n", verbs[i].name, verbs[i].summary);
  fputs("\n"
        "`hlo COMMAND --help` explains a command's flags. The program FILE may be `-` for\n"
        "standard input. Flags take their value as the next argument or after `=`.\n", o);
}

/* Splits `--flag=value` arguments into two, so every verb accepts both
 * spellings. Returns a malloc'd argv (yours; strings point into argv or are
 * malloc'd copies listed in *owned) or NULL on out of memory. */
static char **split_eq_flags(int argc, char **argv, int *out_argc, char ***owned) {
  char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
  char **own = calloc((size_t)argc + 1, sizeof *own);
  if (!v || !own) { free(v); free(own); return NULL; }
  int n = 0, no = 0;
  for (int i = 0; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (argv[i][0] == '-' && argv[i][1] == '-' && eq) {
      char *flag = strndup(argv[i], (size_t)(eq - argv[i]));
      if (!flag) { for (int k = 0; k < no; k++) free(own[k]); free(own); free(v); return NULL; }
      own[no++] = flag;
      v[n++] = flag;
      v[n++] = eq + 1;
    } else {
      v[n++] = argv[i];
    }
  }
  *out_argc = n;
  *owned = own;
  return v;
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) { usage_main(stderr); return 2; }
  const char *cmd = argv[1];
  if (cli_is_flag(cmd, "--help") || cli_is_flag(cmd, "-h") || cli_is_flag(cmd, "help")) {
    usage_main(stdout);
    return 0;
  }
  if (cli_is_flag(cmd, "--version")) { printf("hlo %s (build %s)\n", hlo_version(), hlo_build_id()); return 0; }
  for (size_t i = 0; i < NUM_VERBS; i++)
    if (cli_is_flag(cmd, verbs[i].name)) return verbs[i].fn(argc - 2, argv + 2);
  fprintf(stderr, "hlo: unknown command '%s'\n\n", cmd);
  usage_main(stderr);
  return 2;
}

int main(int argc0, char **argv0) {
  int argc;
  char **owned = NULL;
  char **argv = split_eq_flags(argc0, argv0, &argc, &owned);
  if (!argv) { fprintf(stderr, "hlo: out of memory\n"); return 1; }
  int rc = dispatch(argc, argv);
  for (int i = 0; owned[i]; i++) free(owned[i]);
  free(owned);
  free(argv);
  return rc;
}
