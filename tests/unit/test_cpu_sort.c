/* test_cpu_sort.c — the CPU backend's native sort (backend/sort_describe.c,
 * backend/cpu/sort.c, the STEP_SORT thunk): which comparators are
 * recognised (and which are left to the interpreter), and every recognised
 * form run on both backends over the same inputs, results compared bit for
 * bit: keys drawn from a few values (many ties) with NaNs of both signs and
 * several payloads, -0 and +0, infinities; dims 0, 1 and 2 of a rank-3
 * tensor; sorted lengths 0, 1, 2 (insertion sort), 37, 1000 and 3000
 * (radix sort), or the interpreter's merge sort on rows holding a NaN
 * under an IEEE compare;
 * is_stable true and false (the interpreter's stable order is the
 * reference for both: bench/SORT.md). Sort-only programs need no C
 * compiler. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/sort_describe.h"
#include "hlo/hlo.h"
#include "ir/element.h"
#include "runtime/runtime.h"
#include "test.h"

static uint64_t rng = 0x5eed;
static uint64_t rnd64(void) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return rng >> 17;
}

/* Text with $0..$9 replaced by args[0..9]. */
static void subst(char *out, size_t size, const char *tmpl, const char *const *args) {
  size_t n = 0;
  for (const char *p = tmpl; *p && n + 1 < size; p++) {
    if (p[0] == '$' && p[1] >= '0' && p[1] <= '9') {
      const char *a = args[p[1] - '0'];
      size_t l = strlen(a);
      if (n + l >= size) break;
      memcpy(out + n, a, l);
      n += l;
      p++;
    } else {
      out[n++] = *p;
    }
  }
  out[n] = 0;
}

/* A module: @main sorting operands of types types[0..nops) (element type
 * names), all of shape `dims` ("3x4x5"), along `dim`, with comparator
 * `body` ($0.. $2 are the element types; arguments %a0 %b0 %a1 %b1 ...). */
static void make_module(char *out, size_t size, uint32_t nops, const char *const *types,
                        const char *dims, int dim, bool stable, const char *body) {
  char tt[4][64], args[512] = "", targs[256] = "", tres[256] = "", rets[64] = "", bb[512] = "";
  for (uint32_t k = 0; k < nops; k++) {
    snprintf(tt[k], sizeof tt[k], "tensor<%sx%s>", dims, types[k]);
    char a[320];
    snprintf(a, sizeof a, "%s%%x%u: %s", k ? ", " : "", k, tt[k]);
    strcat(args, a);
    snprintf(a, sizeof a, "%s%s", k ? ", " : "", tt[k]);
    strcat(targs, a);
    snprintf(a, sizeof a, "%s%%r#%u", k ? ", " : "", k);
    strcat(rets, a);
    snprintf(a, sizeof a, "%s%%a%u: tensor<%s>, %%b%u: tensor<%s>", k ? ", " : "", k, types[k], k,
             types[k]);
    strcat(bb, a);
  }
  strcpy(tres, targs);
  char ops[64] = "";
  for (uint32_t k = 0; k < nops; k++) {
    char a[16];
    snprintf(a, sizeof a, "%s%%x%u", k ? ", " : "", k);
    strcat(ops, a);
  }
  const char *targs3[3] = {types[0], nops > 1 ? types[1] : "", nops > 2 ? types[2] : ""};
  char bodytext[4096];
  subst(bodytext, sizeof bodytext, body, targs3);
  snprintf(out, size,
           "func.func @main(%s) -> (%s) {\n"
           "  %%r:%u = \"stablehlo.sort\"(%s) <{dimension = %d : i64, is_stable = %s}> ({\n"
           "  ^bb0(%s):\n%s"
           "  }) : (%s) -> (%s)\n"
           "  return %s : %s\n"
           "}\n",
           args, tres, nops, ops, dim, stable ? "true" : "false", bb, bodytext, targs, tres, rets,
           tres);
}

/* A key value for dtype dt drawn from a small pool: ties, +-0, +-inf and
 * NaNs (quiet and signaling) of both signs and several payloads for
 * floats; -3..3 for integers. */
