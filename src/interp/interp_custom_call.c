/* interp_custom_call.c — stablehlo.custom_call: dispatch on call_target_name.
 *
 *   check.*                        -> interp_check_custom_call (interp_check.c)
 *   lapack_{s,d,c,z}potrf_ffi      Cholesky       (LAPACK ?potrf)
 *   lapack_{s,d,c,z}getrf_ffi      LU             (LAPACK ?getrf)
 *   lapack_{s,d,c,z}trsm_ffi       triangular solve (BLAS ?trsm)
 *   lapack_{s,d,c,z}geqrf_ffi      QR             (LAPACK ?geqrf)
 *   lapack_{s,d}orgqr_ffi, lapack_{c,z}ungqr_ffi   Q from QR (?orgqr/?ungqr)
 *   lapack_{s,d}syevd_ffi, lapack_{c,z}heevd_ffi   symmetric eigensolver
 *   lapack_{s,d,c,z}gesdd_ffi      singular value decomposition
 *   cusolver_potrf_ffi, cusolver_getrf_ffi, cusolver_geqrf_ffi,
 *   cusolver_orgqr_ffi, cusolver_syevd_ffi   the same, computed on the CPU
 *   cu_lu_pivots_to_permutation    LU pivots -> permutation
 *   Sharding, SPMDFullToShardShape, SPMDShardToFullShape,
 *   annotate_device_placement, MoveToHost, MoveToDevice   identity (1 device)
 *
 * Operand and result conventions are those of jaxlib's FFI handlers
 * (jaxlib/cpu/lapack_kernels.cc, jaxlib/gpu/solver_kernels_ffi.cc): the
 * matrix is the last two dimensions, leading dimensions are a batch;
 * getrf returns (lu, ipiv, info) with 1-based LAPACK pivots (JAX subtracts 1
 * afterwards); potrf returns (factor, info) and leaves the other triangle as
 * it was (JAX masks it); trsm takes (a, b[, alpha]) and returns the solution
 * in b's shape; geqrf returns (a, tau[, info, workspace]); orgqr takes
 * (a, tau) and returns (a[, info, workspace]). Character options come as ui8
 * entries of mhlo.backend_config (uplo = 76 'L', side, trans_x, diag).
 *
 * Layouts: JAX sets operand_layouts / result_layouts (minor-to-major), e.g.
 * dense<[0, 1]> for a column-major matrix. Interpreter tensors are row-major,
 * so each operand is copied into its physical layout before the LAPACK call
 * and each result copied back. The matrix dimensions must be the two most
 * minor ones (what JAX emits); anything else is reported as unimplemented.
 *
 * An unknown target fails with HLO_NOT_FOUND when the call is executed.
 */
#include <stdlib.h>
#include <string.h>
#include "interp/interp.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "support/arena.h"
#include "support/strbuf.h"

/* ------------------------------------------- Fortran LAPACK / BLAS ABI */

/* gfortran passes the length of each CHARACTER argument as a hidden size_t
 * after the visible arguments. Array arguments are typed void* here: one
 * declaration per precision, called through a table. */
void spotrf_(const char *, const int *, void *, const int *, int *, size_t);
void dpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void cpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void zpotrf_(const char *, const int *, void *, const int *, int *, size_t);
void sgetrf_(const int *, const int *, void *, const int *, int *, int *);
void dgetrf_(const int *, const int *, void *, const int *, int *, int *);
void cgetrf_(const int *, const int *, void *, const int *, int *, int *);
void zgetrf_(const int *, const int *, void *, const int *, int *, int *);
void strsm_(const char *, const char *, const char *, const char *, const int *, const int *,
            const void *, const void *, const int *, void *, const int *, size_t, size_t, size_t,
            size_t);
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *,
            const void *, const void *, const int *, void *, const int *, size_t, size_t, size_t,
            size_t);
void ctrsm_(const char *, const char *, const char *, const char *, const int *, const int *,
            const void *, const void *, const int *, void *, const int *, size_t, size_t, size_t,
            size_t);
void ztrsm_(const char *, const char *, const char *, const char *, const int *, const int *,
            const void *, const void *, const int *, void *, const int *, size_t, size_t, size_t,
            size_t);
void sgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void dgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void cgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void zgeqrf_(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
void sorgqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);
void dorgqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);
void cungqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);
void zungqr_(const int *, const int *, const int *, void *, const int *, const void *, void *,
             const int *, int *);

void ssyevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, int *, const int *, int *, size_t, size_t);
void dsyevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, int *, const int *, int *, size_t, size_t);
void cheevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, int *, const int *, int *, size_t, size_t);
void zheevd_(const char *, const char *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, int *, const int *, int *, size_t, size_t);

void sgesdd_(const char *, const int *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, void *, const int *, int *, int *, size_t);
void dgesdd_(const char *, const int *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, void *, const int *, int *, int *, size_t);
void cgesdd_(const char *, const int *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, void *, const int *, void *, int *, int *,
             size_t);
void zgesdd_(const char *, const int *, const int *, void *, const int *, void *, void *,
             const int *, void *, const int *, void *, const int *, void *, int *, int *,
             size_t);

typedef void (*potrf_fn)(const char *, const int *, void *, const int *, int *, size_t);
typedef void (*getrf_fn)(const int *, const int *, void *, const int *, int *, int *);
typedef void (*trsm_fn)(const char *, const char *, const char *, const char *, const int *,
                        const int *, const void *, const void *, const int *, void *, const int *,
                        size_t, size_t, size_t, size_t);
typedef void (*geqrf_fn)(const int *, const int *, void *, const int *, void *, void *,
                         const int *, int *);
typedef void (*orgqr_fn)(const int *, const int *, const int *, void *, const int *, const void *,
                         void *, const int *, int *);

static const potrf_fn potrf_fns[4] = {spotrf_, dpotrf_, cpotrf_, zpotrf_};
static const getrf_fn getrf_fns[4] = {sgetrf_, dgetrf_, cgetrf_, zgetrf_};
static const trsm_fn trsm_fns[4] = {strsm_, dtrsm_, ctrsm_, ztrsm_};
static const geqrf_fn geqrf_fns[4] = {sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_};
static const orgqr_fn orgqr_fns[4] = {sorgqr_, dorgqr_, cungqr_, zungqr_};

/* 0..3 for f32, f64, complex<f32>, complex<f64>; -1 otherwise. */
static int prec_index(hlo_dtype t) {
  switch (t) {
    case HLO_F32: return 0;
    case HLO_F64: return 1;
    case HLO_C64: return 2;
    case HLO_C128: return 3;
    default: return -1;
  }
}

/* ---------------------------------------------------------- targets */

