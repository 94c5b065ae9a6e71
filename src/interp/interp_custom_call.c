/* interp_custom_call.c — stablehlo.custom_call: dispatch on call_target_name.
 *
 *   check.*                        -> interp_check_custom_call (interp_check.c)
 * Linear algebra as JAX 0.10 lowers it for cpu, cuda and rocm, all computed
 * on the CPU with the reference LAPACK / BLAS (kernels in interp_lapack.c,
 * interp_lapack_eig.c, interp_solver.c, interp_jaxlib_linalg.c; conventions of jaxlib's FFI
 * handlers, see interp_lapack.h):
 *   lapack_{s,d,c,z}potrf_ffi, cusolver_/hipsolver_potrf_ffi   Cholesky (?potrf)
 *   lapack_{s,d,c,z}getrf_ffi, cusolver_/hipsolver_getrf_ffi   LU (?getrf)
 *   lapack_{s,d,c,z}trsm_ffi       triangular solve (interp_lapack_trsm.c: as
 *                                  OpenBLAS's ?trsm computes it, not BLAS)
 *   lapack_{s,d,c,z}geqrf_ffi, cusolver_/hipsolver_geqrf_ffi   QR (?geqrf)
 *   lapack_{s,d}orgqr_ffi, lapack_{c,z}ungqr_ffi, cusolver_/hipsolver_orgqr_ffi
 *                                  Q from QR (?orgqr / ?ungqr)
 *   lapack_{s,d}ormqr_ffi, lapack_{c,z}unmqr_ffi, cusolver_/hipsolver_ormqr_ffi
 *                                  apply Q (?ormqr / ?unmqr)
 *   lapack_{s,d,c,z}geqp3_ffi, cuhybrid_/hiphybrid_geqp3   pivoted QR (?geqp3)
 *   lapack_{s,d}syevd_ffi, lapack_{c,z}heevd_ffi, cusolver_/hipsolver_syevd_ffi
 *                                  symmetric eigensolver (?syevd / ?heevd);
 *                                  the GPU call's algorithm = 2 (Jacobi, syevj)
 *                                  is computed with divide and conquer too
 *   lapack_{s,d,c,z}gesdd_ffi, hipsolver_gesdd_ffi   SVD (?gesdd)
 *   lapack_{s,d,c,z}gesvd_ffi, cusolver_/hipsolver_gesvd_ffi   SVD (?gesvd)
 *   cusolver_/hipsolver_gesvdj_ffi, cusolver_/hipsolver_gesvdp_ffi
 *                                  Jacobi / polar SVD: computed with ?gesdd
 *                                  (the same decomposition; V returned, not V^H)
 *   lapack_{s,d,c,z}geev_ffi, {cu,hip}hybrid_eig_{real,comp}   eigen (?geev)
 *   lapack_{s,d,c,z}gees_ffi       Schur (?gees)
 *   lapack_{s,d,c,z}gehrd_ffi      Hessenberg (?gehrd)
 *   lapack_{s,d}sytrd_ffi, lapack_{c,z}hetrd_ffi, cusolver_/hipsolver_sytrd_ffi
 *                                  tridiagonal reduction (?sytrd / ?hetrd)
 *   lapack_{s,d,c,z}gtsv_ffi, cusparse_/hipsparse_gtsv2_ffi   tridiagonal solve
 *   cu_/hip_lu_pivots_to_permutation   LU pivots -> permutation
 *   tridiagonal_solve_perturbed_ffi, cu_/hip_tridiagonal_solve_perturbed
 *                                  tridiagonal solve perturbing tiny pivots
 *   cu_/hip_cholesky_update_ffi    rank-1 Cholesky update (Givens rotations)
 *   cusolver_/hipsolver_syrk_ffi   symmetric rank-k update (BLAS ?syrk)
 *                                  (these three: interp_jaxlib_linalg.c)
 * Sharding, SPMDFullToShardShape, SPMDShardToFullShape,
 * annotate_device_placement, MoveToHost, MoveToDevice   identity (1 device)
 * Host callbacks into Python (xla_ffi_python_cpu_callback, ...; from
 * jax.debug.print, jax.debug.callback, jax.pure_callback, io_callback): a
 * call whose results are only tokens or empty tuples is skipped with one
 * warning per target and executable on stderr (interp_first_time: state
 * of the interpreter family, not of this file); one whose results carry values
 * fails, naming the JAX feature (a C program cannot call into a Python
 * process that is gone). hlo.jit (python/hlo) runs them: it renames the
 * calls of each lowering to its own registered target
 * (python/hlo/_callback.py), so these stubs only see programs from text.
 *
 * Handlers registered through the public API (hlo_custom_call_register,
 * custom_call_registry.c) come first: a target registered for the host
 * platform ("cpu") or for "*" runs its handler (run_registered) instead of
 * any built-in one of that name; check.* cannot be registered.
 *
 * An unknown target fails with HLO_NOT_FOUND when the call is executed: a
 * short message naming the target, the platforms that do have a handler for
 * it when one is registered elsewhere, else the closest known name if one
 * is near, and the families of known targets; CustomSPMDPartitioning (a
 * Python custom_partitioning rule) fails with HLO_UNIMPLEMENTED saying so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/custom_call_registry.h"
#include "interp/interp.h"
#include "interp/interp_lapack.h"
#include "interp/interp_util.h"
#include "ir/element.h"
#include "ir/print.h"
#include "support/arena.h"
#include "support/strbuf.h"

/* cu_lu_pivots_to_permutation / hip_lu_pivots_to_permutation: pivots (..., k), 0-based row swaps applied
 * in order to iota(m), give the permutation (..., m) (jaxlib
 * gpu/linalg_kernels: LuPivotsToPermutation). */
