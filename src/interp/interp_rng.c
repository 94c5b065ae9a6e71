/* interp_rng.c — interpreter kernels for rng_bit_generator and rng.
 *
 * rng_bit_generator reproduces XLA's expansion bit for bit (XLA's
 * RngBitGeneratorExpander and the ThreeFry / Philox bit generators of its
 * client library, prng.cc), so results match what JAX on XLA computes:
 *   THREE_FRY: state [key, counter]. Threefry-2x32 (20 rounds) keyed by the
 *     two 32-bit halves of `key` (low first), applied to the 64-bit value
 *     counter + i split into (low, high) halves. 64-bit outputs are
 *     low | high << 32 for element i. Outputs of 32 bits or fewer use half
 *     as many counters: the shape is split on its first even dimension
 *     (else its largest; rank 0 uses one counter), and element j*2+c of
 *     that dimension takes half c of the Threefry output for the half-shape
 *     index with j there; narrower outputs keep the low bits. The new state
 *     is [key, counter + number of counters used].
 *   PHILOX: state [key, counter_low, counter_high] (3 words), or [key,
 *     counter_low] with counter_high = key (2 words). Philox-4x32 (10 rounds)
 *     keyed by the halves of `key`, applied to the 128-bit counter + v; the
 *     four 32-bit words of block v are outputs 4v..4v+3 (32 bits or fewer)
 *     or the two 64-bit words (w0 | w1 << 32, w2 | w3 << 32) are outputs
 *     2v, 2v+1 (64 bits). The new state is [key, counter + blocks used]
 *     (its low word only for 2-word states).
 *   DEFAULT: PHILOX, the algorithm XLA's CPU and GPU compilers pick.
 * rng is implementation-defined; here it is deterministic and stateless:
 * element i draws 64 bits from Threefry-2x32 with a fixed key and counter i
 * (UNIFORM: integers a + bits mod (b - a), floats a + u * (b - a) with u in
 * [0, 1) from 53 bits; NORMAL: Box-Muller, a + b * z). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp_linalg_internal.h"
#include "support/float.h"

static uint32_t rotl32(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

/* Threefry-2x32 with 20 rounds (Salmon et al. 2011), as XLA's ThreeFry2x32. */
static void threefry2x32(const uint32_t key[2], const uint32_t in[2], uint32_t out[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  uint32_t x0 = in[0] + ks[0], x1 = in[1] + ks[1];
  for (int blk = 0; blk < 5; blk++) {
    const int *r = rot + (blk % 2) * 4;
    for (int i = 0; i < 4; i++) {
      x0 += x1;
      x1 = rotl32(x1, r[i]);
      x1 ^= x0;
    }
    x0 += ks[(blk + 1) % 3];
    x1 += ks[(blk + 2) % 3] + (uint32_t)(blk + 1);
  }
  out[0] = x0;
  out[1] = x1;
}

/* Philox-4x32 with 10 rounds, as XLA's Philox4x32. */
static void philox4x32(const uint32_t key_in[2], const uint32_t in[4], uint32_t out[4]) {
  uint32_t k0 = key_in[0], k1 = key_in[1];
  uint32_t x[4] = {in[0], in[1], in[2], in[3]};
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
    x[0] = y0; x[1] = y1; x[2] = y2; x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  memcpy(out, x, sizeof x);
}

/* Writes `bits` (low `width` bits used) into element i of `t`. */
static void put_bits(tensor *t, int64_t i, uint64_t bits) {
  hlo_dtype dt = t->type->dtype;
  int w = dtype_bits(dt);
  if (w < 64) bits &= ((uint64_t)1 << w) - 1;
  if (dtype_is_int(dt)) elem_set_u64(dt, t->data, i, bits);
  else elem_set_bits(dt, t->data, i, bits);
}

/* Fills `o` with Threefry-2x32 output, advancing *counter (layout in the
 * file comment). */
static void threefry_fill(tensor *o, uint64_t key, uint64_t *counter) {
  const hlo_type *t = o->type;
  uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
  uint32_t in[2], r[2];
  int width = dtype_bits(t->dtype);
  if (width == 64) {
    for (int64_t i = 0; i < o->num_elems; i++) {
      uint64_t c = *counter + (uint64_t)i;
      in[0] = (uint32_t)c; in[1] = (uint32_t)(c >> 32);
      threefry2x32(k, in, r);
      put_bits(o, i, (uint64_t)r[0] | (uint64_t)r[1] << 32);
    }
    *counter += (uint64_t)o->num_elems;
    return;
  }
  if (t->rank == 0) {
    in[0] = (uint32_t)*counter; in[1] = (uint32_t)(*counter >> 32);
    threefry2x32(k, in, r);
    put_bits(o, 0, r[0]);
    *counter += 1;
    return;
  }
  /* split dimension: first even one, else the (first) largest */
  int64_t s = -1;
  for (uint32_t d = 0; d < t->rank && s < 0; d++)
    if (t->dims[d] % 2 == 0) s = d;
  if (s < 0) {
    s = 0;
    for (uint32_t d = 1; d < t->rank; d++)
      if (t->dims[d] > t->dims[s]) s = d;
  }
  int64_t hdims[LA_MAX_RANK];
  memcpy(hdims, t->dims, sizeof(int64_t) * t->rank);
  hdims[s] = (t->dims[s] + 1) / 2;
  int64_t hn = 1;
  for (uint32_t d = 0; d < t->rank; d++) hn *= hdims[d];
  int64_t idx[LA_MAX_RANK] = {0}, hidx[LA_MAX_RANK];
  for (int64_t i = 0; i < o->num_elems; i++) {
    memcpy(hidx, idx, sizeof(int64_t) * t->rank);
    hidx[s] = idx[s] / 2;
    uint64_t c = *counter + (uint64_t)index_linear(hdims, t->rank, hidx);
    in[0] = (uint32_t)c; in[1] = (uint32_t)(c >> 32);
    threefry2x32(k, in, r);
    put_bits(o, i, r[idx[s] % 2]);
    index_next(t->dims, t->rank, idx);
  }
  *counter += (uint64_t)hn;
}

/* 128-bit counter (lo, hi) plus v. */
static void add128(uint64_t *lo, uint64_t *hi, uint64_t v) {
  uint64_t n = *lo + v;
  if (n < *lo) *hi += 1;
  *lo = n;
}

/* Fills `o` with Philox-4x32 output, advancing the 128-bit counter
 * (*chi:*clo) (layout in the file comment). */
static void philox_fill(tensor *o, uint64_t key, uint64_t *clo, uint64_t *chi) {
  uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
  bool wide = dtype_bits(o->type->dtype) == 64;
  int64_t n = o->num_elems;
  int64_t per = wide ? 2 : 4;
  int64_t blocks = (n + per - 1) / per;
  for (int64_t v = 0; v < blocks; v++) {
    uint64_t lo = *clo, hi = *chi;
    add128(&lo, &hi, (uint64_t)v);
    uint32_t in[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32)};
    uint32_t r[4];
    philox4x32(k, in, r);
    for (int64_t j = 0; j < per && v * per + j < n; j++) {
      uint64_t bits = wide ? ((uint64_t)r[2 * j] | (uint64_t)r[2 * j + 1] << 32) : r[j];
      put_bits(o, v * per + j, bits);
    }
  }
  add128(clo, chi, (uint64_t)blocks);
}