typedef struct cc_target cc_target;
typedef hlo_status (*cc_fn)(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out, const cc_target *t);
struct cc_target {
  const char *name;
  cc_fn fn;
  hlo_dtype dtype;   /* required operand element type; HLO_DTYPE_COUNT: any of f32/f64/c64/c128 */
};

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
static hlo_status to_physical(const hlo_op *op, uint32_t i, const tensor *x, bool matrix,
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
static hlo_status from_physical(const hlo_op *op, uint32_t i, const hlo_type *rt,
                                uint8_t *phys, tensor **out) {
  int64_t m2m[64];
  if (rt->rank > 64) return interp_error(op, HLO_UNIMPLEMENTED, "rank over 64");
  HLO_TRY(get_layout(op, "result_layouts", i, rt->rank, m2m));
  HLO_TRY(tensor_create(rt, &op->loc, out));
  relayout(phys, (*out)->data, rt->dims, rt->rank, m2m, hlo_dtype_size(rt->dtype), false);
  return NULL;
}

/* Integer (or bool) entry `key` of the mhlo.backend_config dictionary. */
static bool config_int(const hlo_op *op, const char *key, int64_t *v) {
  const hlo_attr *d = op_attr(op, "mhlo.backend_config");
  const hlo_attr *a = d ? attr_field(d, key) : NULL;
  if (!a) return false;
  if (a->kind == ATTR_INT) *v = a->u.i.v;
  else if (a->kind == ATTR_BOOL) *v = a->u.b;
  else return false;
  return true;
}

static char config_char(const hlo_op *op, const char *key, char dflt) {
  int64_t v;
  if (!config_int(op, key, &v) || v <= 0 || v > 127) return dflt;
  return (char)v;
}

/* Checks that operand 0 is a float/complex matrix batch of the target's
 * type; sets *prec, *batch, *m, *n. */
static hlo_status matrix_operand(const hlo_op *op, const cc_target *t, const tensor *x, int *prec,
                                 int64_t *batch, int *m, int *n) {
  if (!x || x->type->kind != TYPE_TENSOR || x->type->rank < 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: operand must be a batch of matrices",
                        t->name);
  const hlo_type *ty = x->type;
  *prec = prec_index(ty->dtype);
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

static hlo_status check_results(const hlo_op *op, const cc_target *t, uint32_t min,
                                uint32_t max) {
  if (op->num_results < min || op->num_results > max)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected %u to %u results, found %u",
                        t->name, min, max, op->num_results);
  return NULL;
}

/* Sets result i (an i32 info/pivot array) from `vals` (row-major batch
 * order). */
static hlo_status int_result(const hlo_op *op, uint32_t i, const hlo_type *rt, const int *vals,
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
static char config_uplo(const hlo_op *op) {
  char uplo = config_char(op, "uplo", 'L');
  int64_t lower;
  if (config_int(op, "lower", &lower)) uplo = lower ? 'L' : 'U';
  return uplo;
}

/* An HLO_INTERNAL error when a LAPACK call reported an invalid argument
 * (info < 0); NULL otherwise. */
static hlo_status lapack_info(const hlo_op *op, const cc_target *t, int info) {
  if (info >= 0) return NULL;
  return interp_error(op, HLO_INTERNAL, "%s: LAPACK argument %d invalid", t->name, -info);
}

/* ------------------------------------------------------------ kernels */

static hlo_status cc_potrf(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(check_results(op, t, 2, 2));
  HLO_TRY(matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  if (m != n) return interp_error(op, HLO_INVALID_ARGUMENT, "%s: matrix must be square", t->name);
  char uplo = config_uplo(op);
  uint8_t *a;
  HLO_TRY(to_physical(op, 0, in[0], true, &a));
  int *info = xcalloc((size_t)batch + 1, sizeof *info);
  if (!info) {
    free(a);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t step = (size_t)n * n * hlo_dtype_size(in[0]->type->dtype);
  int lda = n > 1 ? n : 1;
  for (int64_t b = 0; b < batch; b++) potrf_fns[prec](&uplo, &n, a + b * step, &lda, &info[b], 1);
  hlo_status st = from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = int_result(op, 1, rt[1], info, batch, &out[1]);
  free(a);
  free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static hlo_status cc_getrf(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(check_results(op, t, 3, 3));
  HLO_TRY(matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  int k = m < n ? m : n;
  uint8_t *a;
  HLO_TRY(to_physical(op, 0, in[0], true, &a));
  int *info = xcalloc((size_t)batch + 1, sizeof *info);
  int *ipiv = xcalloc((size_t)(batch * k) + 1, sizeof *ipiv);
  hlo_status st = NULL;
  if (!info || !ipiv) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  size_t step = (size_t)m * n * hlo_dtype_size(in[0]->type->dtype);
  int lda = m > 1 ? m : 1;
  for (int64_t b = 0; b < batch && !st; b++)
    getrf_fns[prec](&m, &n, a + b * step, &lda, ipiv + b * k, &info[b]);
  if (!st) st = from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = int_result(op, 1, rt[1], ipiv, batch * k, &out[1]);
  if (!st) st = int_result(op, 2, rt[2], info, batch, &out[2]);
  free(a);
  free(info);
  free(ipiv);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static hlo_status cc_trsm(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n, pa, ka, kb;
  int64_t batch, batch_a;
  HLO_TRY(check_results(op, t, 1, 1));
  if (op->num_operands < 2 || op->num_operands > 3)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (a, b[, alpha])",
                        t->name);
  HLO_TRY(matrix_operand(op, t, in[1], &prec, &batch, &m, &n));
  HLO_TRY(matrix_operand(op, t, in[0], &pa, &batch_a, &ka, &kb));
  char side = config_char(op, "side", 'L'), uplo = config_char(op, "uplo", 'L');
  char trans = config_char(op, "trans_x", 'N'), diag = config_char(op, "diag", 'N');
  int k = side == 'L' ? m : n;
  if (pa != prec || ka != k || kb != k || (batch_a != batch && batch_a != 1))
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "%s: a must be a %dx%d matrix of b's type for side '%c'", t->name, k, k,
                        side);
  double alpha[2] = {1.0, 0.0};
  float alpha_f[2] = {1.0f, 0.0f};
  const void *alpha_p = (prec == 0 || prec == 2) ? (const void *)alpha_f : (const void *)alpha;
  if (op->num_operands == 3) {
    if (!in[2] || in[2]->type->kind != TYPE_TENSOR || in[2]->type->dtype != in[1]->type->dtype ||
        in[2]->num_elems != 1)
      return interp_error(op, HLO_INVALID_ARGUMENT, "%s: alpha must be a scalar of b's type",
                          t->name);
    alpha_p = in[2]->data;
  }
  uint8_t *a, *b;
  HLO_TRY(to_physical(op, 0, in[0], true, &a));
  hlo_status st = to_physical(op, 1, in[1], true, &b);
  if (st) {
    free(a);
    return st;
  }
  size_t es = hlo_dtype_size(in[1]->type->dtype);
  size_t bstep = (size_t)m * n * es, astep = batch_a == 1 ? 0 : (size_t)k * k * es;
  int lda = k > 1 ? k : 1, ldb = m > 1 ? m : 1;
  if (m > 0 && n > 0)
    for (int64_t i = 0; i < batch; i++)
      trsm_fns[prec](&side, &uplo, &trans, &diag, &m, &n, alpha_p, a + i * astep, &lda,
                     b + i * bstep, &ldb, 1, 1, 1, 1);
  st = from_physical(op, 0, rt[0], b, &out[0]);
  free(a);
  free(b);
  return st;
}

/* The optimal workspace size a LAPACK workspace query wrote to `wq` (its
 * first element, float or double by precision). */
static double workspace_size(int prec, const double *wq) {
  if (prec == 0 || prec == 2) {
    float f;
    memcpy(&f, wq, sizeof f);
    return f;
  }
  return wq[0];
}

/* Sets the optional trailing results (info, workspace) to zeros. */
static hlo_status zero_results(const hlo_op *op, const hlo_type *const *rt, uint32_t from,
                               tensor **out) {
  for (uint32_t i = from; i < op->num_results; i++) {
    hlo_status st = tensor_create(rt[i], &op->loc, &out[i]);
    if (st) return st;
  }
  return NULL;
}

/* The workspace of ?geqrf / ?orgqr after a workspace query wrote `wq`:
 * at least n (and 1) elements of size es; sets *lwork and *work (free). */
static hlo_status alloc_work(const hlo_op *op, int prec, const double *wq, int n, size_t es,
                             int *lwork, uint8_t **work) {
  double w = workspace_size(prec, wq);
  *lwork = w > n ? (int)w : (n > 1 ? n : 1);
  *work = xcalloc((size_t)*lwork + 1, es);
  if (!*work) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}

static hlo_status cc_geqrf(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(check_results(op, t, 2, 4));
  HLO_TRY(matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  int k = m < n ? m : n;
  size_t es = hlo_dtype_size(in[0]->type->dtype);
  uint8_t *a;
  HLO_TRY(to_physical(op, 0, in[0], true, &a));
  int lda = m > 1 ? m : 1, info = 0, lwork = -1;
  double wq[2] = {0, 0};
  uint8_t *tau = xcalloc((size_t)(batch * k) + 1, es), *work = NULL;
  hlo_status st = NULL;
  if (!tau) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st && m > 0 && n > 0) {
    geqrf_fns[prec](&m, &n, a, &lda, tau, wq, &lwork, &info);
    st = alloc_work(op, prec, wq, n, es, &lwork, &work);
  }
  size_t step = (size_t)m * n * es;
  for (int64_t b = 0; b < batch && !st && m > 0 && n > 0; b++) {
    geqrf_fns[prec](&m, &n, a + b * step, &lda, tau + b * k * es, work, &lwork, &info);
    st = lapack_info(op, t, info);
  }
  if (!st) st = from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) {
    if (type_num_elements(rt[1]) != batch * k || rt[1]->dtype != in[0]->type->dtype)
      st = interp_error(op, HLO_INVALID_ARGUMENT, "%s: tau result has the wrong type", t->name);
    else
      st = from_physical(op, 1, rt[1], tau, &out[1]);
  }
  if (!st) st = zero_results(op, rt, 2, out);
  free(a);
  free(tau);
  free(work);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

static hlo_status cc_orgqr(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(check_results(op, t, 1, 3));
  if (op->num_operands != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected operands (a, tau)", t->name);
  HLO_TRY(matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  const tensor *tau = in[1];
  if (!tau || tau->type->kind != TYPE_TENSOR || tau->type->rank < 1 ||
      tau->type->dtype != in[0]->type->dtype)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: tau must be a tensor of a's type",
                        t->name);
  int k = (int)tau->type->dims[tau->type->rank - 1];
  if (k > n || n > m || tau->num_elems != batch * k)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: needs m >= n >= k (m=%d n=%d k=%d)",
                        t->name, m, n, k);
  size_t es = hlo_dtype_size(in[0]->type->dtype);
  uint8_t *a, *tp;
  HLO_TRY(to_physical(op, 0, in[0], true, &a));
  hlo_status st = to_physical(op, 1, tau, false, &tp);
  if (st) {
    free(a);
    return st;
  }
  int lda = m > 1 ? m : 1, info = 0, lwork = -1;
  double wq[2] = {0, 0};
  uint8_t *work = NULL;
  if (m > 0 && n > 0) {
    orgqr_fns[prec](&m, &n, &k, a, &lda, tp, wq, &lwork, &info);
    st = alloc_work(op, prec, wq, n, es, &lwork, &work);
  }
  size_t step = (size_t)m * n * es;
  for (int64_t b = 0; b < batch && !st && m > 0 && n > 0; b++) {
    orgqr_fns[prec](&m, &n, &k, a + b * step, &lda, tp + b * k * es, work, &lwork, &info);
    st = lapack_info(op, t, info);
  }
  if (!st) st = from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = zero_results(op, rt, 1, out);
  free(a);
  free(tp);
  free(work);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

/* Symmetric / Hermitian eigendecomposition (?syevd / ?heevd): operand a;
 * results (eigenvectors in a's shape, eigenvalues (..., n) real, info
 * (...)[, workspaces]). Options: mode 'V'/'N' (or compute vectors), uplo /
 * lower. */
static hlo_status cc_syevd(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(check_results(op, t, 3, 6));
  HLO_TRY(matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  if (m != n) return interp_error(op, HLO_INVALID_ARGUMENT, "%s: matrix must be square", t->name);
  char uplo = config_uplo(op), jobz = config_char(op, "mode", 'V');
  hlo_dtype real = prec == 0 || prec == 2 ? HLO_F32 : HLO_F64;
  size_t es = hlo_dtype_size(in[0]->type->dtype), rs = hlo_dtype_size(real);
  if (rt[1]->dtype != real || type_num_elements(rt[1]) != batch * n)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: eigenvalues must be %s (..., %d)",
                        t->name, hlo_dtype_name(real), n);
  uint8_t *a;
  HLO_TRY(to_physical(op, 0, in[0], true, &a));
  int lda = n > 1 ? n : 1, lwork = -1, lrwork = -1, liwork = -1, iq = 0, q_info = 0;
  double wq[2] = {0, 0}, rq[2] = {0, 0};
  uint8_t *w = xcalloc((size_t)(batch * n) + 1, rs), *work = NULL, *rwork = NULL;
  int *iwork = NULL, *info = xcalloc((size_t)batch + 1, sizeof *info);
  hlo_status st = NULL;
  if (!w || !info) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  bool cplx = prec >= 2;
  if (!st && n > 0) {
    if (prec == 0) ssyevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, &iq, &liwork, &q_info, 1, 1);
    else if (prec == 1)
      dsyevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, &iq, &liwork, &q_info, 1, 1);
    else if (prec == 2)
      cheevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, rq, &lrwork, &iq, &liwork, &q_info, 1, 1);
    else
      zheevd_(&jobz, &uplo, &n, a, &lda, w, wq, &lwork, rq, &lrwork, &iq, &liwork, &q_info, 1, 1);
    double lw = workspace_size(prec, wq), lr = workspace_size(prec == 2 ? 0 : 1, rq);
    lwork = (int)(lw > 1 ? lw : 1) + 2 * n * n + 6 * n + 1;
    lrwork = (int)(lr > 1 ? lr : 1) + 2 * n * n + 5 * n + 1;
    liwork = (iq > 1 ? iq : 1) + 5 * n + 3;
    work = xcalloc((size_t)lwork, es);
    rwork = cplx ? xcalloc((size_t)lrwork, rs) : NULL;
    iwork = xcalloc((size_t)liwork, sizeof *iwork);
    if (!work || (cplx && !rwork) || !iwork)
      st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t step = (size_t)n * n * es;
  for (int64_t b = 0; b < batch && !st && n > 0; b++) {
    uint8_t *ab = a + b * step, *wb = w + (size_t)b * n * rs;
    if (prec == 0)
      ssyevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, iwork, &liwork, &info[b], 1, 1);
    else if (prec == 1)
      dsyevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, iwork, &liwork, &info[b], 1, 1);
    else if (prec == 2)
      cheevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, rwork, &lrwork, iwork, &liwork,
              &info[b], 1, 1);
    else
      zheevd_(&jobz, &uplo, &n, ab, &lda, wb, work, &lwork, rwork, &lrwork, iwork, &liwork,
              &info[b], 1, 1);
    st = lapack_info(op, t, info[b]);
  }
  if (!st) st = from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = from_physical(op, 1, rt[1], w, &out[1]);
  if (!st) st = int_result(op, 2, rt[2], info, batch, &out[2]);
  if (!st) st = zero_results(op, rt, 3, out);
  free(a);
  free(w);
  free(work);
  free(rwork);
  free(iwork);
  free(info);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

/* ?gesdd of precision `prec` (0 s, 1 d, 2 c, 3 z); rwork is for c/z only. */
static void call_gesdd(int prec, char jobz, int m, int n, void *a, int lda, void *s, void *u,
                       int ldu, void *vt, int ldvt, void *work, int lwork, void *rwork,
                       int *iwork, int *info) {
  switch (prec) {
    case 0: sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
      break;
    case 1: dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
      break;
    case 2:
      cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
      break;
    default:
      zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
      break;
  }
}

/* Singular value decomposition (?gesdd): operand a (..., m, n); results
 * (a, s (..., min(m, n)) real, u, vt, info[, workspaces]); option mode
 * 'A' (full u, vt), 'S' (reduced) or 'N' (values only). */
static hlo_status cc_gesdd(interp *it, const hlo_op *op, tensor *const *in,
                           const hlo_type *const *rt, tensor **out, const cc_target *t) {
  int prec, m, n;
  int64_t batch;
  HLO_TRY(check_results(op, t, 5, 8));
  HLO_TRY(matrix_operand(op, t, in[0], &prec, &batch, &m, &n));
  char jobz = config_char(op, "mode", 'S');
  int k = m < n ? m : n;
  hlo_dtype real = prec == 0 || prec == 2 ? HLO_F32 : HLO_F64;
  size_t es = hlo_dtype_size(in[0]->type->dtype), rs = hlo_dtype_size(real);
  if (rt[1]->dtype != real || type_num_elements(rt[1]) != batch * k || rt[2]->rank < 2 ||
      rt[3]->rank < 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: unexpected result types", t->name);
  int64_t urows = rt[2]->dims[rt[2]->rank - 2], ucols = rt[2]->dims[rt[2]->rank - 1];
  int64_t vrows = rt[3]->dims[rt[3]->rank - 2], vcols = rt[3]->dims[rt[3]->rank - 1];
  int64_t usz = urows * ucols, vsz = vrows * vcols;
  if (type_num_elements(rt[2]) != batch * usz || type_num_elements(rt[3]) != batch * vsz)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: u / vt batch shapes differ", t->name);
  if (jobz != 'N' && (urows != m || vcols != n ||
                      (jobz == 'A' ? (ucols != m || vrows != n) : (ucols != k || vrows != k))))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: u / vt shapes do not fit mode '%c'",
                        t->name, jobz);
  uint8_t *a;
  HLO_TRY(to_physical(op, 0, in[0], true, &a));
  uint8_t *sv = xcalloc((size_t)(batch * k) + 1, rs);
  uint8_t *u = xcalloc((size_t)(batch * usz) + 1, es), *vt = xcalloc((size_t)(batch * vsz) + 1, es);
  int *iwork = xcalloc((size_t)(8 * k) + 1, sizeof *iwork);
  int *info = xcalloc((size_t)batch + 1, sizeof *info);
  int64_t mx = m > n ? m : n;
  size_t lrwork = (size_t)(5 * (int64_t)k * k + 7 * k + 2 * mx * k + 2 * (int64_t)k * k + 1);
  uint8_t *rwork = prec >= 2 ? xcalloc(lrwork, rs) : NULL, *work = NULL;
  hlo_status st = NULL;
  if (!sv || !u || !vt || !iwork || !info || (prec >= 2 && !rwork))
    st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  int lda = m > 1 ? m : 1, ldu = urows > 1 ? (int)urows : 1, ldvt = vrows > 1 ? (int)vrows : 1;
  int lwork = -1, qinfo = 0;
  double wq[2] = {0, 0};
  if (!st && m > 0 && n > 0) {
    call_gesdd(prec, jobz, m, n, a, lda, sv, u, ldu, vt, ldvt, wq, -1, rwork, iwork, &qinfo);
    double lw = workspace_size(prec, wq);
    lwork = (int)(lw > 1 ? lw : 1) + 1;
    work = xcalloc((size_t)lwork, es);
    if (!work) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t step = (size_t)m * n * es;
  for (int64_t b = 0; b < batch && !st && m > 0 && n > 0; b++) {
    call_gesdd(prec, jobz, m, n, a + b * step, lda, sv + (size_t)b * k * rs,
               u + (size_t)(b * usz) * es, ldu, vt + (size_t)(b * vsz) * es, ldvt, work, lwork,
               rwork, iwork, &info[b]);
    st = lapack_info(op, t, info[b]);
  }
  if (!st) st = from_physical(op, 0, rt[0], a, &out[0]);
  if (!st) st = from_physical(op, 1, rt[1], sv, &out[1]);
  if (!st) st = from_physical(op, 2, rt[2], u, &out[2]);
  if (!st) st = from_physical(op, 3, rt[3], vt, &out[3]);
  if (!st) st = int_result(op, 4, rt[4], info, batch, &out[4]);
  if (!st) st = zero_results(op, rt, 5, out);
  free(a);
  free(sv);
  free(u);
  free(vt);
  free(iwork);
  free(info);
  free(rwork);
  free(work);
  if (st) iu_release_all(out, op->num_results);
  return st;
}

/* cu_lu_pivots_to_permutation: pivots (..., k), 0-based row swaps applied
 * in order to iota(m), give the permutation (..., m) (jaxlib
 * gpu/linalg_kernels: LuPivotsToPermutation). */
static hlo_status cc_lu_perm(interp *it, const hlo_op *op, tensor *const *in,
                             const hlo_type *const *rt, tensor **out, const cc_target *t) {
  HLO_TRY(check_results(op, t, 1, 1));
  const tensor *p = in[0];
  if (!p || p->type->kind != TYPE_TENSOR || p->type->rank < 1 || !dtype_is_int(p->type->dtype) ||
      rt[0]->rank != p->type->rank || !dtype_is_int(rt[0]->dtype))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected integer pivots (..., k)",
                        t->name);
  int64_t k = p->type->dims[p->type->rank - 1], m = rt[0]->dims[rt[0]->rank - 1];
  int64_t batch = k ? p->num_elems / k : 1;
  if (k && type_num_elements(rt[0]) != batch * m)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: batch shapes differ", t->name);
  HLO_TRY(tensor_create(rt[0], &op->loc, &out[0]));
  for (int64_t b = 0; b < batch; b++) {
    for (int64_t i = 0; i < m; i++) elem_set_i64(rt[0]->dtype, out[0]->data, b * m + i, i);
    for (int64_t i = 0; i < k && i < m; i++) {
      int64_t j = elem_get_i64(p->type->dtype, p->data, b * k + i);
      if (j < 0 || j >= m) continue;
      int64_t x = elem_get_i64(rt[0]->dtype, out[0]->data, b * m + i);
      int64_t y = elem_get_i64(rt[0]->dtype, out[0]->data, b * m + j);
      elem_set_i64(rt[0]->dtype, out[0]->data, b * m + i, y);
      elem_set_i64(rt[0]->dtype, out[0]->data, b * m + j, x);
    }
  }
  return NULL;
}

/* A target whose results are its operands, unchanged. */
static hlo_status cc_identity(interp *it, const hlo_op *op, tensor *const *in,
                              const hlo_type *const *rt, tensor **out, const cc_target *t) {
  if (op->num_results != op->num_operands)
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s: expected as many results as operands",
                        t->name);
  for (uint32_t i = 0; i < op->num_results; i++) {
    if (in[i]->type->kind == TYPE_TENSOR && !type_same_shape(in[i]->type, rt[i])) {
      iu_release_all(out, i);
      return interp_error(op, HLO_UNIMPLEMENTED,
                          "%s changes the shape (sharded programs are not supported)", t->name);
    }
    out[i] = tensor_retain(in[i]);
  }
  return NULL;
}

#define LAPACK4(op, fn)                                                                   \
  {"lapack_s" op "_ffi", fn, HLO_F32}, {"lapack_d" op "_ffi", fn, HLO_F64},              \
      {"lapack_c" op "_ffi", fn, HLO_C64}, {                                              \
    "lapack_z" op "_ffi", fn, HLO_C128                                                    \
  }

static const cc_target targets[] = {
    LAPACK4("potrf", cc_potrf),
    LAPACK4("getrf", cc_getrf),
    LAPACK4("trsm", cc_trsm),
    LAPACK4("geqrf", cc_geqrf),
    {"lapack_sorgqr_ffi", cc_orgqr, HLO_F32},
    {"lapack_dorgqr_ffi", cc_orgqr, HLO_F64},
    {"lapack_cungqr_ffi", cc_orgqr, HLO_C64},
    {"lapack_zungqr_ffi", cc_orgqr, HLO_C128},
    {"lapack_ssyevd_ffi", cc_syevd, HLO_F32},
    {"lapack_dsyevd_ffi", cc_syevd, HLO_F64},
    {"lapack_cheevd_ffi", cc_syevd, HLO_C64},
    {"lapack_zheevd_ffi", cc_syevd, HLO_C128},
    {"cusolver_syevd_ffi", cc_syevd, HLO_DTYPE_COUNT},
    LAPACK4("gesdd", cc_gesdd),
    {"cusolver_potrf_ffi", cc_potrf, HLO_DTYPE_COUNT},
    {"cusolver_getrf_ffi", cc_getrf, HLO_DTYPE_COUNT},
    {"cusolver_geqrf_ffi", cc_geqrf, HLO_DTYPE_COUNT},
    {"cusolver_orgqr_ffi", cc_orgqr, HLO_DTYPE_COUNT},
    {"cu_lu_pivots_to_permutation", cc_lu_perm, HLO_DTYPE_COUNT},
    {"Sharding", cc_identity, HLO_DTYPE_COUNT},
    {"SPMDFullToShardShape", cc_identity, HLO_DTYPE_COUNT},
    {"SPMDShardToFullShape", cc_identity, HLO_DTYPE_COUNT},
    {"annotate_device_placement", cc_identity, HLO_DTYPE_COUNT},
    {"MoveToHost", cc_identity, HLO_DTYPE_COUNT},
    {"MoveToDevice", cc_identity, HLO_DTYPE_COUNT},
};

bool interp_custom_call_known(const char *name) {
  if (!strncmp(name, "check.", 6)) return true;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (!strcmp(targets[i].name, name)) return true;
  return false;
}

static hlo_status k_custom_call(interp *it, const hlo_op *op, tensor *const *in,
                                const hlo_type *const *rt, tensor **out) {
  const hlo_attr *a = op_attr(op, "call_target_name");
  if (!a || (a->kind != ATTR_STRING && a->kind != ATTR_SYMBOL))
    return interp_error(op, HLO_INVALID_ARGUMENT, "custom_call without call_target_name");
  const char *name = a->u.str.s;
  size_t len = a->u.str.len;
  if (len >= 6 && !memcmp(name, "check.", 6))
    return interp_check_custom_call(it, op, in, rt, out);
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    if (strlen(targets[i].name) == len && !memcmp(targets[i].name, name, len))
      return targets[i].fn(it, op, in, rt, out, &targets[i]);
  }
  strbuf b;
  sb_init(&b);
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    sb_printf(&b, "%s%s", i ? ", " : "", targets[i].name);
  hlo_status st = interp_error(op, HLO_NOT_FOUND,
                               "custom_call target '%.*s' is not registered (known: check.*, %s)",
                               (int)(len > 200 ? 200 : len), name, b.oom ? "..." : sb_cstr(&b));
  sb_free(&b);
  return st;
}

void interp_register_custom_call(interp_kernel *table) {
  if (!table[OP_CUSTOM_CALL]) table[OP_CUSTOM_CALL] = k_custom_call;
}