static bool with_nans = true; /* run_case runs each case with and without NaNs */

static void fill(hlo_dtype dt, void *data, int64_t n) {
  hlo_dtype_class c = dtype_class(dt);
  static const double pool[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2.5, INFINITY, -INFINITY, 1e-3, 7.0};
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rnd64();
    if (c == HLO_CLASS_FLOAT || c == HLO_CLASS_COMPLEX) {
      hlo_dtype part = dt == HLO_C64 ? HLO_F32 : dt == HLO_C128 ? HLO_F64 : dt;
      int nparts = c == HLO_CLASS_COMPLEX ? 2 : 1;
      for (int p = 0; p < nparts; p++) {
        uint64_t rr = rnd64();
        int64_t at = i * nparts + p;
        uint8_t *base = data;
        void *e = base + (size_t)at * hlo_dtype_size(part);
        if (with_nans && rr % 10 == 0) {
          /* a NaN: sign and payload vary */
          int nb = dtype_bits(part), mb = part == HLO_F64 ? 52 : part == HLO_F32 ? 23
                                                            : part == HLO_F16 ? 10 : 7;
          uint64_t exp = ((((uint64_t)1 << (nb - 1 - mb)) - 1) << mb);
          uint64_t bits = exp | ((uint64_t)1 << (mb - 1)) | (rr / 10 % 3);
          if (rr / 30 % 2) bits |= (uint64_t)1 << (nb - 1);
          if (rr / 60 % 3 == 0) bits = (bits & ~((uint64_t)1 << (mb - 1))) | 1; /* signaling */
          elem_set_bits(part, e, 0, bits);
        } else {
          elem_set_f64(part, e, 0, pool[rr / 10 % (sizeof pool / sizeof *pool)]);
        }
      }
    } else if (c == HLO_CLASS_BOOL) {
      elem_set_i64(dt, data, i, (int64_t)(r % 2));
    } else {
      elem_set_i64(dt, data, i, (int64_t)(r % 7) - 3);
    }
  }
}

static bool parse_dims(const char *s, int64_t *d) {
  int n = 0;
  while (*s && n < 3) {
    d[n++] = strtoll(s, (char **)&s, 10);
    if (*s == 'x') s++;
  }
  return n == 3;
}

/* Runs the module on both backends over the same random inputs; results
 * must agree bit for bit; the CPU one must have run the sort natively
 * (`native`) or on the interpreter. */
static void run_case(const char *name, const char *text, uint32_t nops, const hlo_dtype *dts,
                     const char *dims, bool native) {
  hlo_module *m = NULL;
  hlo_status st = hlo_module_parse(name, text, strlen(text), &m);
  if (st) {
    fprintf(stderr, "%s:\n%s", name, text);
    hlo_status_print(st, stderr);
  }
  CHECK(st == NULL);
  hlo_executable *ei = NULL, *ec = NULL;
  static const hlo_compile_options cpu = {.backend = HLO_BACKEND_CPU, .passes = "none"};
  if (!st) st = hlo_executable_create(m, NULL, HLO_BACKEND_INTERP, &ei);
  if (!st) st = hlo_executable_compile(m, NULL, &cpu, &ec);
  if (st) hlo_status_print(st, stderr);
  CHECK(st == NULL);
  const runtime_cpu_stats *cs = ec ? runtime_executable_cpu_stats(ec) : NULL;
  if (cs && (int)cs->sorts != (native ? 1 : 0)) fprintf(stderr, "%s: sorts %u\n", name, cs->sorts);
  CHECK(cs && cs->sorts == (native ? 1u : 0u) && cs->interp == (native ? 0u : 1u));
  int64_t d[3];
  CHECK(parse_dims(dims, d));
  int64_t n = d[0] * d[1] * d[2];
  for (int pass = 0; pass < 2 && !st; pass++) {
    with_nans = pass == 0;
    hlo_buffer_view views[4];
    void *data[4] = {0};
    for (uint32_t k = 0; k < nops && !st; k++) {
      data[k] = calloc((size_t)(n ? n : 1), hlo_dtype_size(dts[k]));
      fill(dts[k], data[k], n);
      views[k] = (hlo_buffer_view){dts[k], 3, d, data[k]};
    }
    hlo_buffer **ri = NULL, **rc = NULL;
    if (!st) st = hlo_executable_run(ei, views, (int)nops, &ri);
    if (!st) st = hlo_executable_run(ec, views, (int)nops, &rc);
    if (st) hlo_status_print(st, stderr);
    CHECK(st == NULL);
    for (uint32_t k = 0; k < nops && ri && rc; k++) {
      size_t nb = hlo_buffer_nbytes(ri[k]);
      bool same = nb == hlo_buffer_nbytes(rc[k]) &&
                  (nb == 0 || !memcmp(hlo_buffer_data(ri[k]), hlo_buffer_data(rc[k]), nb));
      if (!same)
        fprintf(stderr, "%s%s: result %u differs from the interpreter's\n", name,
                with_nans ? "" : " (no NaN)", k);
      CHECK(same);
    }
    for (uint32_t k = 0; k < nops; k++) {
      if (ri) hlo_buffer_destroy(ri[k]);
      if (rc) hlo_buffer_destroy(rc[k]);
      free(data[k]);
    }
    free(ri);
    free(rc);
  }
  hlo_status_free(st);
  hlo_executable_destroy(ec);
  hlo_executable_destroy(ei);
  hlo_module_destroy(m);
}