static hlo_status cc_lu_perm(interp *it, const hlo_op *op, tensor *const *in,
                             const hlo_type *const *rt, tensor **out, const cc_target *t) {
  HLO_TRY(lk_check_results(op, t, 1, 1));
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


/* ------------------------------------------------------ host callbacks */

/* Whether value type `t` carries no data: a token or a tuple of such. */
static bool carries_nothing(const hlo_type *t) {
  if (t->kind == TYPE_TOKEN) return true;
  if (t->kind != TYPE_TUPLE) return false;
  for (uint32_t i = 0; i < t->num_elems; i++)
    if (!carries_nothing(t->elems[i])) return false;
  return true;
}

/* A new value of a type that carries nothing (token, tuple of tokens). */
static hlo_status empty_value(const hlo_op *op, const hlo_type *t, tensor **out) {
  if (t->kind != TYPE_TUPLE) return tensor_create(t, &op->loc, out);
  tensor *el[16];
  if (t->num_elems > 16)
    return interp_error(op, HLO_UNIMPLEMENTED, "a tuple of over 16 tokens");
  hlo_status st = NULL;
  uint32_t n = 0;
  for (; n < t->num_elems && !st; n++) st = empty_value(op, t->elems[n], &el[n]);
  if (st) n--;
  if (!st) st = tensor_create_tuple(t, el, n, &op->loc, out);
  iu_release_all(el, n);
  return st;
}

/* A host callback into Python (jax.debug.print / debug.callback /
 * pure_callback / io_callback). One whose results carry no data is skipped
 * (a warning on stderr, once per target and executable); one whose results are
 * data fails with HLO_UNIMPLEMENTED naming the JAX feature. */
static hlo_status cc_callback(interp *it, const hlo_op *op, tensor *const *in,
                              const hlo_type *const *rt, tensor **out, const cc_target *t) {
  bool data = false;
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!carries_nothing(rt[i])) data = true;
  if (data) {
    const hlo_attr *se = op_attr(op, "has_side_effect");
    bool side = se && ((se->kind == ATTR_BOOL && se->u.b) || se->kind == ATTR_UNIT);
    return interp_error(op, HLO_UNIMPLEMENTED,
                        "%s: a host callback into Python (from %s) whose results the program "
                        "uses; hlo cannot call back into a Python process that is gone (hlo.jit "
                        "of hlo's Python package runs such callbacks in-process)",
                        t->name,
                        side ? "jax.experimental.io_callback or jax.debug.callback"
                             : "jax.pure_callback");
  }
  if (interp_first_time(it, t->name)) {
    const hlo_source *s = op->loc.src;
    fprintf(stderr,
            "%s:%u:%u: warning: skipping host callback '%s' (from jax.debug.print, "
            "jax.debug.callback or io_callback; it returns no data, only tokens or nothing): "
            "hlo cannot call back into Python\n",
            s && s->name ? s->name : "<input>", op->loc.line, op->loc.col, t->name);
  }
  for (uint32_t i = 0; i < op->num_results; i++) {
    hlo_status st = empty_value(op, rt[i], &out[i]);
    if (st) {
      iu_release_all(out, i);
      return st;
    }
  }
  return NULL;
}

