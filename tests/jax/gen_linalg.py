#!/usr/bin/env python3
"""gen_linalg.py — fixtures tests/jax/linalg/CASE: linear algebra as JAX
lowers it for "cpu", "cuda" and "rocm" (custom calls lapack_*_ffi,
cusolver_* / hipsolver_*, cusparse_gtsv2_ffi, *hybrid_eig*, ...), run by
tests/suite_jax.sh.

Each case is one function of jnp.linalg / jax.scipy.linalg / jax.lax.linalg
(FUNCS below), one element type and batch shape, lowered on this CPU-only
machine with jax.jit(f).trace(*args).lower(lowering_platforms=(PLATFORM,)):
  CASE = FUNC_DTYPE_PLATFORM
  program.mlir   the lowered module's text
  inputs/argK.npy  the arguments (seeded random, well conditioned)
  expected/outK.npy  XLA:CPU's result of the *cpu* lowering (jax.jit(f) on
                 this machine's jaxlib), also for the cuda / rocm programs:
                 a program lowered for a GPU must compute the same values
  cmp            --rtol 1e-4 (f32, c64) or 1e-10 (f64, c128); --exact for
                 the real *_singular cases (inf beside finite values)
Bad-data cases (*_nan: a NaN in the matrix; *_singular: exactly singular
matrices) take their input from SPECIAL_INPUT; see the comment there.
Where a decomposition is not unique (eigenvector and singular vector signs
or phases, Schur vectors), the function returns something that is: values,
reconstructions (Q R, U S V^H, V diag(w) V^-1), projectors, absolute values.
Every dtype runs on cpu (lapack_s/d/c/z targets); cuda and rocm take two
each (their targets are type-generic), so every target sees every type.
Exceptions: functions lowered to a custom call on one platform only
(ONLY_ON: symmetric_product -> cusolver_syrk_ffi and cholesky_update ->
cu_cholesky_update_ffi, both real-only in JAX) get that platform only, with
every type; eigh_tridiagonal (no custom call anywhere) runs on cpu only.
tridiagonal_solve_perturbed (tridiagonal_solve(perturb_singular=True):
tridiagonal_solve_perturbed_ffi, cu_ / hip_tridiagonal_solve_perturbed)
solves a regular system and an exactly singular one, whose zero pivot jaxlib
perturbs (the values are then ~1 / (eps * max|U|), compared norm-wise).
The cases of KEEP_COMPLEX store complex results as complex (npycmp's complex
--rtol); the older ones store them as (..., 2) real (re, im) pairs.

usage: python3 tests/jax/gen_linalg.py [FUNC...]   (rewrites tests/jax/linalg/;
       with FUNC names, only those functions' cases)
"""
import os
import shutil
import sys
import zlib

import numpy as np
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax import lax
from jax._src.lax.linalg import geqrf  # not exported by jax.lax.linalg

jax.config.update("jax_enable_x64", True)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg")
SVD = lax.linalg.SvdAlgorithm


def mT(a):
  return jnp.swapaxes(a, -1, -2)


def mH(a):
  return jnp.conj(mT(a))


def spd(a):
  n = a.shape[-1]
  return a @ mH(a) + n * jnp.eye(n, dtype=a.dtype)


def herm(a):
  return (a + mH(a)) / 2


def svd_recon(u, s, vh):
  return (u * s[..., None, :].astype(u.dtype)) @ vh


def eig_recon(a):
  w, v = jnp.linalg.eig(a)
  return v @ (w[..., :, None] * jnp.linalg.inv(v)), jnp.sort_complex(w)


def sorted_c(w):
  return jnp.sort_complex(w.astype(jnp.complex128))


def tri_args(a):
  # (dl, d, du, b) of a diagonally dominant tridiagonal system; JAX's
  # convention: dl[0] = 0, du[-1] = 0.
  n = a.shape[-1]
  dl = a[..., 0, :].at[..., 0].set(0)
  du = a[..., 1, :].at[..., n - 1].set(0)
  d = a[..., 2, :] + 4
  return dl, d, du, a[..., :, :2]


def tri_singular_args(a):
  # An exactly singular tridiagonal matrix: rows 2 and 3 are both
  # (0, 0, 1, 1), so elimination ends on a zero pivot and
  # perturb_singular=True perturbs it (jaxlib's MaybePerturbPivot) instead of
  # returning NaN. (Not rows 0 and 1: their zero pivot would be swapped down
  # and its sign, which picks the perturbation's sign, would depend on how
  # complex division rounds signed zeros.)
  dl, d, du, b = tri_args(a)
  one = jnp.ones_like(d[..., :1])
  dl = dl.at[..., 2:4].set(jnp.concatenate([0 * one, one], -1))
  d = d.at[..., 2:4].set(jnp.concatenate([one, one], -1))
  du = du.at[..., 2:3].set(one)
  return dl, d, du, b


