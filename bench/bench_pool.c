/* bench_pool.c — the thread pool's hand-off cost and the size where threads
 * start to pay (bench/THREADS.md). For a pool of HLO_NUM_THREADS (default:
 * online cores) threads: the median time of an empty parallel_for (n = 2T
 * chunks that do nothing), then for sizes 1K..4M floats an out = a * b + c
 * loop inline vs over the pool; prints one table.
 *   make BUILD=build/pool build/pool/bench/bench_pool && build/pool/bench/bench_pool */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "support/thread_pool.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + 1e-3 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void nothing(void *ctx, int64_t b, int64_t e) { (void)ctx, (void)b, (void)e; }

typedef struct fma_job {
  const float *a, *b, *c;
  float *out;
} fma_job;
static void fma_fn(void *ctx, int64_t b, int64_t e) {
  fma_job *j = ctx;
  for (int64_t i = b; i < e; i++) j->out[i] = j->a[i] * j->b[i] + j->c[i];
}

#define REPS 301
static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_d);
  return t[n / 2];
}

int main(void) {
  thread_pool *p = thread_pool_global();
  int T = thread_pool_num_threads(p);
  static double t[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now_us();
    thread_pool_parallel_for(p, 2 * T, 0, nothing, NULL);
    t[r] = now_us() - t0;
  }
  double med = median(t, REPS);
  printf("threads %d: empty parallel_for median %.2f us (min %.2f)\n", T, med, t[0]);
  enum { MAXN = 1 << 22 };
  float *a = malloc(MAXN * sizeof *a), *b = malloc(MAXN * sizeof *b), *c = malloc(MAXN * sizeof *c),
        *o = malloc(MAXN * sizeof *o);
  if (!a || !b || !c || !o) return 1;
  for (int i = 0; i < MAXN; i++) a[i] = (float)i, b[i] = 0.5f, c[i] = 1.0f, o[i] = 0;
  fma_job j = {a, b, c, o};
  printf("%10s %12s %12s %8s\n", "elements", "inline_us", "pool_us", "speedup");
  for (int64_t n = 1024; n <= MAXN; n *= 2) {
    int reps = n >= (1 << 20) ? 41 : REPS;
    double ti[REPS], tp[REPS];
    for (int r = 0; r < reps; r++) {
      double t0 = now_us();
      fma_fn(&j, 0, n);
      ti[r] = now_us() - t0;
      t0 = now_us();
      thread_pool_parallel_for(p, n, 0, fma_fn, &j);
      tp[r] = now_us() - t0;
    }
    double mi = median(ti, reps), mp = median(tp, reps);
    printf("%10lld %12.2f %12.2f %8.2f\n", (long long)n, mi, mp, mi / mp);
  }
  free(a), free(b), free(c), free(o);
  return 0;
}
