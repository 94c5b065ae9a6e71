/* driver.c — the test driver of tests/suite_aot.sh: runs a library that
 * `hlo compile --emit=lib` made, with no hlo code at all. Built with
 *   cc -std=c11 -DLIB=NAME -DLIB_H='"DIR/NAME.h"' driver.c DIR/libNAME.a -lm ...
 * usage: driver IN_DIR OUT_DIR [RUNS [THREADS [donate]]]
 * reads IN_DIR/argK.npy for each argument K (the library's signature: its
 * element types and shapes; a float32 .npy is converted for a bf16 argument,
 * as ../shared/models stores bf16), runs NAME_run RUNS times (default 1;
 * the first on one thread, the others on THREADS, default 1; each run's
 * results must equal the first's, bit for bit: deterministic),
 * writes OUT_DIR/outK.npy (bf16 results as float32). With `donate` (and
 * one run), each donated argument's memory is given as the result it
 * aliases (tf.aliasing_output), as JAX does with donated buffers. Before
 * the runs, a misaligned scratch buffer must be refused. Exit 0 on success,
 * 1 with a message otherwise. A tiny .npy reader of its own: v1/v2
 * headers, little-endian, C order. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv) {
  if (argc < 3) return fail("usage: driver IN_DIR OUT_DIR [RUNS [THREADS]]", NULL);
  int runs = argc > 3 ? atoi(argv[3]) : 1, threads = argc > 4 ? atoi(argv[4]) : 1;
  int donate = argc > 5 && !strcmp(argv[5], "donate");
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
    if (read_npy(path, descr, fes, count, file)) return 1;
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
  for (int r = 0; r < runs; r++) {
    if (sb) memset(scratch, r & 1 ? 0xff : 0x5a, sb); /* old scratch must not matter */
    int rc = SYM(_run)((const void *const *)args, res, scratch, r ? threads : 1);
    if (rc) return fail(SYM(_strerror)(rc), NULL);
    for (int i = 0; i < nr; i++) {
      size_t bytes = (size_t)SYM(_results)[i].bytes;
      if (r == 0) memcpy(first[i], res[i], bytes);
      else if (memcmp(first[i], res[i], bytes)) return fail("a second run differs from the first", NULL);
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