/* JAX's canonicalisation of float key x (-0 -> +0, NaN -> +qNaN) into
 * %cX, then TOTALORDER compare: body text for key type $0. */
#define CANON(x, c, nan, T)                                                                     \
  "    %z" x " = stablehlo.constant dense<0.000000e+00> : tensor<" T ">\n"                      \
  "    %e" x " = stablehlo.compare EQ, %" x ", %z" x ", FLOAT : (tensor<" T ">, tensor<" T ">) -> tensor<i1>\n" \
  "    %s" x " = stablehlo.select %e" x ", %z" x ", %" x " : tensor<i1>, tensor<" T ">\n"     \
  "    %n" x " = stablehlo.compare NE, %" x ", %" x ", FLOAT : (tensor<" T ">, tensor<" T ">) -> tensor<i1>\n" \
  "    %q" x " = stablehlo.constant dense<" nan "> : tensor<" T ">\n"                          \
  "    %" c " = stablehlo.select %n" x ", %q" x ", %s" x " : tensor<i1>, tensor<" T ">\n"

typedef struct form {
  const char *name;
  uint32_t nops;
  hlo_dtype dts[3];
  const char *types[3];
  const char *body;
  bool native;
} form;

static const form forms[] = {
    {"f32_lt_float", 1, {HLO_F32}, {"f32"},
     "    %l = stablehlo.compare LT, %a0, %b0, FLOAT : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"f32_lt_default_payload", 2, {HLO_F32, HLO_I32}, {"f32", "i32"},
     "    %l = stablehlo.compare LT, %a0, %b0 : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"f64_gt_float_swapped", 1, {HLO_F64}, {"f64"},
     "    %l = stablehlo.compare LT, %b0, %a0, FLOAT : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"bf16_gt_totalorder", 2, {HLO_BF16, HLO_I32}, {"bf16", "i32"},
     "    %l = stablehlo.compare GT, %a0, %b0, TOTALORDER : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"f16_lt_totalorder", 1, {HLO_F16}, {"f16"},
     "    %l = stablehlo.compare LT, %a0, %b0, TOTALORDER : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"f32_jax_canonical_argsort", 2, {HLO_F32, HLO_I32}, {"f32", "i32"},
     CANON("a0", "ca", "0x7FC00000", "$0") CANON("b0", "cb", "0x7FC00000", "$0")
     "    %l = stablehlo.compare LT, %ca, %cb, TOTALORDER : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"f64_jax_canonical", 1, {HLO_F64}, {"f64"},
     CANON("a0", "ca", "0x7FF8000000000000", "$0") CANON("b0", "cb", "0x7FF8000000000000", "$0")
     "    %l = stablehlo.compare LT, %ca, %cb, TOTALORDER : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"f32_canonical_then_float", 1, {HLO_F32}, {"f32"},
     CANON("a0", "ca", "0x7FC00000", "$0") CANON("b0", "cb", "0x7FC00000", "$0")
     "    %l = stablehlo.compare GT, %ca, %cb, FLOAT : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"top_k_chain", 2, {HLO_F32, HLO_I32}, {"f32", "i32"},
     "    %g = stablehlo.compare GT, %a0, %b0, TOTALORDER : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %e = stablehlo.compare EQ, %a0, %b0, TOTALORDER : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %i = stablehlo.compare LT, %a1, %b1, SIGNED : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %and = stablehlo.and %e, %i : tensor<i1>\n"
     "    %or = stablehlo.or %g, %and : tensor<i1>\n"
     "    stablehlo.return %or : tensor<i1>\n", true},
    {"float_chain_ieee_with_nans", 2, {HLO_F32, HLO_F64}, {"f32", "f64"},
     "    %g = stablehlo.compare LT, %a1, %b1, FLOAT : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %e = stablehlo.compare EQ, %a1, %b1, FLOAT : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %i = stablehlo.compare GT, %a0, %b0, FLOAT : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %and = stablehlo.and %i, %e : tensor<i1>\n"
     "    %or = stablehlo.or %and, %g : tensor<i1>\n"
     "    stablehlo.return %or : tensor<i1>\n", true},
    {"three_keys_int_int_float", 3, {HLO_I32, HLO_I8, HLO_F32}, {"i32", "i8", "f32"},
     CANON("a2", "ca", "0x7FC00000", "$2") CANON("b2", "cb", "0x7FC00000", "$2")
     "    %l2 = stablehlo.compare LT, %ca, %cb, TOTALORDER : (tensor<$2>, tensor<$2>) -> tensor<i1>\n"
     "    %l1 = stablehlo.compare LT, %a1, %b1, SIGNED : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %e1 = stablehlo.compare EQ, %a1, %b1, SIGNED : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %y1 = stablehlo.and %e1, %l2 : tensor<i1>\n"
     "    %o1 = stablehlo.or %l1, %y1 : tensor<i1>\n"
     "    %l0 = stablehlo.compare LT, %a0, %b0, SIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %e0 = stablehlo.compare EQ, %a0, %b0, SIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %y0 = stablehlo.and %e0, %o1 : tensor<i1>\n"
     "    %o0 = stablehlo.or %l0, %y0 : tensor<i1>\n"
     "    stablehlo.return %o0 : tensor<i1>\n", true},
    {"select_chain", 2, {HLO_UI16, HLO_I64}, {"ui16", "i64"},
     "    %e = stablehlo.compare EQ, %a0, %b0, UNSIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %l0 = stablehlo.compare GT, %a0, %b0, UNSIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %l1 = stablehlo.compare LT, %a1, %b1, SIGNED : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %s = stablehlo.select %e, %l1, %l0 : tensor<i1>, tensor<i1>\n"
     "    stablehlo.return %s : tensor<i1>\n", true},
    {"select_ne_chain", 2, {HLO_I16, HLO_UI8}, {"i16", "ui8"},
     "    %n = stablehlo.compare NE, %b0, %a0, SIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %l0 = stablehlo.compare LT, %a0, %b0, SIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %l1 = stablehlo.compare GT, %a1, %b1, UNSIGNED : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %s = stablehlo.select %n, %l0, %l1 : tensor<i1>, tensor<i1>\n"
     "    stablehlo.return %s : tensor<i1>\n", true},
    {"bool_keys", 2, {HLO_I1, HLO_F32}, {"i1", "f32"},
     "    %l = stablehlo.compare LT, %a0, %b0, UNSIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"ui32_gt_payload_c64", 2, {HLO_UI32, HLO_C64}, {"ui32", "complex<f32>"},
     "    %l = stablehlo.compare GT, %a0, %b0, UNSIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"ui64_lt_no_type", 1, {HLO_UI64}, {"ui64"},
     "    %l = stablehlo.compare LT, %a0, %b0 : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", true},
    {"complex_jax_real_imag", 1, {HLO_C64}, {"complex<f32>"},
     "    %ra = stablehlo.real %a0 : (tensor<$0>) -> tensor<f32>\n"
     "    %ia = stablehlo.imag %a0 : (tensor<$0>) -> tensor<f32>\n"
     "    %rb = stablehlo.real %b0 : (tensor<$0>) -> tensor<f32>\n"
     "    %ib = stablehlo.imag %b0 : (tensor<$0>) -> tensor<f32>\n"
     "    %li = stablehlo.compare LT, %ia, %ib, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %lr = stablehlo.compare LT, %ra, %rb, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %er = stablehlo.compare EQ, %ra, %rb, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "    %y = stablehlo.and %er, %li : tensor<i1>\n"
     "    %o = stablehlo.or %lr, %y : tensor<i1>\n"
     "    stablehlo.return %o : tensor<i1>\n", true},
    /* left to the interpreter: LE is no strict order; a chain whose EQ is
     * on another key than its LT; a comparator that computes */
    {"le_not_recognised", 1, {HLO_F32}, {"f32"},
     "    %l = stablehlo.compare LE, %a0, %b0, FLOAT : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", false},
    {"mismatched_chain_not_recognised", 2, {HLO_I32, HLO_I32}, {"i32", "i32"},
     "    %l0 = stablehlo.compare LT, %a0, %b0, SIGNED : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    %e1 = stablehlo.compare EQ, %a1, %b1, SIGNED : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %l1 = stablehlo.compare LT, %a1, %b1, SIGNED : (tensor<$1>, tensor<$1>) -> tensor<i1>\n"
     "    %y = stablehlo.and %e1, %l1 : tensor<i1>\n"
     "    %o = stablehlo.or %l0, %y : tensor<i1>\n"
     "    stablehlo.return %o : tensor<i1>\n", false},
    {"arithmetic_not_recognised", 1, {HLO_F32}, {"f32"},
     "    %na = stablehlo.negate %a0 : tensor<$0>\n"
     "    %l = stablehlo.compare LT, %na, %b0, FLOAT : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", false},
    {"same_argument_not_recognised", 1, {HLO_F32}, {"f32"},
     "    %l = stablehlo.compare LT, %a0, %a0, FLOAT : (tensor<$0>, tensor<$0>) -> tensor<i1>\n"
     "    stablehlo.return %l : tensor<i1>\n", false},
};

