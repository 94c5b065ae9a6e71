/* interp_lapack_util.c — helpers shared by the linear-algebra custom-call
 * kernels (interp_lapack.c, interp_lapack_eig.c, interp_solver.c): layouts
 * (operand_layouts / result_layouts, minor-to-major), backend_config
 * options, matrix-batch operands, info arrays. See interp_lapack.h.
 *
 * Layouts: JAX sets operand_layouts / result_layouts (minor-to-major), e.g.
 * dense<[0, 1]> for a column-major matrix. Interpreter tensors are row-major,
 * so each operand is copied into its physical layout before the LAPACK call
 * and each result copied back. */
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "interp/interp_lapack.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"


/* 0..3 for f32, f64, complex<f32>, complex<f64>; -1 otherwise. */
int lk_prec_index(hlo_dtype t) {
  switch (t) {
    case HLO_F32: return 0;
    case HLO_F64: return 1;
    case HLO_C64: return 2;
    case HLO_C128: return 3;
    default: return -1;
  }
}

/* ------------------------------------------------------------ helpers */

/* The integers of the opaque text `dense<...> : ...` (at most cap); false
 * when it is not such a text. */
static bool opaque_dense_ints(const char *s, size_t len, int64_t *v, uint32_t cap,
                              uint32_t *n) {
  *n = 0;
  if (len < 7 || memcmp(s, "dense<", 6)) return false;
  size_t i = 6;
  int depth = 1;
  while (i < len && depth > 0) {
    char c = s[i];
    if (c == '<') {
      depth++;
      i++;
    } else if (c == '>') {
      depth--;
      i++;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      char *end;
      long long x = strtoll(s + i, &end, 10);
      if (end == s + i || *n >= cap) return false;
      v[(*n)++] = x;
      i = (size_t)(end - s);
    } else if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '\n') {
      i++;
    } else {
      return false;
    }
  }
  return depth == 0;
}

/* The minor-to-major layout of operand/result `i` from attribute `name`
 * (absent: row-major). Writes rank entries to m2m. */
