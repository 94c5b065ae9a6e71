/* bench_frontend — times hlo's front end on real programs: parse, verify and
 * print of each file given, best of N runs, in milliseconds.
 *
 * usage: bench_frontend [-n RUNS] FILE...
 * Prints one line per file: "NAME BYTES OPS PARSE_MS VERIFY_MS PRINT_MS"
 * (tab-separated), for bench/frontend.sh to join with MLIR's own timings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "parse/parse.h"
#include "runtime/runtime.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static uint32_t count_ops(const hlo_block *b) {
  uint32_t n = 0;
  for (const hlo_op *op = b->first; op; op = op->next) {
    n++;
    for (uint32_t r = 0; r < op->num_regions; r++) n += count_ops(&op->regions[r].block);
  }
  return n;
}

int main(int argc, char **argv) {
  int runs = 20, i = 1;
  if (argc > 2 && !strcmp(argv[1], "-n")) { runs = atoi(argv[2]); i = 3; }
  if (i >= argc || runs < 1) {
    fprintf(stderr, "usage: bench_frontend [-n RUNS] FILE...\n");
    return 2;
  }
  for (; i < argc; i++) {
    char *text;
    size_t len;
    hlo_status st = runtime_read_file(argv[i], &text, &len);
    if (st) { hlo_status_print(st, stderr); hlo_status_free(st); return 1; }
    hlo_source src = {argv[i], text, len, 1};
    double best[3] = {1e30, 1e30, 1e30};
    uint32_t ops = 0;
    for (int r = 0; r < runs; r++) {
      hlo_module_ir *m = NULL;
      double t0 = now_ms();
      st = parse_module(&src, 0, len, &m);
      double t1 = now_ms();
      if (!st) st = module_verify(m);
      double t2 = now_ms();
      char *out = st ? NULL : module_print(m);
      double t3 = now_ms();
      if (st) { hlo_status_print(st, stderr); hlo_status_free(st); free(text); return 1; }
      ops = 0;
      for (const hlo_func *f = m->funcs; f; f = f->next) ops += count_ops(&f->body.block);
      free(out);
      module_free(m);
      if (t1 - t0 < best[0]) best[0] = t1 - t0;
      if (t2 - t1 < best[1]) best[1] = t2 - t1;
      if (t3 - t2 < best[2]) best[2] = t3 - t2;
    }
    const char *base = strrchr(argv[i], '/');
    printf("%s\t%zu\t%u\t%.3f\t%.3f\t%.3f\n", base ? base + 1 : argv[i], len, ops, best[0], best[1],
           best[2]);
    free(text);
  }
  return 0;
}
