/* driver.c — the test driver of tests/suite_aot.sh: runs a library that
 * `hlo compile --emit=lib` made, with no hlo code at all. Built with
 *   cc -std=c11 -DLIB=NAME -DLIB_H='"DIR/NAME.h"' driver.c DIR/libNAME.a -lm ...
 * usage: driver IN_DIR OUT_DIR [RUNS [THREADS [donate | time]]]
 * reads IN_DIR/argK.npy for each argument K (the library's signature: its
 * element types and shapes; a float32 .npy is converted for a bf16 argument,
 * as ../shared/models stores bf16), runs NAME_run RUNS times (default 1;
 * the first on one thread, the others on THREADS, default 1; the runs on
 * THREADS must give the same bits, and the same as the first run when the
 * library defines NAME_THREAD_INVARIANT 1: deterministic),
 * writes OUT_DIR/outK.npy (bf16 results as float32). With `donate` (and
 * one run), each donated argument's memory is given as the result it
 * aliases (tf.aliasing_output), as JAX does with donated buffers. Before
 * the runs, a misaligned scratch buffer must be refused; a library with a
 * constants file (NAME_CONSTANTS_BYTES > 0) is built with
 * -DLIB_BIN='"DIR/NAME.bin"': a run before loading, a missing, misaligned
 * or corrupted file must be refused, then LIB_BIN is loaded. With `time`
 * (bench/aot.sh): IN_DIR "-" means random inputs by `hlo bench`'s rule
 * (normal floats, integers in [0, 8), booleans 0/1); 2 untimed runs, then
 * RUNS timed runs on THREADS threads, and one line "median_us MIN_us"
 * printed; OUT_DIR is not written. Exit 0 on success,
 * 1 with a message otherwise. A tiny .npy reader of its own: v1/v2
 * headers, little-endian, C order. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include LIB_H

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define SYM(x) CAT(LIB, x)

static int fail(const char *what, const char *path) {
  fprintf(stderr, "driver: %s%s%s\n", what, path ? ": " : "", path ? path : "");
  return 1;
}

/* The numpy descr of a library element type (the file's view), and
 * whether it is bf16 (stored as float32). */
static const char *descr_of(const char *dt, int *bf16) {
  *bf16 = !strcmp(dt, "bf16");
  if (*bf16 || !strcmp(dt, "f32")) return "<f4";
  if (!strcmp(dt, "f64")) return "<f8";
  if (!strcmp(dt, "f16")) return "<f2";
  if (!strcmp(dt, "i1")) return "|b1";
  if (!strcmp(dt, "i8")) return "|i1";
  if (!strcmp(dt, "ui8")) return "|u1";
  if (!strcmp(dt, "i16")) return "<i2";
  if (!strcmp(dt, "ui16")) return "<u2";
  if (!strcmp(dt, "i32")) return "<i4";
  if (!strcmp(dt, "ui32")) return "<u4";
  if (!strcmp(dt, "i64")) return "<i8";
  if (!strcmp(dt, "ui64")) return "<u8";
  return NULL;
}

static uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* Reads a .npy of `count` elements of `descr` (elem bytes each) into dst. */
static int read_npy(const char *path, const char *descr, size_t esize, int64_t count, void *dst) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return fail("cannot open", path);
  unsigned char pre[10];
  if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
    fclose(fp);
    return fail("not a .npy file", path);
  }
  size_t hlen = pre[8] | (size_t)pre[9] << 8;
  if (pre[6] >= 2) {
    unsigned char more[2];
    if (fread(more, 1, 2, fp) != 2) {
      fclose(fp);
      return fail("truncated header", path);
    }
    hlen |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
  }
  char *h = calloc(1, hlen + 1);
  if (!h || fread(h, 1, hlen, fp) != hlen) {
    free(h);
    fclose(fp);
    return fail("truncated header", path);
  }
  char want[32];
  snprintf(want, sizeof want, "'%s'", descr);
  int ok = strstr(h, want) && strstr(h, "'fortran_order': False");
  /* the shape's element count */
  const char *sp = strstr(h, "'shape': (");
  int64_t n = 1;
  if (sp) {
    sp += 10;
    while (*sp && *sp != ')') {
      char *end;
      long long v = strtoll(sp, &end, 10);
      if (end == sp) break;
      n *= v;
      sp = end;
      while (*sp == ',' || *sp == ' ') sp++;
    }
  }
  free(h);
  if (!ok || !sp || n != count) {
    fclose(fp);
    return fail("unexpected dtype, order or shape", path);
  }
  size_t got = fread(dst, esize, (size_t)count, fp);
  fclose(fp);
  if (got != (size_t)count) return fail("truncated data", path);
  return 0;
}

