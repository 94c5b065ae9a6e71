/* random_inputs.c — seeded random inputs for a program's parameters, by the
 * rule of ../shared/tools/xla_run.py (include/hlo/bench.h): what `hlo bench`
 * runs on when no --input is given. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/bench.h"
#include "hlo/hlo.h"
#include "ir/element.h"
#include "ir/ir.h"
#include "runtime/runtime.h"
#include "support/arena.h"
#include "support/status.h"

/* ------------------------------------------------------------ generator */

/* splitmix64 (Steele, Lea and Flood; Vigna's public-domain code): spreads
 * one 64-bit seed over xoshiro's state. */
static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void hlo_rng_seed(hlo_rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** 1.0 (Blackman and Vigna, public domain). */
uint64_t hlo_rng_next(hlo_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* A double uniform in (-1, 1) from the top 53 bits. */
static double uniform_pm1(hlo_rng *r) {
  return ((double)(hlo_rng_next(r) >> 11) * 0x1p-53) * 2.0 - 1.0;
}

double hlo_rng_normal(hlo_rng *r) {
  /* Marsaglia's polar method; the second value of each pair is dropped so
   * the generator keeps no state besides `r`. */
  for (;;) {
    double u = uniform_pm1(r), v = uniform_pm1(r);
    double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) return u * sqrt(-2.0 * log(s) / s);
  }
}

/* A uniform integer in [0, bound) for a small bound (bound <= 8): the top
 * bits of one draw, so no modulo bias (8 divides 2^64). */
static int64_t small_uint(hlo_rng *r, unsigned bound) {
  return (int64_t)((hlo_rng_next(r) >> 32) * bound >> 32);
}

/* ------------------------------------------------------------------ fill */

/* The integer bound of the rule: [0, 8), or [0, max+1) where the type's
 * largest value is smaller (i1: 2, i2: 2, ui2: 4). */
static unsigned int_bound(hlo_dtype dt) {
  switch (dt) {
    case HLO_I1: return 2;
    case HLO_I2: return 2;
    case HLO_UI2: return 4;
    default: return 8;
  }
}

/* One standard normal rounded to f32 (xla_run.py's `.astype(np.float32)`). */
static double normal_f32(hlo_rng *r) { return (double)(float)hlo_rng_normal(r); }

static bool all_zero(hlo_dtype dt, size_t n, const void *data) {
  for (size_t i = 0; i < n; i++) {
    double re, im;
    elem_get_c128(dt, data, (int64_t)i, &re, &im);
    if (re != 0.0 || im != 0.0) return false;
  }
  return true;
}

void hlo_random_fill(hlo_rng *r, hlo_dtype dt, size_t n, void *data) {
  switch (dtype_class(dt)) {
    case HLO_CLASS_BOOL:
    case HLO_CLASS_SINT:
    case HLO_CLASS_UINT: {
      unsigned bound = int_bound(dt);
      for (size_t i = 0; i < n; i++) elem_set_i64(dt, data, (int64_t)i, small_uint(r, bound));
      return;
    }
    case HLO_CLASS_FLOAT:
      /* all zeros can come out only when every normal rounds to 0 in a
       * narrow type: a few tries end it (with certainty for practical n) */
      for (int tries = 0; tries < 64; tries++) {
        for (size_t i = 0; i < n; i++) {
          double x = normal_f32(r);
          if (dt == HLO_F8E8M0FNU) x = fabs(x); /* no sign bit: keep the magnitude */
          elem_set_f64(dt, data, (int64_t)i, x);
        }
        if (n == 0 || !all_zero(dt, n, data)) return;
      }
      return;
    case HLO_CLASS_COMPLEX: {
      /* numpy: standard_normal(shape) + 1j * standard_normal(shape), then cast */
      double *re = malloc(n ? n * sizeof *re : 1);
      for (size_t i = 0; i < n; i++) {
        double x = hlo_rng_normal(r);
        if (re) re[i] = x;
        else elem_set_c128(dt, data, (int64_t)i, x, 0.0);
      }
      for (size_t i = 0; i < n; i++) {
        double y = hlo_rng_normal(r);
        double x = 0.0, unused;
        if (re) x = re[i];
        else elem_get_c128(dt, data, (int64_t)i, &x, &unused);
        elem_set_c128(dt, data, (int64_t)i, x, y);
      }
      free(re);
      return;
    }
  }
}

/* ---------------------------------------------------------------- inputs */

struct hlo_random_inputs {
  int n;
  hlo_buffer_view *views; /* n entries */
  int64_t **dims;         /* n entries: each view's dims (owned) */
  void **data;            /* n entries: each view's data (owned) */
};

void hlo_random_inputs_destroy(hlo_random_inputs *in) {
  if (!in) return;
  for (int i = 0; i < in->n; i++) {
    if (in->dims) free(in->dims[i]);
    if (in->data) free(in->data[i]);
  }
  free(in->views);
  free(in->dims);
  free(in->data);
  free(in);
}

int hlo_random_inputs_count(const hlo_random_inputs *in) { return in->n; }
const hlo_buffer_view *hlo_random_inputs_views(const hlo_random_inputs *in) { return in->views; }

/* `t` as text for an error ("tensor<?x3xf32>"), into buf[n]. */
static void type_str(char *buf, size_t n, const hlo_type *t) {
  if (t->kind == TYPE_TOKEN) { snprintf(buf, n, "!stablehlo.token"); return; }
  if (t->kind != TYPE_TENSOR) { snprintf(buf, n, "a tuple"); return; }
  size_t k = (size_t)snprintf(buf, n, "tensor<");
  for (uint32_t d = 0; d < t->rank && k < n; d++) {
    if (t->dims[d] == HLO_DYN) k += (size_t)snprintf(buf + k, n - k, "?x");
    else k += (size_t)snprintf(buf + k, n - k, "%lldx", (long long)t->dims[d]);
  }
  if (k < n) snprintf(buf + k, n - k, "%s>", hlo_dtype_name(t->dtype));
}

hlo_status hlo_random_inputs_create(const hlo_executable *e, uint64_t seed,
                                    hlo_random_inputs **out) {
  *out = NULL;
  const hlo_func *f = runtime_executable_entry(e);
  hlo_random_inputs *in = xcalloc(1, sizeof *in);
  if (!in) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  size_t na = (size_t)f->num_args + 1;
  in->views = xcalloc(na, sizeof *in->views);
  in->dims = xcalloc(na, sizeof *in->dims);
  in->data = xcalloc(na, sizeof *in->data);
  if (!in->views || !in->dims || !in->data) {
    hlo_random_inputs_destroy(in);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  in->n = (int)f->num_args;
  hlo_rng rng;
  hlo_rng_seed(&rng, seed);
  for (uint32_t i = 0; i < f->num_args; i++) {
    const hlo_value *arg = &f->body.block.args[i];
    const hlo_type *t = arg->type;
    if (t->kind == TYPE_TOKEN) {
      in->views[i] = (hlo_buffer_view){HLO_F32, HLO_RANK_TOKEN, NULL, NULL};
      continue;
    }
    if (t->kind != TYPE_TENSOR || !type_is_static(t)) {
      char ts[160];
      type_str(ts, sizeof ts, t);
      hlo_random_inputs_destroy(in);
      return status_at(HLO_UNIMPLEMENTED, &arg->loc,
                       "random inputs: argument %u of @%s is %s; random inputs need a static "
                       "tensor type (the sizes of `?` dims come only from real inputs)",
                       i, f->name, ts);
    }
    size_t count = 1;
    bool overflow = false;
    for (uint32_t d = 0; d < t->rank; d++) {
      if (t->dims[d] != 0 && count > SIZE_MAX / 16 / (size_t)t->dims[d]) overflow = true;
      else count *= (size_t)t->dims[d];
    }
    size_t bytes = count * hlo_dtype_size(t->dtype);
    in->dims[i] = xcalloc(t->rank + 1, sizeof *in->dims[i]);
    in->data[i] = overflow ? NULL : xmalloc(bytes ? bytes : 1);
    if (!in->dims[i] || !in->data[i]) {
      hlo_random_inputs_destroy(in);
      return status_at(HLO_RESOURCE_EXHAUSTED, &arg->loc,
                       "random inputs: out of memory for argument %u of @%s", i, f->name);
    }
    if (t->rank) memcpy(in->dims[i], t->dims, t->rank * sizeof *in->dims[i]);
    hlo_random_fill(&rng, t->dtype, count, in->data[i]);
    in->views[i] = (hlo_buffer_view){t->dtype, (int)t->rank, in->dims[i], in->data[i]};
  }
  *out = in;
  return NULL;
}