/* Every form, dims 0..2, lengths 0, 1, 2, 37, 1000 (others small), stable
 * and not. */
TEST(every_form_matches_the_interpreter) {
  static const int lens[] = {0, 1, 2, 37, 1000};
  char text[16384], name[160], dims[64];
  for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
    const form *fm = &forms[f];
    for (int dim = 0; dim < 3; dim++)
      for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        int64_t d[3] = {3, 2, 2};
        if (lens[li] == 1000) d[0] = d[1] = d[2] = 1;
        if (lens[li] == 1000 && dim != 1) d[1] = 2;
        d[dim] = lens[li];
        snprintf(dims, sizeof dims, "%lldx%lldx%lld", (long long)d[0], (long long)d[1],
                 (long long)d[2]);
        bool stable = (li + (size_t)dim) % 2 == 0;
        /* unrecognised forms: once is enough (the interpreter both sides) */
        if (!fm->native && (dim != 1 || li != 3)) continue;
        make_module(text, sizeof text, fm->nops, fm->types, dims, dim, stable, fm->body);
        snprintf(name, sizeof name, "%s dim %d dims %s%s", fm->name, dim, dims,
                 stable ? " stable" : "");
        run_case(name, text, fm->nops, fm->dts, dims, fm->native);
      }
  }
}