static int write_npy(const char *path, const char *descr, const SYM(_tensor_info) *t,
                     const void *data, size_t esize, int64_t count) {
  char h[512], shape[256] = "";
  size_t k = 0;
  for (uint32_t d = 0; d < t->rank; d++)
    k += (size_t)snprintf(shape + k, sizeof shape - k, "%lld%s", (long long)t->dims[d],
                          t->rank == 1 ? "," : d + 1 < t->rank ? ", " : "");
  int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr,
                   shape);
  size_t total = 10 + (size_t)n + 1;
  size_t pad = (64 - total % 64) % 64;
  FILE *fp = fopen(path, "wb");
  if (!fp) return fail("cannot write", path);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  size_t hl = (size_t)n + pad + 1;
  pre[8] = (unsigned char)(hl & 0xff);
  pre[9] = (unsigned char)(hl >> 8);
  fwrite(pre, 1, 10, fp);
  fwrite(h, 1, (size_t)n, fp);
  for (size_t i = 0; i < pad; i++) fputc(' ', fp);
  fputc('\n', fp);
  size_t w = fwrite(data, esize, (size_t)count, fp);
  if (fclose(fp) != 0 || w != (size_t)count) return fail("cannot write", path);
  return 0;
}

/* `count` random elements of library type dt (`es` bytes each as the file
 * holds them: bf16 as f32) by hlo bench's rule: normal floats (Box-Muller
 * over a 64-bit LCG; never all zeros), integers in [0, 8), booleans 0/1. */
