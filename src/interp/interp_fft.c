/* interp_fft.c — interpreter kernel for fft (FFT, IFFT, RFFT, IRFFT).
 *
 * Follows the spec's fft section: one-dimensional discrete Fourier
 * transforms along each of the last size(fft_length) dimensions, computed in
 * double. Lengths that are powers of two use an iterative radix-2
 * Cooley-Tukey transform; other lengths a direct O(n^2) DFT whose twiddle
 * factors are indexed by (j*k mod n) so they stay exact to double rounding.
 * IFFT scales by 1/n per dimension. RFFT keeps the first n/2+1 outputs of
 * the last dimension; IRFFT rebuilds the Hermitian spectrum of the last
 * dimension from its first n/2+1 inputs (ignoring the imaginary parts of
 * the DC and, for even n, Nyquist terms, as pocketfft and XLA do). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp_linalg_internal.h"

typedef enum fft_kind { FFT_FWD, FFT_INV, FFT_R2C, FFT_C2R } fft_kind;

/* Scratch for one line transform of length n. */
typedef struct fft_plan {
  int64_t n;
  bool pow2;
  double *tw;   /* n twiddles (cos, sin of 2*pi*k/n), interleaved */
  double *buf;  /* 2n scratch */
} fft_plan;

/* Allocates the twiddle factors (cos, sin of 2*pi*k/n) and scratch for
 * length-n transforms, noting whether n is a power of two; false on out of
 * memory (the caller still calls plan_free). */
static bool plan_init(fft_plan *p, int64_t n) {
  p->n = n;
  p->pow2 = n > 0 && (n & (n - 1)) == 0;
  p->tw = malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
  p->buf = malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
  if (!p->tw || !p->buf) return false;
  const double two_pi = 6.283185307179586476925286766559;
  for (int64_t k = 0; k < n; k++) {
    double ang = two_pi * (double)k / (double)n;
    p->tw[2 * k] = cos(ang);
    p->tw[2 * k + 1] = sin(ang);
  }
  return true;
}

static void plan_free(fft_plan *p) {
  free(p->tw);
  free(p->buf);
}

/* In-place transform of x[0..n) (interleaved complex), sign -1 forward,
 * +1 inverse (unscaled). */
static void line_dft(fft_plan *p, double *x, int sign) {
  int64_t n = p->n;
  if (n <= 1) return;
  if (p->pow2) {
    /* bit-reversal permutation */
    for (int64_t i = 1, j = 0; i < n; i++) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) {
        double t0 = x[2 * i], t1 = x[2 * i + 1];
        x[2 * i] = x[2 * j]; x[2 * i + 1] = x[2 * j + 1];
        x[2 * j] = t0; x[2 * j + 1] = t1;
      }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      int64_t step = n / len;
      for (int64_t i = 0; i < n; i += len)
        for (int64_t k = 0; k < len / 2; k++) {
          double wr = p->tw[2 * (k * step)], wi = sign * p->tw[2 * (k * step) + 1];
          double *u = &x[2 * (i + k)], *v = &x[2 * (i + k + len / 2)];
          double vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
          v[0] = u[0] - vr; v[1] = u[1] - vi;
          u[0] += vr; u[1] += vi;
        }
    }
    return;
  }
  double *y = p->buf;
  for (int64_t k = 0; k < n; k++) {
    double sr = 0, si = 0;
    int64_t m = 0;  /* (j * k) mod n */
    for (int64_t j = 0; j < n; j++) {
      double wr = p->tw[2 * m], wi = sign * p->tw[2 * m + 1];
      sr += x[2 * j] * wr - x[2 * j + 1] * wi;
      si += x[2 * j] * wi + x[2 * j + 1] * wr;
      m += k;
      if (m >= n) m -= n;
    }
    y[2 * k] = sr;
    y[2 * k + 1] = si;
  }
  memcpy(x, y, sizeof(double) * 2 * (size_t)n);
}

/* Transforms `data` (complex, shape dims[0..rank)) in place along axis
 * `ax`; `scale` multiplies every output. */
static bool transform_axis(double *data, const int64_t *dims, uint32_t rank, uint32_t ax,
                           int sign, bool scale) {
  int64_t n = dims[ax];
  if (n <= 0) return true;
  int64_t inner = 1, outer = 1;
  for (uint32_t d = ax + 1; d < rank; d++) inner *= dims[d];
  for (uint32_t d = 0; d < ax; d++) outer *= dims[d];
  if (inner == 0 || outer == 0) return true;
  fft_plan p;
  double *line = malloc(sizeof(double) * 2 * (size_t)n);
  if (!plan_init(&p, n) || !line) {
    plan_free(&p);
    free(line);
    return false;
  }
  double f = scale ? 1.0 / (double)n : 1.0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double *base = data + 2 * (o * n * inner + i);
      for (int64_t k = 0; k < n; k++) {
        line[2 * k] = base[2 * k * inner];
        line[2 * k + 1] = base[2 * k * inner + 1];
      }
      line_dft(&p, line, sign);
      for (int64_t k = 0; k < n; k++) {
        base[2 * k * inner] = line[2 * k] * f;
        base[2 * k * inner + 1] = line[2 * k + 1] * f;
      }
    }
  plan_free(&p);
  free(line);
  return true;
}