static hlo_status k_rng_bit_generator(interp *it, const hlo_op *op, tensor *const *in,
                                      const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 1 || op->num_results != 2)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 1 operand and 2 results");
  const tensor *st = in[0];
  const hlo_type *stt = st->type, *ot = result_types[1];
  if (stt->kind != TYPE_TENSOR || stt->rank != 1 || stt->dtype != HLO_UI64 ||
      !type_equal(stt, result_types[0]))
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C1): initial_state and "
                        "output_state must be the same 1-D ui64 tensor type");
  if (ot->kind != TYPE_TENSOR || !type_is_static(ot) || ot->rank > LA_MAX_RANK ||
      !(dtype_is_int(ot->dtype) || dtype_is_float(ot->dtype)) || dtype_bits(ot->dtype) > 64)
    return interp_error(op, HLO_INVALID_ARGUMENT, "rng_bit_generator: output must be a static "
                        "integer or floating-point tensor");
  const hlo_attr *alg = op_attr(op, "rng_algorithm");
  const char *av = alg && alg->kind == ATTR_ENUM ? alg->u.en.value : "DEFAULT";
  bool threefry;
  if (!strcmp(av, "THREE_FRY")) threefry = true;
  else if (!strcmp(av, "PHILOX") || !strcmp(av, "DEFAULT")) threefry = false;
  else return interp_error(op, HLO_INVALID_ARGUMENT, "unknown rng_algorithm %s", av);
  int64_t ns = stt->dims[0];
  if (threefry ? ns != 2 : (ns != 2 && ns != 3))
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C2): %s needs %s state "
                        "words, got %lld", av, threefry ? "2" : "2 or 3", (long long)ns);
  uint64_t s[3] = {0, 0, 0};
  for (int64_t i = 0; i < ns; i++) s[i] = elem_get_u64(HLO_UI64, st->data, i);
  tensor *ost, *o;
  HLO_TRY(tensor_create(result_types[0], &op->loc, &ost));
  hlo_status err = tensor_create(ot, &op->loc, &o);
  if (err) {
    tensor_release(ost);
    return err;
  }
  uint64_t key = s[0];
  if (threefry) {
    uint64_t ctr = s[1];
    threefry_fill(o, key, &ctr);
    s[1] = ctr;
  } else {
    uint64_t lo = s[1], hi = ns >= 3 ? s[2] : s[0];
    philox_fill(o, key, &lo, &hi);
    s[1] = lo;
    if (ns >= 3) s[2] = hi;
  }
  for (int64_t i = 0; i < ns; i++) elem_set_u64(HLO_UI64, ost->data, i, s[i]);
  out[0] = ost;
  out[1] = o;
  return NULL;
}

