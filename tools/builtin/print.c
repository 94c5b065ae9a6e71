/* print.c — `hlo print`: parse a program (each `// -----` piece with
 * --split-input-file), verify it unless --no-verify, print it back in the
 * canonical pretty syntax. */
#include <stdio.h>
#include <stdlib.h>

#include "builtin.h"
#include "ir/ir.h"
#include "runtime/runtime.h"

static const char *const usage_print =
    "usage: hlo print [--split-input-file] FILE\n"
    "\n"
    "Parses FILE and prints it in the canonical pretty syntax (the syntax JAX prints);\n"
    "the output parses back to the same program.\n"
    "\n"
    "  --split-input-file  FILE holds several modules separated by `// -----` lines;\n"
    "                      print each, separated the same way\n"
    "  --no-verify         print without running the verifier first\n";


int cmd_print(int argc, char **argv) {
  bool split = false, verify = true;
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    if (cli_is_flag(argv[i], "--help") || cli_is_flag(argv[i], "-h")) { fputs(usage_print, stdout); return 0; }
    else if (cli_is_flag(argv[i], "--split-input-file")) split = true;
    else if (cli_is_flag(argv[i], "--no-verify")) verify = false;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "hlo print: unknown flag '%s'\n%s", argv[i], usage_print);
      return 2;
    } else if (!file) file = argv[i];
    else { fprintf(stderr, "hlo print: more than one FILE\n%s", usage_print); return 2; }
  }
  if (!file) { fprintf(stderr, "hlo print: missing FILE\n%s", usage_print); return 2; }
  module_piece *mp;
  size_t n;
  hlo_status st = cli_load_pieces(file, split, verify, &mp, &n);
  if (st) return cli_report(st);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (i) fputs("// -----\n", stdout);
    if (mp[i].st) {
      hlo_status_print(mp[i].st, stderr);
      rc = 1;
      continue;
    }
    char *text = module_print(runtime_module_ir(mp[i].m));
    if (!text) {
      fprintf(stderr, "hlo print: out of memory printing the module\n");
      rc = 1;
      continue;
    }
    fputs(text, stdout);
    free(text);
  }
  cli_free_pieces(mp, n);
  return rc;
}
