/* interp_lapack.h — the custom-call kernels of linear algebra (LAPACK / BLAS
 * on the CPU, for the lapack_*, cusolver_*, hipsolver_*, cusparse_* and
 * hybrid targets JAX emits) and the helpers they share: operand and result
 * layouts, mhlo.backend_config options, batch shapes, info arrays.
 * Private to src/interp (interp_custom_call.c dispatches to these);
 * not a public interface.
 *
 * Conventions of every kernel (those of jaxlib's FFI handlers,
 * jaxlib/cpu/lapack_kernels.cc and jaxlib/gpu/solver_kernels_ffi.cc): the
 * matrix is the last two dimensions, leading dimensions are a batch; `in`
 * are the operands (borrowed), `rt` the result types, `out` the result
 * slots (new references on success, untouched on error); every error is
 * located at `op` and names the target. */
#ifndef HLO_INTERP_INTERP_LAPACK_H
#define HLO_INTERP_INTERP_LAPACK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "interp/interp.h"

typedef struct cc_target cc_target;
/* A custom-call kernel (the interp_kernel signature plus its table entry). */
typedef hlo_status (*cc_fn)(interp *it, const hlo_op *op, tensor *const *in,
                            const hlo_type *const *rt, tensor **out, const cc_target *t);
/* One entry of interp_custom_call.c's dispatch table. */
struct cc_target {
  const char *name;
  cc_fn fn;
  hlo_dtype dtype;   /* required operand element type; HLO_DTYPE_COUNT: any of f32/f64/c64/c128 */
};

/* ------------------------------------------------ helpers (interp_lapack_util.c) */

/* 0..3 for f32, f64, complex<f32>, complex<f64> (LAPACK's s, d, c, z); -1
 * otherwise. */
int lk_prec_index(hlo_dtype t);
/* The real type of precision `prec` (f32 for s/c, f64 for d/z). */
hlo_dtype lk_real_dtype(int prec);
/* A malloc'd copy of tensor `x` (operand i) in the physical layout that
 * operand_layouts gives it (absent: row-major). When `matrix`, the two last
 * dimensions must be the most minor, dims[-2] fastest (column-major
 * matrices, as LAPACK wants): HLO_UNIMPLEMENTED otherwise. */
HLO_MUST_USE hlo_status lk_to_physical(const hlo_op *op, uint32_t i, const tensor *x, bool matrix,
                                       uint8_t **out);
/* Like lk_to_physical for a matrix operand whose layout may be column-major
 * (*transposed = false) or row-major in its two last dimensions
 * (*transposed = true: the buffer holds the transposes, column-major). */
HLO_MUST_USE hlo_status lk_to_physical_any(const hlo_op *op, uint32_t i, const tensor *x,
                                           uint8_t **out, bool *transposed);
/* A new result tensor `i` of type rt from bytes `phys` laid out as
 * result_layouts says (absent: row-major). */
HLO_MUST_USE hlo_status lk_from_physical(const hlo_op *op, uint32_t i, const hlo_type *rt,
                                         uint8_t *phys, tensor **out);
/* Integer (or bool) entry `key` of the mhlo.backend_config dictionary;
 * false when absent or of another kind. */
bool lk_config_int(const hlo_op *op, const char *key, int64_t *v);
/* A ui8 character entry (uplo = 76 'L'), or `dflt`. */
char lk_config_char(const hlo_op *op, const char *key, char dflt);
/* A bool entry, or `dflt`. */
bool lk_config_bool(const hlo_op *op, const char *key, bool dflt);
/* The uplo option: 'uplo' (default 'L'), overridden by a boolean 'lower'. */
char lk_config_uplo(const hlo_op *op);
/* Checks that `x` is a float/complex matrix batch of the target's type;
 * sets *prec, *batch (product of the leading dimensions), *m, *n. */
HLO_MUST_USE hlo_status lk_matrix_operand(const hlo_op *op, const cc_target *t, const tensor *x,
                                          int *prec, int64_t *batch, int *m, int *n);
/* lk_matrix_operand for a batch of square n x n matrices: also
 * HLO_INVALID_ARGUMENT "matrix must be square". */
HLO_MUST_USE hlo_status lk_square_operand(const hlo_op *op, const cc_target *t, const tensor *x,
                                          int *prec, int64_t *batch, int *n);
/* HLO_INVALID_ARGUMENT unless the op has min..max results. */
HLO_MUST_USE hlo_status lk_check_results(const hlo_op *op, const cc_target *t, uint32_t min,
                                         uint32_t max);
/* Sets result i (an integer info/pivot array of `count` elements) from
 * vals (row-major batch order). */
HLO_MUST_USE hlo_status lk_int_result(const hlo_op *op, uint32_t i, const hlo_type *rt,
                                      const int *vals, int64_t count, tensor **out);
/* ------------------------------- LAPACK's error handler (interp_lapack_xerbla.c) */
/* Room for a routine name XERBLA reports (LAPACK's are at most 6 letters;
 * longer ones are cut). */
#define LK_XERBLA_NAME_MAX 32
/* hlo's overrides of reference LAPACK / BLAS's XERBLA and XERBLA_ARRAY
 * (gfortran ABI): they record the routine and the argument number in
 * thread-local state and return, never print, never exit. */
void xerbla_(const char *srname, const int *info, size_t srname_len);
void xerbla_array_(const char *srname_array, const int *srname_len, const int *info,
                   size_t elem_len);
/* Forgets this thread's XERBLA reports. */
void lk_xerbla_clear(void);
/* The number of XERBLA reports on this thread since lk_xerbla_clear (0:
 * none); the last one's routine name (NUL-terminated) to `name` and argument
 * number to `arg` (either may be NULL). Clears the state. */
