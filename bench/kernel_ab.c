/* kernel_ab.c — one generated kernel from two builds of its unit, timed
 * alone on one thread, interleaved: bench/COMPILE.md's run-time A/B of
 * kernel text and compiler flags.
 *
 *   gcc -O2 -o kernel_ab bench/kernel_ab.c -ldl -lm
 *   gcc <the JIT's flags> -shared -o A.so UNIT.c -nostdlib -lgcc     (and B.so)
 *   ./kernel_ab A.so B.so KERNEL NBUFS TILES [REPS]
 *
 * UNIT.c is a unit `hlo compile FILE --dump-to DIR` wrote (DIR/kN.c); the
 * comment above each kernel gives its tiles and its inputs + outputs
 * (NBUFS, at most 16). Every buffer is 2^22 floats, uniform in [-3, 3]
 * (no NaN, no zero row maximum: a max fold's fast path); kernels whose
 * buffers are larger, or that read integers or indices, are out of its
 * reach (they may fault: run it in a child). Each repetition runs KERNEL
 * over tiles [0, TILES) of A, then of B; the minimum of each over REPS
 * repetitions (default 300, stopping after 0.4 s once 20 are done) is
 * printed with B/A. The first of the pair runs on colder caches: run
 * A B, then B A, and take both ratios. Exit status: 0, 1 when a library
 * or the kernel cannot be loaded, 2 on bad arguments. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*kernel_fn)(void *const *bufs, int64_t tile_begin, int64_t tile_end);

enum { MAX_BUFS = 16, BUF_FLOATS = 1 << 22 };

/* Microseconds of CLOCK_MONOTONIC. */
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* KERNEL from library `path` (dlopen'ed for the process's life), or NULL
 * with a message. */
static kernel_fn load(const char *path, const char *name) {
  void *h = dlopen(path, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "kernel_ab: %s\n", dlerror());
    return NULL;
  }
  void *sym = dlsym(h, name);
  if (!sym) fprintf(stderr, "kernel_ab: %s has no %s\n", path, name);
  kernel_fn f;
  *(void **)&f = sym;
  return sym ? f : NULL;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: kernel_ab A.so B.so KERNEL NBUFS TILES [REPS]\n");
    return 2;
  }
  int nbufs = atoi(argv[4]), reps = argc > 6 ? atoi(argv[6]) : 300;
  long long tiles = atoll(argv[5]);
  if (nbufs < 1 || nbufs > MAX_BUFS || tiles < 1 || reps < 1) {
    fprintf(stderr, "kernel_ab: NBUFS in [1, %d], TILES and REPS >= 1\n", MAX_BUFS);
    return 2;
  }
  /* the kernels call libm and memcpy: bind them as the JIT does */
  dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);
  kernel_fn fa = load(argv[1], argv[3]), fb = load(argv[2], argv[3]);
  if (!fa || !fb) return 1;
  void *bufs[MAX_BUFS];
  srand(1);
  for (int i = 0; i < nbufs; i++) {
    float *p = malloc((size_t)BUF_FLOATS * sizeof *p);
    if (!p) {
      fprintf(stderr, "kernel_ab: out of memory\n");
      return 1;
    }
    for (size_t j = 0; j < BUF_FLOATS; j++) p[j] = (float)(rand() / (double)RAND_MAX * 6 - 3);
    bufs[i] = p;
  }
  double best_a = 1e300, best_b = 1e300, start = now_us();
  for (int r = 0; r < reps && (r < 20 || now_us() - start < 4e5); r++) {
    double t0 = now_us();
    fa(bufs, 0, tiles);
    double t1 = now_us();
    fb(bufs, 0, tiles);
    double t2 = now_us();
    if (t1 - t0 < best_a) best_a = t1 - t0;
    if (t2 - t1 < best_b) best_b = t2 - t1;
  }
  printf("%s: A %.2f us  B %.2f us  B/A %.3f\n", argv[3], best_a, best_b, best_b / best_a);
  for (int i = 0; i < nbufs; i++) free(bufs[i]);
  return 0;
}