/* Enough rows for the thread pool (2 x 1000 x 12 elements) */
TEST(many_rows_over_the_pool) {
  char text[16384];
  const form *fm = &forms[8]; /* top_k_chain */
  make_module(text, sizeof text, fm->nops, fm->types, "12x1000x2", 1, true, fm->body);
  run_case("top_k_chain 12x1000x2", text, fm->nops, fm->dts, "12x1000x2", true);
  fm = &forms[9]; /* IEEE with NaNs: the merge sort on most rows */
  make_module(text, sizeof text, fm->nops, fm->types, "2x12x1000", 2, false, fm->body);
  run_case("float_chain 2x12x1000", text, fm->nops, fm->dts, "2x12x1000", true);
}

/* Long rows (keys packed into 64 bits, or not), along the last and the
 * first dim. */
TEST(long_rows_radix) {
  static const size_t which[] = {0, 5, 6, 8, 9, 10, 11, 16};
  char text[16384], name[160];
  for (size_t w = 0; w < sizeof which / sizeof *which; w++) {
    const form *fm = &forms[which[w]];
    const char *dims[2] = {"1x2x3000", "3000x1x2"};
    for (int v = 0; v < 2; v++) {
      make_module(text, sizeof text, fm->nops, fm->types, dims[v], v ? 0 : 2, v == 0, fm->body);
      snprintf(name, sizeof name, "%s %s", fm->name, dims[v]);
      run_case(name, text, fm->nops, fm->dts, dims[v], true);
    }
  }
}

