/* bench_sort.c — times the CPU backend's native sort (backend/cpu/sort.c)
 * on ROWS independent rows of LEN random f32 keys with an i32 payload (the
 * argsort / top_k shape): one key (f32 TOTALORDER, ascending), or two (f32
 * descending, then the i32 ascending: top_k's comparator, packed into one
 * 64-bit key). Notes and tables: bench/SORT.md.
 *
 *   build/NAME/bench/bench_sort ROWS LEN [KEYS (1|2)] [ITERS]
 *
 * Prints the minimum over ITERS runs (default 40) of the wall time and of
 * the process's CPU time: on a machine shared with other jobs run it with
 * HLO_NUM_THREADS=1 and compare the CPU time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/cpu/sort.h"

static double ms(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ROWS LEN [KEYS (1|2)] [ITERS]\n", argv[0]);
    return 2;
  }
  int64_t rows = atoll(argv[1]), len = atoll(argv[2]);
  int nk = argc > 3 ? atoi(argv[3]) : 1, iters = argc > 4 ? atoi(argv[4]) : 40;
  if (rows < 1 || len < 1 || nk < 1 || nk > 2 || iters < 1) {
    fprintf(stderr, "bench_sort: bad arguments\n");
    return 2;
  }
  backend_sort s;
  memset(&s, 0, sizeof s);
  s.num_operands = 2;
  s.dtypes[0] = HLO_F32;
  s.dtypes[1] = HLO_I32;
  s.rank = 2;
  s.dims[0] = rows;
  s.dims[1] = len;
  s.dimension = 1;
  s.is_stable = true;
  s.nkeys = (uint32_t)nk;
  s.keys[0] = (backend_sort_key){.operand = 0, .part = -1, .dtype = HLO_F32,
                                 .cmp = BACKEND_SORT_TOTALORDER, .descending = nk == 2};
  s.keys[1] = (backend_sort_key){.operand = 1, .part = -1, .dtype = HLO_I32,
                                 .cmp = BACKEND_SORT_SIGNED};
  int64_t n = rows * len;
  float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
  int32_t *i = malloc((size_t)n * 4), *j = malloc((size_t)n * 4);
  if (!x || !y || !i || !j) {
    fprintf(stderr, "bench_sort: out of memory\n");
    return 1;
  }
  srand(1);
  for (int64_t e = 0; e < n; e++) {
    x[e] = (float)rand() / (float)RAND_MAX - 0.5f;
    i[e] = (int32_t)(e % len);
  }
  void *in[2] = {x, i}, *out[2] = {y, j};
  double best = 1e30, best_cpu = 1e30;
  for (int r = 0; r < iters; r++) {
    double t0 = ms(CLOCK_MONOTONIC), c0 = ms(CLOCK_PROCESS_CPUTIME_ID);
    hlo_status st = cpu_sort(&s, in, out);
    double t = ms(CLOCK_MONOTONIC) - t0, c = ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (st) {
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      return 1;
    }
    if (t < best) best = t;
    if (c < best_cpu) best_cpu = c;
  }
  printf("sort %lldx%lld f32 (+i32), %d key%s: min %.3f ms wall, %.3f ms cpu (%.1f ns/element)\n",
         (long long)rows, (long long)len, nk, nk == 1 ? "" : "s", best, best_cpu,
         best_cpu * 1e6 / (double)n);
  free(x);
  free(y);
  free(i);
  free(j);
  return 0;
}