#define LAPACK4(op, fn)                                                                   \
  {"lapack_s" op "_ffi", fn, HLO_F32}, {"lapack_d" op "_ffi", fn, HLO_F64},              \
      {"lapack_c" op "_ffi", fn, HLO_C64}, {                                              \
    "lapack_z" op "_ffi", fn, HLO_C128                                                    \
  }

#define GPU2(op, fn)                                                                       \
  {"cusolver_" op "_ffi", fn, HLO_DTYPE_COUNT}, {                                          \
    "hipsolver_" op "_ffi", fn, HLO_DTYPE_COUNT                                            \
  }

static const cc_target targets[] = {
    LAPACK4("potrf", cc_potrf),
    LAPACK4("getrf", cc_getrf),
    LAPACK4("trsm", cc_trsm),
    LAPACK4("geqrf", cc_geqrf),
    LAPACK4("geqp3", cc_geqp3),
    LAPACK4("gesdd", cc_gesdd),
    LAPACK4("gesvd", cc_gesvd),
    LAPACK4("geev", cc_geev),
    LAPACK4("gees", cc_gees),
    LAPACK4("gehrd", cc_gehrd),
    LAPACK4("gtsv", cc_gtsv),
    {"lapack_sorgqr_ffi", cc_orgqr, HLO_F32},
    {"lapack_dorgqr_ffi", cc_orgqr, HLO_F64},
    {"lapack_cungqr_ffi", cc_orgqr, HLO_C64},
    {"lapack_zungqr_ffi", cc_orgqr, HLO_C128},
    {"lapack_sormqr_ffi", cc_ormqr, HLO_F32},
    {"lapack_dormqr_ffi", cc_ormqr, HLO_F64},
    {"lapack_cunmqr_ffi", cc_ormqr, HLO_C64},
    {"lapack_zunmqr_ffi", cc_ormqr, HLO_C128},
    {"lapack_ssyevd_ffi", cc_syevd, HLO_F32},
    {"lapack_dsyevd_ffi", cc_syevd, HLO_F64},
    {"lapack_cheevd_ffi", cc_syevd, HLO_C64},
    {"lapack_zheevd_ffi", cc_syevd, HLO_C128},
    {"lapack_ssytrd_ffi", cc_sytrd, HLO_F32},
    {"lapack_dsytrd_ffi", cc_sytrd, HLO_F64},
    {"lapack_chetrd_ffi", cc_sytrd, HLO_C64},
    {"lapack_zhetrd_ffi", cc_sytrd, HLO_C128},
    GPU2("potrf", cc_potrf),
    GPU2("getrf", cc_getrf),
    GPU2("geqrf", cc_geqrf),
    GPU2("orgqr", cc_orgqr),
    GPU2("ormqr", cc_ormqr),
    GPU2("syevd", cc_syevd),
    GPU2("sytrd", cc_sytrd),
    GPU2("gesvd", cc_gpu_gesvd),
    GPU2("gesvdj", cc_gpu_gesvdj),
    GPU2("gesvdp", cc_gpu_gesvdj),
    {"hipsolver_gesdd_ffi", cc_gpu_gesvd, HLO_DTYPE_COUNT},
    {"cuhybrid_eig_real", cc_geev, HLO_DTYPE_COUNT},
    {"cuhybrid_eig_comp", cc_geev, HLO_DTYPE_COUNT},
    {"hiphybrid_eig_real", cc_geev, HLO_DTYPE_COUNT},
    {"hiphybrid_eig_comp", cc_geev, HLO_DTYPE_COUNT},
    {"cuhybrid_geqp3", cc_geqp3, HLO_DTYPE_COUNT},
    {"hiphybrid_geqp3", cc_geqp3, HLO_DTYPE_COUNT},
    GPU2("syrk", cc_syrk),
    {"cusparse_gtsv2_ffi", cc_gtsv2, HLO_DTYPE_COUNT},
    {"hipsparse_gtsv2_ffi", cc_gtsv2, HLO_DTYPE_COUNT},
    {"tridiagonal_solve_perturbed_ffi", cc_tridiagonal_solve_perturbed, HLO_DTYPE_COUNT},
    {"cu_tridiagonal_solve_perturbed", cc_tridiagonal_solve_perturbed, HLO_DTYPE_COUNT},
    {"hip_tridiagonal_solve_perturbed", cc_tridiagonal_solve_perturbed, HLO_DTYPE_COUNT},
    {"cu_cholesky_update_ffi", cc_cholesky_update, HLO_DTYPE_COUNT},
    {"hip_cholesky_update_ffi", cc_cholesky_update, HLO_DTYPE_COUNT},
    {"cu_lu_pivots_to_permutation", cc_lu_perm, HLO_DTYPE_COUNT},
    {"hip_lu_pivots_to_permutation", cc_lu_perm, HLO_DTYPE_COUNT},
    {"xla_ffi_python_cpu_callback", cc_callback, HLO_DTYPE_COUNT},
    {"xla_ffi_python_gpu_callback", cc_callback, HLO_DTYPE_COUNT},
    {"xla_ffi_partitioned_python_cpu_callback", cc_callback, HLO_DTYPE_COUNT},
    {"xla_ffi_partitioned_python_gpu_callback", cc_callback, HLO_DTYPE_COUNT},
    {"xla_python_cpu_callback", cc_callback, HLO_DTYPE_COUNT},
    {"xla_python_gpu_callback", cc_callback, HLO_DTYPE_COUNT},
    {"Sharding", cc_identity, HLO_DTYPE_COUNT},
    {"SPMDFullToShardShape", cc_identity, HLO_DTYPE_COUNT},
    {"SPMDShardToFullShape", cc_identity, HLO_DTYPE_COUNT},
    {"annotate_device_placement", cc_identity, HLO_DTYPE_COUNT},
    {"MoveToHost", cc_identity, HLO_DTYPE_COUNT},
    {"MoveToDevice", cc_identity, HLO_DTYPE_COUNT},
};