static hlo_status get_layout(const hlo_op *op, const char *name, uint32_t i, uint32_t rank,
                             int64_t *m2m) {
  for (uint32_t d = 0; d < rank; d++) m2m[d] = rank - 1 - d;
  const hlo_attr *a = op_attr(op, name);
  if (!a) return NULL;
  if (a->kind != ATTR_ARRAY || i >= a->u.arr.n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s has no entry %u", name, i);
  const hlo_attr *l = a->u.arr.items[i];
  uint32_t n = 0;
  if (l->kind == ATTR_DENSE && l->u.dense.type && l->u.dense.type->kind == TYPE_TENSOR) {
    n = (uint32_t)l->u.dense.num_elems;
    if (n == rank)
      for (uint32_t d = 0; d < n; d++)
        m2m[d] = elem_get_i64(l->u.dense.type->dtype, l->u.dense.data, l->u.dense.splat ? 0 : d);
  } else if (l->kind == ATTR_OPAQUE) {
    /* `dense<[0, 1]> : tensor<2xindex>` (the parser keeps index-typed dense
     * literals verbatim): the integers between `dense<` and its `>`, a
     * single one being a splat. */
    int64_t v[64];
    if (!opaque_dense_ints(l->u.str.s, l->u.str.len, v, 64, &n))
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s[%u] is not an integer list", name, i);
    if (n == 1 && rank > 1) {
      for (uint32_t d = 1; d < rank; d++) v[d] = v[0];
      n = rank;
    }
    if (n == rank)
      for (uint32_t d = 0; d < n; d++) m2m[d] = v[d];
  } else if (l->kind == ATTR_DENSE_ARRAY && l->u.darr.ints) {
    n = l->u.darr.n;
    if (n == rank)
      for (uint32_t d = 0; d < n; d++) m2m[d] = l->u.darr.ints[d];
  } else {
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s[%u] is not an integer list", name, i);
  }
  if (n != rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s[%u] has %u entries for rank %u", name, i, n,
                        rank);
  uint64_t seen = 0;
  for (uint32_t d = 0; d < rank; d++) {
    if (m2m[d] < 0 || m2m[d] >= rank || rank > 64 || (seen >> m2m[d] & 1))
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s[%u] is not a permutation", name, i);
    seen |= 1ull << m2m[d];
  }
  return NULL;
}

/* Copies between a row-major buffer and the physical order of layout m2m:
 * to_phys: phys[offset(idx)] = rm[lin(idx)]; else the reverse. */
static void relayout(uint8_t *phys, uint8_t *rm, const int64_t *dims, uint32_t rank,
                     const int64_t *m2m, size_t es, bool to_phys) {
  int64_t stride[64], idx[64] = {0};
  int64_t s = 1, total = 1;
  for (uint32_t k = 0; k < rank; k++) {
    stride[m2m[k]] = s;
    s *= dims[m2m[k]];
  }
  for (uint32_t d = 0; d < rank; d++) total *= dims[d];
  for (int64_t lin = 0; lin < total; lin++) {
    int64_t off = 0;
    for (uint32_t d = 0; d < rank; d++) off += idx[d] * stride[d];
    if (to_phys) memcpy(phys + off * es, rm + lin * es, es);
    else memcpy(rm + lin * es, phys + off * es, es);
    for (int d = (int)rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

/* A malloc'd copy of tensor `x` (operand i) in its physical layout; checks
 * that a matrix operand (rank >= 2, `matrix`) has its two last dimensions
 * most minor, dims[-2] fastest (column-major matrices, as LAPACK wants). */
hlo_status lk_to_physical(const hlo_op *op, uint32_t i, const tensor *x, bool matrix,
                              uint8_t **out) {
  const hlo_type *t = x->type;
  int64_t m2m[64];
  if (t->rank > 64) return interp_error(op, HLO_UNIMPLEMENTED, "rank over 64");
  HLO_TRY(get_layout(op, "operand_layouts", i, t->rank, m2m));
  if (matrix && (t->rank < 2 || m2m[0] != t->rank - 2 || m2m[1] != t->rank - 1))
    return interp_error(op, HLO_UNIMPLEMENTED,
                        "operand %u: only column-major matrix layouts (minor-to-major [%u, %u, "
                        "...]) are supported", i, t->rank - 2, t->rank - 1);
  uint8_t *p = xmalloc(x->nbytes + 1);
  if (!p) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  relayout(p, x->data, t->dims, t->rank, m2m, hlo_dtype_size(t->dtype), true);
  *out = p;
  return NULL;
}

/* A new result tensor `i` of type rt from the physical-layout bytes `phys`. */
hlo_status lk_from_physical(const hlo_op *op, uint32_t i, const hlo_type *rt,
                                uint8_t *phys, tensor **out) {
  int64_t m2m[64];
  if (rt->rank > 64) return interp_error(op, HLO_UNIMPLEMENTED, "rank over 64");
  HLO_TRY(get_layout(op, "result_layouts", i, rt->rank, m2m));
  HLO_TRY(tensor_create(rt, &op->loc, out));
  relayout(phys, (*out)->data, rt->dims, rt->rank, m2m, hlo_dtype_size(rt->dtype), false);
  return NULL;
}

/* Integer (or bool) entry `key` of the mhlo.backend_config dictionary. */
bool lk_config_int(const hlo_op *op, const char *key, int64_t *v) {
  const hlo_attr *d = op_attr(op, "mhlo.backend_config");
  const hlo_attr *a = d ? attr_field(d, key) : NULL;
  if (!a) return false;
  if (a->kind == ATTR_INT) *v = a->u.i.v;
  else if (a->kind == ATTR_BOOL) *v = a->u.b;
  else return false;
  return true;
}

char lk_config_char(const hlo_op *op, const char *key, char dflt) {
  int64_t v;
  if (!lk_config_int(op, key, &v) || v <= 0 || v > 127) return dflt;
  return (char)v;
}

/* Checks that operand 0 is a float/complex matrix batch of the target's
 * type; sets *prec, *batch, *m, *n. */
hlo_status lk_matrix_operand(const hlo_op *op, const cc_target *t, const tensor *x, int *prec,
                                 int64_t *batch, int *m, int *n) {
  if (!x || x->type->kind != TYPE_TENSOR || x->type->rank < 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: operand must be a batch of matrices",
                        t->name);
  const hlo_type *ty = x->type;
  *prec = lk_prec_index(ty->dtype);
  if (*prec < 0 || (t->dtype != HLO_DTYPE_COUNT && ty->dtype != t->dtype))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: unsupported element type %s", t->name,
                        hlo_dtype_name(ty->dtype));
  int64_t mm = ty->dims[ty->rank - 2], nn = ty->dims[ty->rank - 1];
  if (mm > 1 << 20 || nn > 1 << 20)
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "%s: matrix too large", t->name);
  *m = (int)mm;
  *n = (int)nn;
  *batch = 1;
  for (uint32_t d = 0; d + 2 < ty->rank; d++) *batch *= ty->dims[d];
  return NULL;
}

hlo_status lk_check_results(const hlo_op *op, const cc_target *t, uint32_t min,
                                uint32_t max) {
  if (op->num_results < min || op->num_results > max)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected %u to %u results, found %u",
                        t->name, min, max, op->num_results);
  return NULL;
}

/* Sets result i (an i32 info/pivot array) from `vals` (row-major batch
 * order). */
hlo_status lk_int_result(const hlo_op *op, uint32_t i, const hlo_type *rt, const int *vals,
                             int64_t count, tensor **out) {
  if (rt->kind != TYPE_TENSOR || !dtype_is_int(rt->dtype) || type_num_elements(rt) != count)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "result %u should be an integer tensor of %lld elements", i,
                        (long long)count);
  tensor *x;
  HLO_TRY(tensor_create(rt, &op->loc, &x));
  for (int64_t k = 0; k < count; k++) elem_set_i64(rt->dtype, x->data, k, vals[k]);
  *out = x;
  return NULL;
}

