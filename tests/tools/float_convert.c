/* float_convert — runs `stablehlo.convert` on hlo's interpreter over raw
 * element bits, for tests/float/check_convert.py.
 *
 * usage: float_convert FROM TO IN.bin OUT.bin
 *   FROM, TO: element types as MLIR spells them (f8E4M3FN, bf16, i32, ...).
 *   IN.bin holds N elements of FROM in hlo's storage layout (dtypes.def:
 *   one byte per element for types narrower than 8 bits, the bit pattern in
 *   the low bits; little endian). OUT.bin receives the N converted elements
 *   of TO, likewise. The conversion is a real one-op program
 *   (func.func @main ... stablehlo.convert) parsed, verified and run through
 *   the public C API, so the test covers the interpreter's kernel.
 * Exits 0 on success, 1 on a failed run (the status printed), 2 on bad
 * usage or unreadable files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "ir/element.h"

static void *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) { free(buf); buf = NULL; }
      else buf = nb;
    }
  }
  fclose(f);
  *n = len;
  return buf;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: float_convert FROM TO IN.bin OUT.bin\n");
    return 2;
  }
  hlo_dtype from, to;
  if (!dtype_parse(argv[1], strlen(argv[1]), &from) || !dtype_parse(argv[2], strlen(argv[2]), &to)) {
    fprintf(stderr, "float_convert: unknown element type\n");
    return 2;
  }
  size_t nbytes;
  void *in = read_all(argv[3], &nbytes);
  if (!in) { fprintf(stderr, "float_convert: cannot read %s\n", argv[3]); return 2; }
  size_t esz = hlo_dtype_size(from);
  int64_t n = (int64_t)(nbytes / esz);
  if (n == 0 || nbytes % esz) {
    fprintf(stderr, "float_convert: %s: size %zu is not a positive multiple of %zu\n", argv[3], nbytes, esz);
    free(in);
    return 2;
  }
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<%lldx%s>) -> tensor<%lldx%s> {\n"
           "  %%0 = stablehlo.convert %%a : (tensor<%lldx%s>) -> tensor<%lldx%s>\n"
           "  return %%0 : tensor<%lldx%s>\n}\n",
           (long long)n, argv[1], (long long)n, argv[2], (long long)n, argv[1], (long long)n,
           argv[2], (long long)n, argv[2]);
  hlo_module *m = NULL;
  hlo_executable *e = NULL;
  hlo_buffer **res = NULL;
  int rc = 1;
  hlo_status st = hlo_module_parse("convert.mlir", text, strlen(text), &m);
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &e);
  int64_t dims[1] = {n};
  hlo_buffer_view arg = {from, 1, dims, in};
  if (!st) st = hlo_executable_run(e, &arg, 1, &res);
  if (st) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  } else {
    FILE *f = fopen(argv[4], "wb");
    size_t ob = hlo_buffer_nbytes(res[0]);
    if (f && fwrite(hlo_buffer_data(res[0]), 1, ob, f) == ob && fclose(f) == 0) rc = 0;
    else { fprintf(stderr, "float_convert: cannot write %s\n", argv[4]); rc = 2; }
    hlo_buffer_destroy(res[0]);
    free(res);
  }
  hlo_executable_destroy(e);
  hlo_module_destroy(m);
  free(in);
  return rc;
}