static void random_fill(const char *dt, void *dst, size_t es, int64_t count) {
  static uint64_t st = 0x9e3779b97f4a7c15ull;
  for (int64_t k = 0; k < count; k++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    double u1 = ((st >> 11) + 1.0) / 9007199254740993.0;
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    double u2 = (st >> 11) / 9007199254740992.0;
    double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    unsigned r = (unsigned)(st >> 40) % 8;
    char *p = (char *)dst + (size_t)k * es;
    if (dt[0] == 'f' || !strcmp(dt, "bf16")) {
      if (es == 8) memcpy(p, &z, 8);
      else if (es == 4) { float f = (float)z; memcpy(p, &f, 4); }
      else { uint16_t h = 0x3c00; memcpy(p, &h, 2); } /* f16: 1.0 */
    } else if (!strcmp(dt, "i1")) {
      *p = (char)(r & 1);
    } else {
      memset(p, 0, es);
      *p = (char)r; /* little-endian */
    }
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* 2 warm-up runs, then `runs` timed ones; prints "MEDIAN_us MIN_us". */
static int time_runs(const void *const *args, void *const *res, void *scratch, int runs, int threads) {
  double *t = malloc(sizeof *t * (size_t)runs);
  if (!t) return fail("out of memory", NULL);
  for (int r = -2; r < runs; r++) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = SYM(_run)(args, res, scratch, threads);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (rc) return fail(SYM(_strerror)(rc), NULL);
    if (r >= 0) t[r] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  printf("%.1f %.1f\n", runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2, t[0]);
  free(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) return fail("usage: driver IN_DIR OUT_DIR [RUNS [THREADS]]", NULL);
  int runs = argc > 3 ? atoi(argv[3]) : 1, threads = argc > 4 ? atoi(argv[4]) : 1;
  int donate = argc > 5 && !strcmp(argv[5], "donate");
  int timing = argc > 5 && !strcmp(argv[5], "time");
  if (runs < 1 || donate) runs = 1;
  const int na = SYM(_NUM_ARGS), nr = SYM(_NUM_RESULTS);
  void **args = calloc((size_t)na + 1, sizeof *args);
  void **res = calloc((size_t)nr + 1, sizeof *res), **first = calloc((size_t)nr + 1, sizeof *first);
  if (!args || !res || !first) return fail("out of memory", NULL);
  char path[4096];
  for (int i = 0; i < na; i++) {
    const SYM(_tensor_info) *t = &SYM(_args)[i];
    int bf16;
    const char *descr = descr_of(t->dtype, &bf16);
    if (!descr) return fail("an argument type the driver lacks", t->dtype);
    int64_t count = t->elem_bytes ? t->bytes / (int64_t)t->elem_bytes : 0;
    size_t fes = bf16 ? 4 : t->elem_bytes;
    void *file = malloc((size_t)count * fes + 1);
    args[i] = malloc((size_t)t->bytes + 1);
    if (!file || !args[i]) return fail("out of memory", NULL);
    snprintf(path, sizeof path, "%s/arg%d.npy", argv[1], i);
    if (timing && !strcmp(argv[1], "-")) random_fill(t->dtype, file, fes, count);
    else if (read_npy(path, descr, fes, count, file)) return 1;
    if (bf16) {
      for (int64_t k = 0; k < count; k++) {
        float f;
        memcpy(&f, (char *)file + k * 4, 4);
        ((uint16_t *)args[i])[k] = f32_to_bf16(f);
      }
    } else {
      memcpy(args[i], file, (size_t)t->bytes);
    }
    free(file);
  }
  int *lent = calloc((size_t)nr + 1, sizeof *lent); /* res[i] is an argument's memory */
  if (!lent) return fail("out of memory", NULL);
  for (int i = 0; donate && i < na; i++) {
    int64_t a = SYM(_args)[i].alias;
    if (a >= 0 && a < nr && !lent[a] && SYM(_results)[a].bytes == SYM(_args)[i].bytes)
      res[a] = args[i], lent[a] = 1;
  }
  for (int i = 0; i < nr; i++) {
    if (!lent[i]) res[i] = malloc((size_t)SYM(_results)[i].bytes + 1);
    first[i] = malloc((size_t)SYM(_results)[i].bytes + 1);
    if (!res[i] || !first[i]) return fail("out of memory", NULL);
  }
  size_t sb = SYM(_scratch_bytes)();
  void *scratch = NULL;
  if (sb && posix_memalign(&scratch, SYM(_SCRATCH_ALIGN), sb)) return fail("out of memory", NULL);
  /* errors are reported, not crashed on */
  if (SYM(_run)((const void *const *)args, res, (char *)scratch + (sb ? 1 : 0), 1) == 0 && sb)
    return fail("a misaligned scratch buffer was accepted", NULL);
  if (strcmp(SYM(_strerror)(SYM(_ERR_ALIGN)), SYM(_strerror)(0)) == 0)
    return fail("strerror gives one text for two codes", NULL);
#if SYM(_CONSTANTS_BYTES) > 0
  /* the constants file: refused before it is given, when missing, misaligned
   * or corrupted; then loaded from LIB_BIN */
#ifndef LIB_BIN
#error "the library keeps its constants in NAME.bin: build with -DLIB_BIN='\"DIR/NAME.bin\"'"
#endif
  {
    size_t cb = SYM(_CONSTANTS_BYTES);
    unsigned char *blob = NULL;
    if (posix_memalign((void **)&blob, 64, cb + 64)) return fail("out of memory", NULL);
    FILE *fp = fopen(LIB_BIN, "rb");
    if (!fp || fread(blob, 1, cb, fp) != cb) return fail("cannot read", LIB_BIN);
    fclose(fp);
    if (SYM(_run)((const void *const *)args, res, scratch, 1) != SYM(_ERR_CONSTANTS))
      return fail("a run before the constants were given did not fail", NULL);
    if (SYM(_load_constants)(LIB_BIN ".missing") != SYM(_ERR_CONSTANTS))
      return fail("a missing constants file was accepted", NULL);
    memmove(blob + 1, blob, cb);
    if (SYM(_set_constants)(blob + 1, cb) != SYM(_ERR_ALIGN))
      return fail("misaligned constants were accepted", NULL);
    memmove(blob, blob + 1, cb);
    blob[cb - 1] ^= 1;
    if (SYM(_set_constants)(blob, cb) != SYM(_ERR_CONSTANTS))
      return fail("a corrupted constants file was accepted", NULL);
    free(blob);
    if (SYM(_load_constants)(LIB_BIN)) return fail("cannot load the constants", LIB_BIN);
  }
#endif
  if (timing) return time_runs((const void *const *)args, res, scratch, runs, threads);
  for (int r = 0; r < runs; r++) {
    if (sb) memset(scratch, r & 1 ? 0xff : 0x5a, sb); /* old scratch must not matter */
    int rc = SYM(_run)((const void *const *)args, res, scratch, r ? threads : 1);
    if (rc) return fail(SYM(_strerror)(rc), NULL);
    /* the runs on THREADS threads must agree with each other bit for bit, and
     * with the one-thread run when the library promises it
     * (NAME_THREAD_INVARIANT: no BLAS, whose row blocks may round apart) */
    int keep = r == 0 || (r == 1 && !SYM(_THREAD_INVARIANT));
    for (int i = 0; i < nr; i++) {
      size_t bytes = (size_t)SYM(_results)[i].bytes;
      if (keep) memcpy(first[i], res[i], bytes);
      else if (memcmp(first[i], res[i], bytes))
        return fail(r == 1 ? "a run on more threads differs from the one-thread run"
                           : "a second run differs from the first",
                    NULL);
    }
  }
  for (int i = 0; i < nr; i++) {
    const SYM(_tensor_info) *t = &SYM(_results)[i];
    int bf16;
    const char *descr = descr_of(t->dtype, &bf16);
    if (!descr) return fail("a result type the driver lacks", t->dtype);
    int64_t count = t->elem_bytes ? t->bytes / (int64_t)t->elem_bytes : 0;
    void *out = res[i];
    size_t es = t->elem_bytes;
    float *conv = NULL;
    if (bf16) {
      conv = malloc((size_t)count * 4 + 1);
      if (!conv) return fail("out of memory", NULL);
      for (int64_t k = 0; k < count; k++) {
        uint32_t u = (uint32_t)((uint16_t *)res[i])[k] << 16;
        memcpy(&conv[k], &u, 4);
      }
      out = conv;
      es = 4;
    }
    snprintf(path, sizeof path, "%s/out%d.npy", argv[2], i);
    if (write_npy(path, descr, t, out, es, count)) return 1;
    free(conv);
  }
  for (int i = 0; i < na; i++) free(args[i]);
  for (int i = 0; i < nr; i++) {
    if (!lent[i]) free(res[i]);
    free(first[i]);
  }
  free(args), free(res), free(first), free(lent), free(scratch);
  return 0;
}