bool interp_custom_call_known(const char *name) {
  if (!strncmp(name, "check.", 6)) return true;
  if (custom_call_registry_platforms(name, strlen(name), NULL, 0)) return true;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (!strcmp(targets[i].name, name)) return true;
  return false;
}

/* ------------------------------------------------------ registered handlers */

/* The view of operand or result value `t` of type `ty` for a handler: a
 * tensor's dtype, rank, dims and data; a token's HLO_RANK_TOKEN. Tuples
 * (and anything else) give false. */
static bool handler_view(const hlo_type *ty, tensor *t, hlo_buffer_view *v) {
  if (ty->kind == TYPE_TOKEN) {
    *v = (hlo_buffer_view){HLO_DTYPE_COUNT, HLO_RANK_TOKEN, NULL, NULL};
    return true;
  }
  if (ty->kind != TYPE_TENSOR) return false;
  *v = (hlo_buffer_view){ty->dtype, (int)ty->rank, ty->dims, t ? t->data : NULL};
  return true;
}

/* The configuration a handler sees (hlo_custom_call_info.backend_config):
 * a non-empty `backend_config` string as it is; else a dictionary
 * (`backend_config` or `mhlo.backend_config`) printed as MLIR text; else "".
 * Printed text goes to `sb` (the caller frees it). */
static void handler_config(const hlo_op *op, strbuf *sb, const char **out, size_t *out_len) {
  const hlo_attr *a = op_attr(op, "backend_config");
  if (a && a->kind == ATTR_STRING && a->u.str.len) {
    *out = a->u.str.s;
    *out_len = a->u.str.len;
    return;
  }
  if (!a || a->kind != ATTR_DICT) a = op_attr(op, "mhlo.backend_config");
  if (a && (a->kind == ATTR_DICT || a->kind == ATTR_STRING || a->kind == ATTR_OPAQUE)) {
    if (a->kind == ATTR_DICT) {
      print_attr(sb, a);
      *out = sb_cstr(sb);
      *out_len = sb->len;
    } else {
      *out = a->u.str.s;
      *out_len = a->u.str.len;
    }
    return;
  }
  *out = "";
  *out_len = 0;
}