/* ---------------------------------------------------------------- rng */

static hlo_status k_rng(interp *it, const hlo_op *op, tensor *const *in,
                        const hlo_type *const *result_types, tensor **out) {
  (void)it;
  if (op->num_operands != 3 || op->num_results != 1)
    return interp_error(op, HLO_INVALID_ARGUMENT, "expects 3 operands and 1 result");
  const hlo_type *rt = result_types[0];
  if (rt->kind != TYPE_TENSOR || !type_is_static(rt) || in[0]->type->kind != TYPE_TENSOR ||
      in[1]->type->kind != TYPE_TENSOR || in[0]->num_elems != 1 || in[1]->num_elems != 1 ||
      in[0]->type->dtype != rt->dtype || in[1]->type->dtype != rt->dtype)
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C1): a and b must be 0-d tensors of "
                        "the result's element type");
  const hlo_attr *da = op_attr(op, "rng_distribution");
  const char *dv = da && da->kind == ATTR_ENUM ? da->u.en.value : "";
  bool normal;
  if (!strcmp(dv, "UNIFORM")) normal = false;
  else if (!strcmp(dv, "NORMAL")) normal = true;
  else return interp_error(op, HLO_INVALID_ARGUMENT, "rng_distribution must be UNIFORM or NORMAL");
  hlo_dtype dt = rt->dtype;
  la_domain dom = la_domain_of(dt);
  if (dom == LA_COMPLEX || (normal && dom != LA_FLOAT))
    return interp_error(op, HLO_INVALID_ARGUMENT, "(C2): NORMAL needs a floating-point type");
  tensor *res;
  HLO_TRY(tensor_create(rt, &op->loc, &res));
  static const uint32_t key[2] = {0x2545F491u, 0x9E3779B9u};
  for (int64_t i = 0; i < res->num_elems; i++) {
    uint32_t c[2] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32)}, r[2];
    threefry2x32(key, c, r);
    uint64_t bits = (uint64_t)r[0] | (uint64_t)r[1] << 32;
    if (dom == LA_FLOAT) {
      double a = elem_get_f64(dt, in[0]->data, 0), b = elem_get_f64(dt, in[1]->data, 0);
      double v;
      if (normal) {
        double u1 = ((double)r[0] + 1.0) / 4294967296.0;  /* (0, 1] */
        double u2 = (double)r[1] / 4294967296.0;          /* [0, 1) */
        v = a + b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
      } else {
        double u = (double)(bits >> 11) * 0x1p-53;
        v = float_round(dt, a + u * (b - a));
        if (v >= b) v = a;  /* rounding reached the open end */
      }
      elem_set_f64(dt, res->data, i, v);
    } else if (dom == LA_UINT) {
      uint64_t a = elem_get_u64(dt, in[0]->data, 0), b = elem_get_u64(dt, in[1]->data, 0);
      elem_set_u64(dt, res->data, i, b > a ? a + bits % (b - a) : a);
    } else {
      int64_t a = elem_get_i64(dt, in[0]->data, 0), b = elem_get_i64(dt, in[1]->data, 0);
      uint64_t range = (uint64_t)b - (uint64_t)a;
      elem_set_i64(dt, res->data, i, b > a ? (int64_t)((uint64_t)a + bits % range) : a);
    }
  }
  *out = res;
  return NULL;
}

void interp_register_rng(interp_kernel *table) {
  table[OP_RNG_BIT_GENERATOR] = k_rng_bit_generator;
  table[OP_RNG] = k_rng;
}