static hlo_status k_fft(interp *it, const hlo_op *op, tensor *const *in,
                        const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 1 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 1 operand and 1 result");
  const hlo_type *ot = in[0]->type, *rt = result_types[0];
  if (ot->kind != TYPE_TENSOR || rt->kind != TYPE_TENSOR || !type_is_static(rt) ||
      ot->rank > LA_MAX_RANK || rt->rank != ot->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "operand and result must be static tensors "
                        "of the same rank");
  const hlo_attr *ft = op_attr(op, "fft_type");
  const char *fv = ft && ft->kind == ATTR_ENUM ? ft->u.en.value : NULL;
  fft_kind kind;
  if (fv && !strcmp(fv, "FFT")) kind = FFT_FWD;
  else if (fv && !strcmp(fv, "IFFT")) kind = FFT_INV;
  else if (fv && !strcmp(fv, "RFFT")) kind = FFT_R2C;
  else if (fv && !strcmp(fv, "IRFFT")) kind = FFT_C2R;
  else return interp_error(op, HLO_INVALID_ARGUMENT, "fft_type must be FFT, IFFT, RFFT or IRFFT");
  int64_t len[LA_MAX_RANK];
  uint32_t L = 0;
  if (!la_attr_ints(op_attr(op, "fft_length"), len, LA_MAX_RANK, &L) || L < 1 || L > 3 ||
      L > ot->rank)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C1, C3): fft_length must hold 1 to "
                        "min(3, rank) integers");
  bool in_c = dtype_class(ot->dtype) == HLO_CLASS_COMPLEX;
  bool out_c = dtype_class(rt->dtype) == HLO_CLASS_COMPLEX;
  if (in_c != (kind != FFT_R2C) || out_c != (kind != FFT_C2R) ||
      (!in_c && dtype_class(ot->dtype) != HLO_CLASS_FLOAT) ||
      (!out_c && dtype_class(rt->dtype) != HLO_CLASS_FLOAT))
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C2): operand/result element types do "
                        "not fit fft_type %s", fv);
  uint32_t R = ot->rank;
  /* The full (complex, untruncated) working shape: the trailing dims are
   * fft_length; it equals the real side's shape for RFFT/IRFFT. */
  int64_t wdims[LA_MAX_RANK];
  memcpy(wdims, ot->dims, sizeof(int64_t) * R);
  for (uint32_t i = 0; i < L; i++) {
    if (len[i] < 0)
      return interp_error(op, HLO_INVALID_ARGUMENT, "fft_length must be non-negative");
    wdims[R - L + i] = len[i];
  }
  int64_t last = len[L - 1], half = last == 0 ? 0 : last / 2 + 1;
  for (uint32_t d = 0; d < R; d++) {
    int64_t want_in = wdims[d], want_out = wdims[d];
    if (d == R - 1 && kind == FFT_R2C) want_out = half;
    if (d == R - 1 && kind == FFT_C2R) want_in = half;
    if (ot->dims[d] != want_in || rt->dims[d] != want_out)
      return interp_error(op, HLO_INVALID_ARGUMENT, "(C4, C5): operand or result "
                          "dimension %u does not match fft_length", d);
  }
  tensor *res;
  HLO_TRY(tensor_create(rt, &op->loc, &res));
  int64_t wn = 1;
  for (uint32_t d = 0; d < R; d++) wn *= wdims[d];
  if (wn == 0 || res->num_elems == 0) {
    *out = res;
    return NULL;
  }
  double *src = la_load_f64(in[0], true);
  double *w = kind == FFT_C2R || kind == FFT_R2C ? calloc(2 * (size_t)wn, sizeof(double)) : src;
  bool ok = src && w;
  if (ok && kind == FFT_R2C) memcpy(w, src, sizeof(double) * 2 * (size_t)wn);
  if (ok) {
    switch (kind) {
      case FFT_FWD:
      case FFT_R2C:
        for (uint32_t i = 0; i < L && ok; i++) ok = transform_axis(w, wdims, R, R - 1 - i, -1, false);
        break;
      case FFT_INV:
        for (uint32_t i = 0; i < L && ok; i++) ok = transform_axis(w, wdims, R, R - L + i, 1, true);
        break;
      case FFT_C2R: {
        /* ifft over the outer fft dims on the half spectrum, then irfft
         * along the last dim. */
        int64_t hdims[LA_MAX_RANK];
        memcpy(hdims, wdims, sizeof(int64_t) * R);
        hdims[R - 1] = half;
        for (uint32_t i = 0; i + 1 < L && ok; i++)
          ok = transform_axis(src, hdims, R, R - L + i, 1, true);
        if (!ok) break;
        int64_t lines = wn / last;
        for (int64_t l = 0; l < lines; l++) {
          const double *h = src + 2 * l * half;
          double *full = w + 2 * l * last;
          for (int64_t k = 0; k < last; k++) {
            int64_t kk = k < half ? k : last - k;  /* X[n-k] = conj(X[k]) */
            full[2 * k] = h[2 * kk];
            full[2 * k + 1] = k < half ? h[2 * kk + 1] : -h[2 * kk + 1];
          }
          full[1] = 0;                              /* DC is real */
          if (last % 2 == 0) full[2 * (last / 2) + 1] = 0;  /* Nyquist is real */
        }
        ok = transform_axis(w, wdims, R, R - 1, 1, true);
        break;
      }
    }
  }
  if (!ok) {
    if (w != src) free(w);
    free(src);
    tensor_release(res);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  /* Write the result: truncated for RFFT, real part for IRFFT. */
  int64_t idx[LA_MAX_RANK] = {0};
  for (int64_t r = 0; r < res->num_elems; r++) {
    int64_t wi = index_linear(wdims, R, idx);
    la_store(res, out_c ? LA_COMPLEX : LA_FLOAT, r, &w[2 * wi], 0);
    index_next(rt->dims, R, idx);
  }
  if (w != src) free(w);
  free(src);
  *out = res;
  return NULL;
}

void interp_register_fft(interp_kernel *table) { table[OP_FFT] = k_fft; }