/* Runs a custom call through the registered handler `reg` (held by the
 * caller): makes the results (zeroed tensors of the result types; tokens;
 * a result that output_operand_aliases ties to an operand starts as a copy
 * of it), hands the handler views of the operands and results, and turns its error
 * into one located at the op naming the target. Errors: HLO_UNIMPLEMENTED
 * for a tuple operand or result; HLO_RESOURCE_EXHAUSTED; the handler's. */
static hlo_status run_registered(const hlo_op *op, cc_registration *reg, const char *name,
                                 size_t len, tensor *const *in, const hlo_type *const *rt,
                                 tensor **out) {
  uint32_t no = op->num_operands, nr = op->num_results;
  hlo_buffer_view small[16];
  hlo_buffer_view *views = no + nr <= 16 ? small : malloc((no + nr) * sizeof *views);
  if (!views) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  hlo_status st = NULL;
  uint32_t made = 0;
  for (uint32_t i = 0; i < no && !st; i++)
    if (!in[i] || !handler_view(in[i]->type, in[i], &views[i]))
      st = interp_error(op, HLO_UNIMPLEMENTED,
                        "custom_call '%.*s': operand %u is a tuple; registered handlers take "
                        "tensors and tokens", (int)len, name, i);
  for (; made < nr && !st; made++) {
    if (rt[made]->kind != TYPE_TENSOR && rt[made]->kind != TYPE_TOKEN) {
      st = interp_error(op, HLO_UNIMPLEMENTED,
                        "custom_call '%.*s': result %u is a tuple; registered handlers fill "
                        "tensors and tokens", (int)len, name, made);
      break;
    }
    st = tensor_create(rt[made], &op->loc, &out[made]);
    if (st) break;
    handler_view(rt[made], out[made], &views[no + made]);
  }
  /* output_operand_aliases: the result starts as its operand's value (XLA
   * hands the handler the operand's own buffer: an in-place update) */
  for (uint32_t k = 0; !st && k < custom_call_num_aliases(op); k++) {
    int64_t r, o;
    if (!custom_call_alias(op, k, &r, &o) || r < 0 || r >= (int64_t)nr || o < 0 ||
        o >= (int64_t)no || !in[o] || !out[r] || in[o]->nbytes != out[r]->nbytes)
      st = interp_error(op, HLO_UNIMPLEMENTED,
                        "custom_call '%.*s': output_operand_aliases entry %u (a path into a "
                        "tuple, or types that differ) is not supported for registered handlers",
                        (int)len, name, k);
    else if (out[r]->nbytes)
      memcpy(out[r]->data, in[o]->data, out[r]->nbytes);
  }
  if (!st) {
    strbuf sb;
    sb_init(&sb);
    hlo_custom_call_info info = {0};
    info.target = name;   /* the attribute's text is NUL-terminated in the arena */
    info.platform = CUSTOM_CALL_PLATFORM_HOST;
    handler_config(op, &sb, &info.backend_config, &info.backend_config_len);
    info.api_version = (int)op_attr_int(op, "api_version", 1);
    info.has_side_effect = op_attr_bool(op, "has_side_effect", false);
    info.file = op->loc.src ? op->loc.src->name : NULL;
    info.line = op->loc.line;
    info.column = op->loc.col;
    if (sb.oom) {
      st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      hlo_status hs = custom_call_registry_call(reg, &info, views, (int)no, views + no, (int)nr);
      if (hs) {
        hlo_status_code code = hlo_status_code_of(hs);
        st = interp_error(op, code == HLO_OK ? HLO_INTERNAL : code,
                          "@%.*s: %s", (int)len, name,
                          hlo_status_message(hs) ? hlo_status_message(hs) : "");
        hlo_status_free(hs);
      }
    }
    sb_free(&sb);
  }
  if (views != small) free(views);
  if (st) iu_release_all(out, made);
  return st;
}

/* ------------------------------------------------------ unknown targets */