def upper_cholesky(a):
  return mT(jnp.linalg.cholesky(spd(a)))


# name -> (function of one square matrix a (..., 4, 4), kinds it takes,
#          batched allowed)
FUNCS = {
    "cholesky": (lambda a: jnp.linalg.cholesky(spd(a)), True),
    "cho_solve": (lambda a: jsl.cho_solve(jsl.cho_factor(spd(a)), a[..., :2]), True),
    "qr": (lambda a: (lambda q, r: (q @ r, jnp.abs(r)))(*jnp.linalg.qr(a)), True),
    "qr_complete": (lambda a: (lambda q, r: (q @ r, mH(q) @ q))(
        *jnp.linalg.qr(a[..., :3], mode="complete")), True),
    "qr_r": (lambda a: jnp.abs(jnp.linalg.qr(a, mode="r")), True),
    "qr_pivoting": (lambda a: (lambda q, r, p: (q @ r, p))(*jsl.qr(a, pivoting=True)), False),
    "householder_product": (lambda a: lax.linalg.householder_product(
        *geqrf(a)), True),
    "svd": (lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s, mH(u) @ u))(
        *jnp.linalg.svd(a)), True),
    "svd_reduced": (lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s))(
        *jnp.linalg.svd(a[..., :3, :], full_matrices=False)), True),
    "svd_wide": (lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s))(
        *jnp.linalg.svd(a[..., :2, :], full_matrices=False)), True),
    "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), True),
    "svd_qr": (lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s))(
        *lax.linalg.svd(a, algorithm=SVD.QR)), True),
    "svd_qr_wide": (lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s))(
        *lax.linalg.svd(a[..., :3, :], full_matrices=False, algorithm=SVD.QR)), True),
    "pinv": (lambda a: jnp.linalg.pinv(a), True),
    "matrix_rank": (lambda a: jnp.linalg.matrix_rank(a), True),
    "lstsq": (lambda a: jnp.linalg.lstsq(a[:, :3], a[:, 3])[0], False),
    "eigh": (lambda a: (lambda w, v: (w, (v * w[..., None, :].astype(v.dtype)) @ mH(v)))(
        *jnp.linalg.eigh(herm(a))), True),
    "eigvalsh": (lambda a: jnp.linalg.eigvalsh(herm(a)), True),
    "eig": (eig_recon, True),
    "eigvals": (lambda a: sorted_c(jnp.linalg.eigvals(a)), True),
    "eig_left": (lambda a: (lambda w, vl, vr: (sorted_c(w), jnp.abs(
        jnp.sum(mH(vl) @ a @ vr, axis=-1))))(*lax.linalg.eig(a)), False),
    "inv": (jnp.linalg.inv, True),
    "solve": (lambda a: jnp.linalg.solve(a, a[..., :2] + 1), True),
    "det": (jnp.linalg.det, True),
    "slogdet": (lambda a: tuple(jnp.linalg.slogdet(a)), True),
    "lu": (lambda a: jsl.lu(a), False),
    "lu_solve": (lambda a: jsl.lu_solve(jsl.lu_factor(a), a[:, 0]), False),
    "solve_triangular": (lambda a: jsl.solve_triangular(a + 4 * jnp.eye(4, dtype=a.dtype),
                                                        a[..., :2], lower=True), True),
    "expm": (jsl.expm, False),
    "schur": (lambda a: (lambda t, z: (z @ t @ mH(z), sorted_c(jnp.diagonal(t)) if
                                       jnp.iscomplexobj(t) else jnp.abs(t[0, 0])))(
        *jsl.schur(a)), False),
    "sqrtm": (lambda a: jsl.sqrtm(spd(a)), False),
    "hessenberg": (lambda a: (lambda h, q: (q @ h @ mH(q), jnp.abs(h)))(
        *jsl.hessenberg(a, calc_q=True)), False),
    "polar": (lambda a: jsl.polar(a), False),
    "tridiagonal": (lambda a: (lambda arr, d, e, tau: (d, jnp.abs(e)))(
        *lax.linalg.tridiagonal(herm(a))), True),
    "eigh_tridiagonal": (lambda a: jsl.eigh_tridiagonal(
        jnp.real(a[0]), jnp.real(a[1, :3]), eigvals_only=True), False),
    "tridiagonal_solve": (lambda a: lax.linalg.tridiagonal_solve(*tri_args(a)), True),
    "tridiagonal_solve_perturbed": (lambda a: (
        lax.linalg.tridiagonal_solve(*tri_args(a), perturb_singular=True),
        lax.linalg.tridiagonal_solve(*tri_singular_args(a), perturb_singular=True)), True),
    # cuda lowers these two to cusolver_syrk_ffi / cu_cholesky_update_ffi
    # (cpu and rocm to plain HLO: see ONLY_ON). symmetrize_output: the GPU
    # kernel fills only the lower triangle.
    "symmetric_product": (lambda a: lax.linalg.symmetric_product(
        a[..., :3], a + mT(a), alpha=2.0, beta=0.5, symmetrize_output=True), True),
    "cholesky_update": (lambda a: lax.linalg.cholesky_update(upper_cholesky(a), a[0]), False),
}
# GPU-only algorithms: the expected value is XLA:CPU's for the function of
# REF (the CPU cannot lower these algorithms; the values are the same).
FUNCS.update({
    "svd_polar": (lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s))(
        *lax.linalg.svd(a, algorithm=SVD.POLAR)), True),
    "svd_dc": (lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s))(
        *lax.linalg.svd(a[..., :3], full_matrices=False,
                        algorithm=SVD.DIVIDE_AND_CONQUER)), True),
    "svdvals_qr": (lambda a: lax.linalg.svd(a, compute_uv=False, algorithm=SVD.QR), True),
    "eigh_jacobi": (lambda a: (lambda v, w: (w, (v * w[..., None, :].astype(v.dtype)) @ mH(v)))(
        *lax.linalg.eigh(herm(a), implementation=lax.linalg.EighImplementation.JACOBI)), True),
    "ormqr": (lambda a: (lambda r, tau: (
        lax.linalg.ormqr(r, tau, a[..., :2] + 1, left=True, transpose=False),
        lax.linalg.ormqr(r, tau, a[..., :2, :] + 1, left=False, transpose=True)))(
            *geqrf(a)), True),
})
# Bad data (tests of jaxlib's info convention): the input of these cases
# comes from SPECIAL_INPUT, not make_input. *_nan: the matrix (the first of a
# batch; the second stays finite) holds a NaN. LAPACK reports it through
# info (?gesdd: -4 from its NaN check; ?geev: ?gebal calls XERBLA, whose
# reference version would exit the process: hlo overrides it) and JAX's
# wrappers replace the results of a matrix whose info != 0 with NaN.
# *_singular: an exactly singular matrix (batch: integer entries, then
# zeros) through getrf + trsm: XLA:CPU gives NaN / inf, because OpenBLAS's
# trsm multiplies by the reciprocal of a zero pivot where reference BLAS
# skips zero right-hand sides.
FUNCS.update({
    "eig_nan": (lambda a: jnp.linalg.eig(a), True),
    "eigvals_nan": (lambda a: sorted_c(jnp.linalg.eigvals(a)), True),
    "svd_nan": (lambda a: jnp.linalg.svd(a), True),
    "svdvals_nan": (lambda a: jnp.linalg.svd(a, compute_uv=False), True),
    "pinv_nan": (jnp.linalg.pinv, True),
    "norm2_nan": (lambda a: (jnp.linalg.norm(a, 2, axis=(-2, -1)),
                             jnp.linalg.matrix_rank(a)), True),
    "lstsq_nan": (lambda a: jnp.linalg.lstsq(a[:, :3], a[:, 3]), False),
    "inv_singular": (jnp.linalg.inv, True),
    "solve_singular": (lambda a: jnp.linalg.solve(a, a[..., :2] + 1), True),
})


