/* math_kernel_time.c — per-thread CPU time of one generated kernel in
 * isolation: dlopens each KERNEL.so given (a unit written by `hlo bench
 * --dump-to` and compiled with the kernels' flags, see
 * bench/math_kernel_time.sh), fills every buffer with normal-ish random
 * floats, and calls the function NAME over tiles [0, TILES) on one thread,
 * RUNS times per round, ROUNDS rounds alternating the objects; prints the
 * minimum per-thread CPU time (CLOCK_THREAD_CPUTIME_ID, so time descheduled
 * on a loaded machine does not count) of each object per round, in ms.
 * Buffers: NBUF of BYTES bytes each (the largest buffer of the kernel is
 * enough for all). Used for bench/MATH.md's before/after tables.
 *   math_kernel_time NAME TILES NBUF BYTES RUNS ROUNDS A.so [B.so ...] */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void kernel_fn(void *const *bufs, int64_t tile_begin, int64_t tile_end);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: %s NAME TILES NBUF BYTES RUNS ROUNDS A.so [B.so ...]\n", argv[0]);
    return 2;
  }
  const char *name = argv[1];
  int64_t tiles = atoll(argv[2]);
  int nbuf = atoi(argv[3]), runs = atoi(argv[5]), rounds = atoi(argv[6]), nk = argc - 7;
  size_t bytes = (size_t)atoll(argv[4]);
  if (nbuf < 1 || nbuf > 16 || nk > 8 || runs < 1 || rounds < 1) return 2;
  void *bufs[16];
  uint64_t s = 88172645463325252ull;
  for (int b = 0; b < nbuf; b++) {
    float *f = malloc(bytes);
    if (!f) return 1;
    for (size_t i = 0; i < bytes / 4; i++) { /* sum of 4 uniforms: roughly normal, |x| < 4 */
      double u = 0;
      for (int k = 0; k < 4; k++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        u += (double)(s >> 11) * 0x1p-53;
      }
      f[i] = (float)((u - 2) * 1.7);
    }
    bufs[b] = f;
  }
  kernel_fn *fn[8];
  for (int k = 0; k < nk; k++) {
    void *h = dlopen(argv[7 + k], RTLD_NOW | RTLD_LOCAL);
    if (!h || !(fn[k] = (kernel_fn *)(uintptr_t)dlsym(h, name))) {
      fprintf(stderr, "%s: %s\n", argv[7 + k], dlerror());
      return 1;
    }
  }
  for (int r = 0; r < rounds; r++) {
    printf("round %d:", r + 1);
    for (int k = 0; k < nk; k++) {
      double best = 1e30;
      for (int i = 0; i < runs; i++) {
        double t0 = now_ms();
        fn[k]((void *const *)bufs, 0, tiles);
        double t = now_ms() - t0;
        if (t < best) best = t;
      }
      printf("  %s %.3f ms", argv[7 + k], best);
    }
    printf("\n");
  }
  return 0;
}