/* Edit distance (insertions, deletions, substitutions) between a[0..n) and
 * b[0..m), case-insensitive; stops early (returns > cap) past `cap`. */
static size_t edit_distance(const char *a, size_t n, const char *b, size_t m, size_t cap) {
  size_t row[128];
  if (m >= sizeof row / sizeof row[0] || n > m + cap || m > n + cap) return cap + 1;
  for (size_t j = 0; j <= m; j++) row[j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t diag = row[0], best;
    row[0] = best = i;
    for (size_t j = 1; j <= m; j++) {
      size_t up = row[j];
      int ca = a[i - 1], cb = b[j - 1];
      if (ca >= 'A' && ca <= 'Z') ca += 'a' - 'A';
      if (cb >= 'A' && cb <= 'Z') cb += 'a' - 'A';
      size_t v = diag + (ca != cb);
      if (up + 1 < v) v = up + 1;
      if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
      row[j] = v;
      diag = up;
      if (v < best) best = v;
    }
    if (best > cap) return cap + 1;
  }
  return row[m];
}

/* The error for a target no kernel handles: its name, the closest known
 * name when one is near (at most a quarter of the letters differ, at least
 * 2), and the families of known targets. CustomSPMDPartitioning
 * (jax.experimental.custom_partitioning) gets its own explanation. */
static hlo_status unknown_target(const hlo_op *op, const char *name, size_t len) {
  int shown = (int)(len > 120 ? 120 : len);
  if (len == 22 && !memcmp(name, "CustomSPMDPartitioning", 22))
    return interp_error(op, HLO_UNIMPLEMENTED,
                        "custom_call target 'CustomSPMDPartitioning' is a Python rule from "
                        "jax.experimental.custom_partitioning (its backend_config is the id of "
                        "a Python object in the process that traced it): only JAX can run it; "
                        "export the function without custom_partitioning");
  char platforms[64];
  if (custom_call_registry_platforms(name, len, platforms, sizeof platforms))
    return interp_error(op, HLO_NOT_FOUND,
                        "custom_call target '%.*s' has a handler registered for platform %s "
                        "only; this call runs on platform '%s' (register it for '%s' or '*')",
                        shown, name, platforms, CUSTOM_CALL_PLATFORM_HOST,
                        CUSTOM_CALL_PLATFORM_HOST);
  size_t cap = len / 4 > 2 ? len / 4 : 2, best = cap + 1;
  const char *near = NULL;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    size_t d = edit_distance(name, len, targets[i].name, strlen(targets[i].name), cap);
    if (d < best) best = d, near = targets[i].name;
  }
  return interp_error(op, HLO_NOT_FOUND,
                      "custom_call target '%.*s' is not registered%s%s%s (known: jaxlib's "
                      "lapack_*_ffi, cusolver_* / hipsolver_*, cuhybrid_* / hiphybrid_*, "
                      "cusparse_* / hipsparse_*, cu_* / hip_* linear algebra; Python host "
                      "callbacks; Sharding, SPMD*, MoveTo*, annotate_device_placement; "
                      "check.*; or a handler registered with hlo_custom_call_register)",
                      shown, name, near ? "; did you mean '" : "", near ? near : "",
                      near ? "'?" : "");
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
  cc_registration *reg = custom_call_registry_acquire(name, len, CUSTOM_CALL_PLATFORM_HOST);
  if (reg) {
    hlo_status st = run_registered(op, reg, name, len, in, rt, out);
    custom_call_registry_release(reg);
    return st;
  }
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    if (strlen(targets[i].name) == len && !memcmp(targets[i].name, name, len)) {
      /* LAPACK's XERBLA reports (hlo's override records them and returns):
       * the kernel has already put the routine's info into its info result,
       * as jaxlib does; a report left over would only describe this call. */
      lk_xerbla_clear();
      hlo_status st = targets[i].fn(it, op, in, rt, out, &targets[i]);
      (void)lk_xerbla_take(NULL, NULL);
      return st;
    }
  }
  return unknown_target(op, name, len);
}

void interp_register_custom_call(interp_kernel *table) {
  if (!table[OP_CUSTOM_CALL]) table[OP_CUSTOM_CALL] = k_custom_call;
}