def nan_input(name, dtype, batch):
  a = make_input(name, dtype, batch)
  a[(0,) * len(batch) + (1, 2)] = np.nan
  return a


def singular_input(name, dtype, batch):
  # [[1, 2, 3], [2, 4, 6], [1, 1, 1]] (the newcomer's) bordered to 4 x 4, and
  # zeros(4, 4) as the second matrix of a batch.
  s = np.array([[1, 2, 3, 0], [2, 4, 6, 0], [1, 1, 1, 0], [0, 0, 0, 1]], dtype)
  return np.stack([s, np.zeros_like(s)]) if batch else s


SPECIAL_INPUT = {n: nan_input for n in FUNCS if n.endswith("_nan")}
SPECIAL_INPUT.update({n: singular_input for n in FUNCS if n.endswith("_singular")})
REF = {
    "svd_polar": lambda a: (lambda u, s, vh: (svd_recon(u, s, vh), s))(*jnp.linalg.svd(a)),
    "eigh_jacobi": FUNCS["eigh"][0],
}
REAL_ONLY = {"eigh_tridiagonal", "cholesky_update", "symmetric_product"}
# Lowered without custom calls on every platform (a large program): cpu only.
CPU_ONLY = {"eigh_tridiagonal"}
# (dtype, batch) per platform: cpu takes every type.
PLAN = {
    "cpu": [(np.float32, (2,)), (np.float64, ()), (np.complex64, (2,)), (np.complex128, ())],
    "cuda": [(np.float64, (2,)), (np.complex64, ())],
    "rocm": [(np.float32, ()), (np.complex128, (2,))],
}
# Functions with a custom call on one platform only: that platform, every type
# (unbatched when the function is not batched).
ONLY_ON = {"symmetric_product": "cuda", "cholesky_update": "cuda"}
ALL_TYPES = [(np.float32, (2,)), (np.float64, ()), (np.complex64, ()), (np.complex128, (2,))]
SHORT = {np.float32: "f32", np.float64: "f64", np.complex64: "c64", np.complex128: "c128"}


