/* cli_output.c — what the `hlo` verbs share on the way out: results
 * written as .npy files, summarised in a line, or printed in full.
 * Declared in tools/builtin/builtin.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin/builtin.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "interp/tensor_print.h"
#include "ir/element.h"
#include "ir/ir.h"
#include "support/float.h"
#include "support/npy.h"
#include "support/status.h"
#include "support/strbuf.h"

static void print_value(FILE *o, hlo_dtype dt, const void *data, int64_t i) {
  switch (dtype_class(dt)) {
    case HLO_CLASS_BOOL: fputs(elem_get_i64(dt, data, i) ? "true" : "false", o); break;
    case HLO_CLASS_SINT: fprintf(o, "%lld", (long long)elem_get_i64(dt, data, i)); break;
    case HLO_CLASS_UINT: fprintf(o, "%llu", (unsigned long long)elem_get_u64(dt, data, i)); break;
    case HLO_CLASS_FLOAT: fprintf(o, "%.6g", elem_get_f64(dt, data, i)); break;
    case HLO_CLASS_COMPLEX: {
      double re, im;
      elem_get_c128(dt, data, i, &re, &im);
      fprintf(o, "(%.6g, %.6g)", re, im);
      break;
    }
  }
}

/* Writes result `name` ("0"; a tuple's elements "0_1", "0_1_0", ...) to
 * DIR/out<name>.npy; types numpy lacks become float32 (floats) or int8/uint8
 * (i2/i4/ui2/ui4). Tokens are not written; a tuple writes its elements. */
hlo_status cli_write_result(const char *dir, const char *name, const hlo_buffer *b,
                            bool *noted) {
  char path[4096];
  if (hlo_buffer_rank(b) == HLO_RANK_TOKEN) return NULL;
  if (hlo_buffer_rank(b) == HLO_RANK_TUPLE) {
    for (int j = 0; j < hlo_buffer_tuple_size(b); j++) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s_%d", name, j);
      HLO_TRY(cli_write_result(dir, sub, hlo_buffer_tuple_element(b, j), noted));
    }
    return NULL;
  }
  snprintf(path, sizeof path, "%s/out%s.npy", dir, name);
  hlo_dtype dt = hlo_buffer_dtype(b);
  int rank = hlo_buffer_rank(b);
  const int64_t *dims = hlo_buffer_dims(b);
  const void *data = hlo_buffer_data(b);
  hlo_dtype as = dt;
  switch (dt) {
    case HLO_I2: case HLO_I4: as = HLO_I8; break;
    case HLO_UI2: case HLO_UI4: as = HLO_UI8; break;
    default:
      if (dtype_is_float(dt) && dt != HLO_F16 && dt != HLO_F32 && dt != HLO_F64) as = HLO_F32;
  }
  if (as == dt) return npy_write(path, dt, rank, dims, data);
  size_t n = hlo_buffer_nbytes(b) / hlo_dtype_size(dt);
  void *buf = malloc(n ? n * hlo_dtype_size(as) : 1);
  if (!buf) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory writing '%s'", path);
  for (size_t i = 0; i < n; i++) {
    if (as == HLO_F32) elem_set_f64(as, buf, (int64_t)i, elem_get_f64(dt, data, (int64_t)i));
    else elem_set_i64(as, buf, (int64_t)i, elem_get_i64(dt, data, (int64_t)i));
  }
  hlo_status st = npy_write(path, as, rank, dims, buf);
  free(buf);
  if (!st && !*noted) {
    fprintf(stderr, "note: %s has no numpy type; %s holds it as %s\n", hlo_dtype_name(dt), path,
            hlo_dtype_name(as) );
    *noted = true;
  }
  return st;
}

/* mkdir -p: creates `dir` and any missing parents. */
hlo_status cli_make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
    return status_new(HLO_INVALID_ARGUMENT, "output directory path too long");
  for (char *p = path + 1; ; p++) {
    char c = *p;
    if (c != '/' && c != 0) continue;
    *p = 0;
    struct stat sbuf;
    if (stat(path, &sbuf) != 0) {
      if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return status_new(HLO_NOT_FOUND, "cannot create output directory '%s': %s", path,
                          strerror(errno));
    } else if (!S_ISDIR(sbuf.st_mode)) {
      return status_new(HLO_INVALID_ARGUMENT, "output directory '%s': '%s' is not a directory",
                        dir, path);
    }
    *p = c;
    if (!c) break;
  }
  return NULL;
}