/* The uplo option: 'uplo' (default 'L'), overridden by a boolean 'lower'. */
char lk_config_uplo(const hlo_op *op) {
  char uplo = lk_config_char(op, "uplo", 'L');
  int64_t lower;
  if (lk_config_int(op, "lower", &lower)) uplo = lower ? 'L' : 'U';
  return uplo;
}

/* The optimal workspace size a LAPACK workspace query wrote to `wq` (its
 * first element, float or double by precision). */
double lk_workspace_size(int prec, const double *wq) {
  if (prec == 0 || prec == 2) {
    float f;
    memcpy(&f, wq, sizeof f);
    return f;
  }
  return wq[0];
}

hlo_status lk_square_operand(const hlo_op *op, const cc_target *t, const tensor *x, int *prec,
                             int64_t *batch, int *n) {
  int m;
  HLO_TRY(lk_matrix_operand(op, t, x, prec, batch, &m, n));
  if (m != *n) return interp_error(op, HLO_INVALID_ARGUMENT, "%s: matrix must be square", t->name);
  return NULL;
}

/* Sets the optional trailing results (info, workspace) to zeros. */
hlo_status lk_zero_results(const hlo_op *op, const hlo_type *const *rt, uint32_t from,
                               tensor **out) {
  for (uint32_t i = from; i < op->num_results; i++) {
    hlo_status st = tensor_create(rt[i], &op->loc, &out[i]);
    if (st) return st;
  }
  return NULL;
}

/* The workspace of ?geqrf / ?orgqr after a workspace query wrote `wq`:
 * at least n (and 1) elements of size es; sets *lwork and *work (free). */
hlo_status lk_alloc_work(const hlo_op *op, int prec, const double *wq, int n, size_t es,
                             int *lwork, uint8_t **work) {
  double w = lk_workspace_size(prec, wq);
  *lwork = w > n ? (int)w : (n > 1 ? n : 1);
  *work = xcalloc((size_t)*lwork + 1, es);
  if (!*work) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}
hlo_status lk_alloc_work_over(const hlo_op *op, int prec, const double *wq, int min, size_t es,
                              int *lwork, uint8_t **work) {
  double w = lk_workspace_size(prec, wq);
  *lwork = (int)(w > min ? w : min) + 1;
  *work = xcalloc((size_t)*lwork, es);
  if (!*work) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}

hlo_dtype lk_real_dtype(int prec) { return prec == 0 || prec == 2 ? HLO_F32 : HLO_F64; }

bool lk_config_bool(const hlo_op *op, const char *key, bool dflt) {
  int64_t v;
  return lk_config_int(op, key, &v) ? v != 0 : dflt;
}

hlo_status lk_to_physical_any(const hlo_op *op, uint32_t i, const tensor *x, uint8_t **out,
                              bool *transposed) {
  const hlo_type *t = x->type;
  int64_t m2m[64];
  if (t->rank > 64 || t->rank < 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand %u must be a batch of matrices", i);
  HLO_TRY(get_layout(op, "operand_layouts", i, t->rank, m2m));
  uint32_t r = t->rank;
  if (m2m[0] == r - 2 && m2m[1] == r - 1) *transposed = false;
  else if (m2m[0] == r - 1 && m2m[1] == r - 2) *transposed = true;
  else
    return interp_error(op, HLO_UNIMPLEMENTED,
                        "operand %u: the matrix dimensions must be the two most minor", i);
  uint8_t *p = xmalloc(x->nbytes + 1);
  if (!p) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  relayout(p, x->data, t->dims, t->rank, m2m, hlo_dtype_size(t->dtype), true);
  *out = p;
  return NULL;
}

hlo_status lk_check_result(const hlo_op *op, const cc_target *t, uint32_t i, const hlo_type *rt,
                           hlo_dtype dtype, int64_t count) {
  if (rt->kind != TYPE_TENSOR || rt->dtype != dtype || type_num_elements(rt) != count)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: result %u must be %lld elements of %s",
                        t->name, i, (long long)count, hlo_dtype_name(dtype));
  return NULL;
}

/* Whether any of the `count` reals at `a` (f32 for prec 0 and 2, f64 for 1
 * and 3: a complex element is two reals) is an infinity or a NaN. */
bool lk_has_non_finite(int prec, const uint8_t *a, size_t count) {
  for (size_t i = 0; i < count; i++) {
    double v;
    if (prec == 0 || prec == 2) {
      float f;
      memcpy(&f, a + i * 4, 4);
      v = f;
    } else {
      memcpy(&v, a + i * 8, 8);
    }
    if (!isfinite(v)) return true;
  }
  return false;
}