def make_input(name, dtype, batch):
  rng = np.random.default_rng(zlib.crc32(f"{name}/{SHORT[dtype]}/{batch}".encode()))
  a = rng.standard_normal(batch + (4, 4))
  if np.issubdtype(dtype, np.complexfloating):
    a = a + 1j * rng.standard_normal(batch + (4, 4))
  return (a + 2 * np.eye(4)).astype(dtype)


# Functions whose complex results are stored complex (npycmp's complex
# --rtol); the older cases store them as (..., 2) real (re, im) pairs, from
# when npycmp compared complex arrays exactly.
KEEP_COMPLEX = {"tridiagonal_solve_perturbed", "symmetric_product", "cholesky_update"}
KEEP_COMPLEX |= set(SPECIAL_INPUT)


def real_outputs(fn, name=None):
  # complex results as (..., 2) real (re, im), unless name is in KEEP_COMPLEX
  if name in KEEP_COMPLEX:
    return fn

  def g(a):
    out = fn(a)
    single = not isinstance(out, (tuple, list))
    outs = [out] if single else list(out)
    outs = [jnp.stack([jnp.real(o), jnp.imag(o)], -1) if jnp.iscomplexobj(o) else o
            for o in outs]
    return outs[0] if single else tuple(outs)
  return g


def main(only):
  unknown = [n for n in only if n not in FUNCS]
  if unknown:
    raise SystemExit(f"gen_linalg: unknown functions {unknown}; known: {list(FUNCS)}")
  if not only and os.path.isdir(OUT):
    shutil.rmtree(OUT)
  count = 0
  for name, (fn, batched) in FUNCS.items():
    if only and name not in only:
      continue
    for old in os.listdir(OUT) if only and os.path.isdir(OUT) else ():
      if old.rsplit("_", 2)[0] == name:
        shutil.rmtree(os.path.join(OUT, old))
    fn = real_outputs(fn, name)
    for plat, plan in PLAN.items():
      if name in ONLY_ON:
        if plat != ONLY_ON[name]:
          continue
        plan = ALL_TYPES
      for dtype, batch in plan:
        if name in REAL_ONLY and np.issubdtype(dtype, np.complexfloating):
          continue
        if name in CPU_ONLY and plat != "cpu":
          continue
        if not batched:
          batch = ()
        a = SPECIAL_INPUT.get(name, make_input)(name, dtype, batch)
        try:
          text = jax.jit(fn).trace(a).lower(lowering_platforms=(plat,)).as_text()
        except NotImplementedError as e:
          # e.g. schur / hessenberg have no GPU lowering in this JAX
          print(f"skip {name} {plat}: {str(e).splitlines()[0][:80]}")
          continue
        expected = jax.jit(real_outputs(REF[name], name) if name in REF else fn)(a)
        if not isinstance(expected, (tuple, list)):
          expected = [expected]
        d = os.path.join(OUT, f"{name}_{SHORT[dtype]}_{plat}")
        os.makedirs(os.path.join(d, "inputs"))
        os.makedirs(os.path.join(d, "expected"))
        with open(os.path.join(d, "program.mlir"), "w") as f:
          f.write(text)
        np.save(os.path.join(d, "inputs", "arg0.npy"), a)
        for k, e in enumerate(expected):
          np.save(os.path.join(d, "expected", f"out{k}.npy"), np.asarray(e))
        single = dtype in (np.float32, np.complex64)
        with open(os.path.join(d, "cmp"), "w") as f:
          if name.endswith("_singular") and not np.issubdtype(dtype, np.complexfloating):
            # inf next to finite values (npycmp's norm-wise error would be
            # NaN): bit-exact, which hlo's trsm gives on these small integers
            f.write("--exact\n")
          else:
            f.write("--rtol 1e-4\n" if single else "--rtol 1e-10\n")
        count += 1
  print(f"wrote {count} cases to {OUT}")


if __name__ == "__main__":
  main(sys.argv[1:])