/* One line per result ("result 0", a tuple's elements "result 0_1"): shape
 * and type, the first values, min/max and NaNs. */
void cli_summarize(FILE *o, const char *k, const hlo_buffer *b) {
  hlo_dtype dt = hlo_buffer_dtype(b);
  int rank = hlo_buffer_rank(b);
  if (rank == HLO_RANK_TOKEN) {
    fprintf(o, "result %s: !stablehlo.token (not written)\n", k);
    return;
  }
  if (rank == HLO_RANK_TUPLE) {
    fprintf(o, "result %s: tuple of %d\n", k, hlo_buffer_tuple_size(b));
    for (int j = 0; j < hlo_buffer_tuple_size(b); j++) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s_%d", k, j);
      cli_summarize(o, sub, hlo_buffer_tuple_element(b, j));
    }
    return;
  }
  const int64_t *dims = hlo_buffer_dims(b);
  const void *data = hlo_buffer_data(b);
  int64_t n = (int64_t)(hlo_buffer_nbytes(b) / hlo_dtype_size(dt));
  fprintf(o, "result %s: tensor<", k);
  for (int d = 0; d < rank; d++) fprintf(o, "%lldx", (long long)dims[d]);
  fprintf(o, "%s> [", hlo_dtype_name(dt));
  for (int64_t i = 0; i < n && i < 6; i++) {
    if (i) fputs(", ", o);
    print_value(o, dt, data, i);
  }
  fputs(n > 6 ? ", ...]" : "]", o);
  if (n > 0 && dtype_class(dt) != HLO_CLASS_COMPLEX) {
    double mn = INFINITY, mx = -INFINITY;
    int64_t nans = 0;
    for (int64_t i = 0; i < n; i++) {
      double x = elem_get_f64(dt, data, i);
      if (isnan(x)) { nans++; continue; }
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
    if (nans < n) fprintf(o, " min %.6g max %.6g", mn, mx);
    if (dtype_class(dt) == HLO_CLASS_FLOAT) fprintf(o, " nan %lld", (long long)nans);
  }
  fputc('\n', o);
}

/* Prints result `b` (of declared type `rt`) in full; a tuple prints its
 * elements in order, a token nothing (it holds no value). */
void cli_print_result(const hlo_type *rt, const hlo_buffer *b) {
  if (hlo_buffer_rank(b) == HLO_RANK_TOKEN) return;
  if (hlo_buffer_rank(b) == HLO_RANK_TUPLE) {
    for (int j = 0; j < hlo_buffer_tuple_size(b); j++)
      cli_print_result(rt->kind == TYPE_TUPLE && (uint32_t)j < rt->num_elems ? rt->elems[j] : rt,
                   hlo_buffer_tuple_element(b, j));
    return;
  }
  /* the result's own shape (a dynamic result type takes the run's) */
  int64_t dims[64];
  hlo_type shaped = *rt;
  shaped.kind = TYPE_TENSOR;
  shaped.dtype = hlo_buffer_dtype(b);
  if (hlo_buffer_rank(b) <= 64) {
    memcpy(dims, hlo_buffer_dims(b), (size_t)hlo_buffer_rank(b) * sizeof *dims);
    shaped.rank = (uint32_t)hlo_buffer_rank(b);
    shaped.dims = dims;
  }
  tensor x = {0};
  x.type = &shaped;
  x.data = (uint8_t *)hlo_buffer_data(b);
  x.nbytes = hlo_buffer_nbytes(b);
  strbuf sb;
  sb_init(&sb);
  tensor_print(&sb, &x);
  fputs(sb_cstr(&sb), stdout);
  sb_free(&sb);
}

void cli_json_string(FILE *o, const char *s) {
  if (!s) {
    fputs("null", o);
    return;
  }
  fputc('"', o);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(o, "\\%c", *p);
    else if (*p < 0x20) fprintf(o, "\\u%04x", *p);
    else fputc(*p, o);
  }
  fputc('"', o);
}