int lk_xerbla_take(char name[LK_XERBLA_NAME_MAX], int *arg);
/* The optimal workspace size a LAPACK workspace query wrote to `wq` (its
 * first element, float or double by precision). */
double lk_workspace_size(int prec, const double *wq);
/* Sets results from..num_results-1 to zeros (optional info / workspace). */
HLO_MUST_USE hlo_status lk_zero_results(const hlo_op *op, const hlo_type *const *rt,
                                        uint32_t from, tensor **out);
/* A workspace after a query wrote `wq`: at least n (and 1) elements of
 * size es; sets *lwork and *work (the caller frees it). */
HLO_MUST_USE hlo_status lk_alloc_work(const hlo_op *op, int prec, const double *wq, int n,
                                      size_t es, int *lwork, uint8_t **work);
/* A workspace after a query wrote `wq`: max(optimal, min) + 1 elements of
 * size es (the SVD, ?geev and ?gees sizing); sets *lwork and *work (the
 * caller frees it). */
HLO_MUST_USE hlo_status lk_alloc_work_over(const hlo_op *op, int prec, const double *wq, int min,
                                           size_t es, int *lwork, uint8_t **work);
/* HLO_INVALID_ARGUMENT unless result i is a tensor of `dtype` with `count`
 * elements. */
HLO_MUST_USE hlo_status lk_check_result(const hlo_op *op, const cc_target *t, uint32_t i,
                                        const hlo_type *rt, hlo_dtype dtype, int64_t count);

/* ---------------------------------------------- kernels (interp_lapack.c) */
/* ?potrf: a -> (factor, info). */
hlo_status cc_potrf(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?getrf: a -> (lu, ipiv 1-based, info). */
hlo_status cc_getrf(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?trsm (interp_lapack_trsm.c: computed as OpenBLAS does, not with BLAS):
 * (a, b[, alpha]) -> x. */
hlo_status cc_trsm(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                   tensor **, const cc_target *);
/* ?geqrf: a -> (a, tau[, info, workspace]). */
hlo_status cc_geqrf(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?orgqr / ?ungqr: (a, tau) -> (q[, info, workspace]). */
hlo_status cc_orgqr(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?syevd / ?heevd (and the GPU syevd / syevj): a -> (v, w, info). */
hlo_status cc_syevd(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);

/* ------------------------------------------ kernels (interp_lapack_eig.c) */
/* ?gesvd: a -> (a, s, u, vt, info), mode 'A' / 'S' / 'N'. */
hlo_status cc_gesvd(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?gesdd: as cc_gesvd, with the divide-and-conquer routine. */
hlo_status cc_gesdd(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* GPU gesvd / gesdd (compute_uv, full_matrices, transposed): a -> (a, s, u,
 * vt, info); a row-major operand (transposed) is decomposed as its buffer. */
hlo_status cc_gpu_gesvd(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                        tensor **, const cc_target *);
/* GPU gesvdj / gesvdp: a -> (a, s, u, v, info) with V itself, not V^H. */
hlo_status cc_gpu_gesvdj(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                         tensor **, const cc_target *);
/* ?geev and the hybrid eigensolvers: a -> (wr, wi, vl, vr, info) for real
 * a (complex eigenvectors), (w, vl, vr, info) for complex a. */
hlo_status cc_geev(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                   tensor **, const cc_target *);
/* ?gees: a -> (t, vs, wr, wi, sdim, info) real, (t, vs, w, sdim, info)
 * complex. */
hlo_status cc_gees(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                   tensor **, const cc_target *);
/* ?gehrd: a -> (a, tau (n-1), info); options low, high. */
hlo_status cc_gehrd(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?sytrd / ?hetrd and GPU sytrd: a -> (a, d, e, tau, info). */
hlo_status cc_sytrd(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);

/* ------------------------------------------ kernels (interp_solver.c) */
/* ?gtsv: (dl, d, du, b) -> (dl, d, du, x, info). */
hlo_status cc_gtsv(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                   tensor **, const cc_target *);
/* cusparse / hipsparse gtsv2: (dl, d, du, b) -> x. */
hlo_status cc_gtsv2(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?geqp3 and hybrid geqp3: (a, jpvt) -> (a, jpvt, tau). */
hlo_status cc_geqp3(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);
/* ?ormqr / ?unmqr and GPU ormqr: (a, tau, c) -> c; options left, transpose. */
hlo_status cc_ormqr(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                    tensor **, const cc_target *);

/* ------------------------------------- kernels (interp_jaxlib_linalg.c) */
/* Perturbed tridiagonal solve (cpu and GPU targets): (dl, d, du, b) -> x;
 * near-singular pivots are perturbed as jaxlib does. */
hlo_status cc_tridiagonal_solve_perturbed(interp *, const hlo_op *, tensor *const *,
                                          const hlo_type *const *, tensor **, const cc_target *);
/* GPU rank-1 Cholesky update: (r, w) -> (r', w'), f32 / f64. */
hlo_status cc_cholesky_update(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                              tensor **, const cc_target *);
/* GPU syrk: (a, c, alpha, beta) -> c' (lower triangle of the row-major
 * result = alpha a a^T + beta c); option transpose. */
hlo_status cc_syrk(interp *, const hlo_op *, tensor *const *, const hlo_type *const *,
                   tensor **, const cc_target *);
/* Whether any of the `count` reals at `a` (f32 for precisions 0 and 2, f64
 * for 1 and 3; a complex element is two reals) is an infinity or a NaN. The
 * SVD kernels use it: LAPACK's ?gesdd reports a NaN as info = -4, but an
 * infinity sends ?gesdd and ?gesvd into an endless QR iteration. */
bool lk_has_non_finite(int prec, const uint8_t *a, size_t count);

#endif