/* The description of recognised comparators: keys, directions, types. */
TEST(describe_reads_the_keys) {
  char text[16384];
  const form *fm = &forms[10]; /* three_keys_int_int_float */
  make_module(text, sizeof text, fm->nops, fm->types, "4x5x6", -2, true, fm->body);
  hlo_module *m = NULL;
  CHECK(hlo_module_parse("describe", text, strlen(text), &m) == NULL);
  const hlo_module_ir *ir = m ? runtime_module_ir(m) : NULL;
  const hlo_op *op = ir ? ir->funcs->body.block.first : NULL;
  backend_sort s;
  CHECK(op && sort_describe(op, &s));
  if (op && sort_describe(op, &s)) {
    CHECK_EQ_INT(s.num_operands, 3);
    CHECK_EQ_INT(s.dimension, 1); /* -2 of rank 3 */
    CHECK(s.is_stable);
    CHECK_EQ_INT(s.nkeys, 3);
    CHECK_EQ_INT(s.keys[0].operand, 0);
    CHECK_EQ_INT(s.keys[1].operand, 1);
    CHECK_EQ_INT(s.keys[2].operand, 2);
    CHECK(s.keys[0].cmp == BACKEND_SORT_SIGNED && !s.keys[0].descending);
    CHECK(s.keys[2].cmp == BACKEND_SORT_TOTALORDER && s.keys[2].ncanon == 2);
    CHECK(s.keys[2].canon[0].is_nan && s.keys[2].canon[0].to_bits == 0x7FC00000u);
    CHECK(!s.keys[2].canon[1].is_nan && s.keys[2].canon[1].eq_value == 0.0 &&
          s.keys[2].canon[1].to_bits == 0);
    char buf[256];
    sort_describe_print(&s, buf, sizeof buf);
    CHECK_STR(buf, "3 operands dim 1 stable, keys: #0 asc signed #1 asc signed "
                   "#2 asc totalorder canonical");
  }
  hlo_module_destroy(m);
  fm = &forms[8]; /* top_k_chain */
  make_module(text, sizeof text, fm->nops, fm->types, "4x5x6", 2, false, fm->body);
  m = NULL;
  CHECK(hlo_module_parse("describe2", text, strlen(text), &m) == NULL);
  ir = m ? runtime_module_ir(m) : NULL;
  op = ir ? ir->funcs->body.block.first : NULL;
  CHECK(op && sort_describe(op, &s) && s.nkeys == 2 && s.keys[0].descending &&
        s.keys[0].cmp == BACKEND_SORT_TOTALORDER && !s.keys[1].descending && !s.is_stable);
  hlo_module_destroy(m);
}

TEST_MAIN()
