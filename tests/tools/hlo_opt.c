/* hlo_opt — runs a pass pipeline over a module and prints the result (the
 * tests' mlir-opt; the `hlo` tool gets the same through --passes).
 *
 * usage: hlo_opt FILE [--passes P] [--dump-to DIR] [--no-verify]
 *                     [--split-input-file] [--stats] [--fold-limit N]
 *   --passes P          the pipeline (default: PASS_PIPELINE_DEFAULT)
 *   --dump-to DIR       NNNN.PASS.before.mlir / .after.mlir per pass
 *   --no-verify         do not verify the input and after each pass
 *   --split-input-file  run each `// -----` piece on its own; the outputs
 *                       are separated by `// -----` lines
 *   --stats             per-pass times and op counts on stderr
 *   --fold-limit N      constant-fold's result size limit (elements)
 * Prints the module(s) on stdout; an error on stderr (exit 1); usage
 * errors exit 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "parse/parse.h"
#include "passes/pass_manager.h"
#include "runtime/runtime.h"

static int usage(void) {
  fprintf(stderr,
          "usage: hlo_opt FILE [--passes P] [--dump-to DIR] [--no-verify] "
          "[--split-input-file] [--stats] [--fold-limit N]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *file = NULL;
  pass_pipeline_options po = {0};
  po.verify_each = true;
  bool split = false, stats = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--passes") && i + 1 < argc) po.pipeline = argv[++i];
    else if (!strcmp(a, "--dump-to") && i + 1 < argc) po.dump_dir = argv[++i];
    else if (!strcmp(a, "--fold-limit") && i + 1 < argc) po.pass.fold_max_elements = atoll(argv[++i]);
    else if (!strcmp(a, "--no-verify")) po.verify_each = false;
    else if (!strcmp(a, "--split-input-file")) split = true;
    else if (!strcmp(a, "--stats")) stats = true;
    else if (a[0] == '-' && a[1]) return usage();
    else if (!file) file = a;
    else return usage();
  }
  if (!file) return usage();
  char *text = NULL;
  size_t len = 0;
  hlo_status st = runtime_read_file(file, &text, &len);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return 1;
  }
  hlo_source src = {file, text, len, 1};
  split_piece whole = {0, len, 1}, *pieces = &whole;
  size_t np = 1;
  if (split && (st = parse_split(text, len, &pieces, &np))) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    free(text);
    return 1;
  }
  int rc = 0;
  for (size_t k = 0; k < np && !rc; k++) {
    hlo_module_ir *m = NULL;
    st = parse_module(&src, pieces[k].begin, pieces[k].end, &m);
    pass_report rep = {0};
    if (!st) st = pass_pipeline_run(m, &po, &rep);
    if (stats) pass_report_print(&rep, stderr);
    /* numbering of later dumps continues where this piece stopped */
    if (rep.n) po.first_dump_index = rep.next_dump_index;
    pass_report_free(&rep);
    if (!st) {
      char *out = module_print(m);
      if (k) printf("// -----\n");
      if (out) fputs(out, stdout);
      else rc = 1;
      free(out);
    }
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      rc = 1;
    }
    module_free(m);
  }
  if (pieces != &whole) free(pieces);
  free(text);
  return rc;
}
