/* test_kernel_ops.c — every elementwise op the kernels lower, on every
 * element type they hold, on EDGE values, compiled to C, run, and compared
 * bit for bit with the interpreter (the oracle), but exp, logistic and
 * tanh (XLA's polynomial and rational approximations in f32: within
 * EXP_F32_ULPS, LOGISTIC_F32_ULPS, TANH_F32_ULPS of libm's, bench/MATH.md):
 *   - integers: 0, ±1, the type's min and max and their neighbours, shift
 *     counts around the bit width (width-1, width, width+1, 63, 64, 65),
 *     negative counts, 100, -100, a bit pattern; binary ops on every PAIR of
 *     them (so x / 0, INT_MIN / -1, INT_MIN % -1, max + 1, min * -1 and
 *     shifts past the width all occur);
 *   - floats: ±0, ±1, halves (rounding ties), the int32/int64/uint64
 *     saturation points, the type's max, ±denormal, ±inf, ±NaN, ...;
 *   - every convert between two of the 13 element types, on each source
 *     type's edge values (saturating float -> int, NaN -> 0, double
 *     roundings f64 -> bf16/f16, int -> bf16);
 *   - each reduce combiner (add, multiply, maximum, minimum, and, or) on
 *     rows of edge values (integers and max/min exactly; float sums and
 *     products, whose order differs, within 1e-6 relative).
 * Each op is one kernel (lower_fusion of the op alone); every op must lower
 * (a claim of what the kernels hold, asserted).
 *
 * The same kernels are compiled a second time with
 * `-fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all` (a
 * wrapper script around $HLO_CC or cc in a temporary folder): generated C
 * with undefined behaviour on these values aborts the test. When the
 * compiler cannot build with UBSan, that half prints "skipped" with the
 * reason. Without a C compiler every test prints "skipped" and passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "codegen/lower_fusion.h"
#include "ir/element.h"
#include "support/strbuf.h"
#include "test.h"
#include "testlib.h"

/* The largest distance between the kernels' f32 tanh and glibc's tanhf
 * over all 2^32 floats, measured by bench/math_ulp.sh (bench/MATH.md). */
#define TANH_F32_ULPS 5
/* The same for the kernels' f32 exp against glibc's expf, and for logistic
 * (1 / (1 + exp(-x)) in f32) against the same expression on glibc's expf. */
#define EXP_F32_ULPS 1
#define LOGISTIC_F32_ULPS 4

static int cls_of(hlo_dtype dt) {
  for (int i = 0; i < tl_num_kernel_types; i++)
    if (tl_kernel_types[i].dt == dt) return tl_kernel_types[i].cls;
  return 0;
}

/* ------------------------------------------------------------ edge values */

enum { MAX_EDGE = 40 };

/* The edge values of `dt` written into data[0..n) (returns n). */
static int edge_values(hlo_dtype dt, void *data) {
  int n = 0;
  int cls = cls_of(dt);
  if (cls == TL_C_B) {
    elem_set_i64(dt, data, n++, 0);
    elem_set_i64(dt, data, n++, 1);
    return n;
  }
  if (cls & TL_C_INT) {
    int w = dtype_bits(dt);
    int64_t mn = int_min(dt);
    uint64_t mx = int_max(dt);
    const int64_t small[] = {0, 1, -1, 2, 3, 5, -7, 31, 32, 33, 63, 64, 65, 100, -100};
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) elem_set_i64(dt, data, n++, small[i]);
    elem_set_i64(dt, data, n++, w - 1);
    elem_set_i64(dt, data, n++, w);
    elem_set_i64(dt, data, n++, w + 1);
    elem_set_i64(dt, data, n++, mn);
    elem_set_i64(dt, data, n++, mn + 1);
    elem_set_u64(dt, data, n++, mx);
    elem_set_u64(dt, data, n++, mx - 1);
    elem_set_u64(dt, data, n++, 0x5555555555555555ULL);
    elem_set_u64(dt, data, n++, mx / 2 + 1); /* the top bit alone */
    return n;
  }
  const double vals[] = {0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0, 0.1, -7.3, 100.7,
                         -129.5, 255.5, 65504.0, 70000.0, 2147483520.0, 2147483648.0,
                         -2147483904.0, 4294967296.0, 9.2233720368547758e18,
                         1.8446744073709552e19, -9.2233720368547758e18, 1e30, 3.4028234e38,
                         -1e300, 1e-30, 0.75, -300.25,
                         /* f64 values that round twice through f32 to bf16 / f16 */
                         1.0 + 0x1p-8 + 0x1p-30, -(1.0 + 0x1p-11 + 0x1p-40)};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) elem_set_f64(dt, data, n++, vals[i]);
  elem_set_f64(dt, data, n++, -0.0);
  elem_set_f64(dt, data, n++, INFINITY);
  elem_set_f64(dt, data, n++, -INFINITY);
  elem_set_f64(dt, data, n++, NAN);
  elem_set_f64(dt, data, n++, -NAN);
  /* the smallest denormal of the type and its negation */
  int mant = dt == HLO_BF16 ? 7 : dt == HLO_F16 ? 10 : dt == HLO_F32 ? 23 : 52;
  int emin = dt == HLO_F16 ? -14 : dt == HLO_F64 ? -1022 : -126;
  elem_set_f64(dt, data, n++, ldexp(1.0, emin - mant));
  elem_set_f64(dt, data, n++, -ldexp(3.0, emin - mant));
  return n;
}

/* --------------------------------------------------------------- harness */

static int compiler_missing = -1;
static char ubsan_cc[64]; /* the wrapper script, "" when none */
static int ubsan_state = -1; /* -1 untried, 0 unavailable, 1 available */
static char ubsan_why[256];

/* Makes a wrapper script that runs the C compiler with UBSan flags; tries
 * it on a trivial unit. */
static void make_ubsan_cc(void) {
  if (ubsan_state >= 0) return;
  ubsan_state = 0;
  char dir[] = "/tmp/hlo_ubsan_cc.XXXXXX";
  if (!mkdtemp(dir)) {
    snprintf(ubsan_why, sizeof ubsan_why, "cannot make a temporary folder");
    return;
  }
  snprintf(ubsan_cc, sizeof ubsan_cc, "%s/cc", dir);
  const char *cc = getenv("HLO_CC");
  FILE *f = fopen(ubsan_cc, "w");
  if (!f) {
    snprintf(ubsan_why, sizeof ubsan_why, "cannot write %s", ubsan_cc);
    return;
  }
  fprintf(f, "#!/bin/sh\nexec %s \"$@\" -fsanitize=undefined,float-cast-overflow "
             "-fno-sanitize-recover=all\n", cc && *cc ? cc : "cc");
  fclose(f);
  chmod(ubsan_cc, 0700);
  const char *src = "#include <stdint.h>\nvoid k(void *const *b, int64_t s, int64_t e) {\n"
                    "  for (int64_t t = s; t < e; t++) ((int *)b[1])[t] = ((int *)b[0])[t] + 1;\n}\n";
  const char *names[1] = {"k"};
  cpu_kernel_fn fn;
  cpu_jit *j = NULL;
  hlo_status st = cpu_jit_compile(src, ubsan_cc, NULL, names, 1, &fn, &j);
  if (st) {
    snprintf(ubsan_why, sizeof ubsan_why, "the compiler cannot build with UBSan: %.180s",
             hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  int in[2] = {1, 2}, out[2] = {0, 0};
  void *bufs[2] = {in, out};
  fn(bufs, 0, 2);
  cpu_jit_destroy(j);
  ubsan_state = out[0] == 2 && out[1] == 3;
  if (!ubsan_state) snprintf(ubsan_why, sizeof ubsan_why, "the UBSan build computes wrongly");
}

static void remove_ubsan_cc(void) {
  if (!ubsan_cc[0]) return;
  unlink(ubsan_cc);
  char *slash = strrchr(ubsan_cc, '/');
  if (slash) {
    *slash = 0;
    rmdir(ubsan_cc);
  }
  ubsan_cc[0] = 0;
}

/* How many ULPs of float type dt apart element i of a and b are (their
 * sign-magnitude bits as ordered integers: -0 = +0, inf next to max). */
static int64_t ulps_apart(hlo_dtype dt, const void *a, const void *b, int64_t i) {
  uint64_t sign = 1ull << (dtype_bits(dt) - 1), x = elem_get_bits(dt, a, i), y = elem_get_bits(dt, b, i);
  int64_t ox = x & sign ? -(int64_t)(x & ~sign) : (int64_t)x, oy = y & sign ? -(int64_t)(y & ~sign) : (int64_t)y;
  return ox > oy ? ox - oy : oy - ox;
}

/* Bit-equal, but any NaN equals any NaN; with rel > 0, floats within
 * rel (relative) too; with rel < 0, floats within -rel ULPs of their type.
 * Prints the first mismatch with the inputs' index. */
static bool same_elems(hlo_dtype dt, const void *got, const void *want, int64_t n, double rel,
                       const char *what) {
  for (int64_t i = 0; i < n; i++) {
    if (elem_get_bits(dt, got, i) == elem_get_bits(dt, want, i)) continue;
    if (dtype_is_float(dt)) {
      double g = elem_get_f64(dt, got, i), w = elem_get_f64(dt, want, i);
      if (isnan(g) && isnan(w)) continue;
      if (rel > 0 && fabs(g - w) <= rel * fabs(w)) continue;
      if (rel < 0 && !isnan(g) && !isnan(w) && (double)ulps_apart(dt, got, want, i) <= -rel) continue;
      fprintf(stderr, "  %s [%lld]: got %.17g (0x%llx), want %.17g (0x%llx)\n", what,
              (long long)i, g, (unsigned long long)elem_get_bits(dt, got, i), w,
              (unsigned long long)elem_get_bits(dt, want, i));
    } else {
      fprintf(stderr, "  %s [%lld]: got %lld, want %lld\n", what, (long long)i,
              (long long)elem_get_i64(dt, got, i), (long long)elem_get_i64(dt, want, i));
    }
    return false;
  }
  return true;
}

/* Parses `text`, runs @main on the interpreter with args (filled by the
 * caller through `fill`), lowers each returned value's op alone (with the
 * splat constants it reads) into a kernel, compiles them with `cc` (NULL:
 * the default) and compares every result; `rel` as same_elems. */
typedef void (*fill_fn)(tensor *const *args, uint32_t n);

static void run_ops(const char *name, const char *text, fill_fn fill, double rel,
                    const char *cc) {
  if (compiler_missing == 1) {
    printf("%s: skipped (no C compiler)\n", name);
    return;
  }
  hlo_source src = tl_source(name, text);
  tl_run r;
  memset(&r, 0, sizeof r);
  hlo_status st = tl_prepare(&src, 0, strlen(text), 0, NULL, &r);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  tensor *args[8] = {0};
  uint32_t na = r.f ? r.f->num_args : 0;
  for (uint32_t i = 0; i < na && !st; i++) args[i] = tensor_new(r.f->body.block.args[i].type);
  if (!st) fill(args, na);
  if (!st) st = tl_call(&r, args, na);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  const hlo_op *ret = NULL;
  for (const hlo_op *op = r.f && !st ? r.f->body.block.first : NULL; op; op = op->next)
    if (op->opcode == OP_FUNC_RETURN) ret = op;
  uint32_t nk = ret ? ret->num_operands : 0;
  kernel **ks = calloc(nk ? nk : 1, sizeof *ks);
  uint32_t made = 0;
  for (uint32_t i = 0; i < nk && !st; i++) {
    const hlo_op *op = ret->operands[i]->def;
    const hlo_op *ops[4];
    uint32_t n = 0;
    ops[n++] = op;
    for (uint32_t a = 0; a < op->num_operands && n < 4; a++)
      if (op->operands[a]->def) ops[n++] = op->operands[a]->def; /* splat constants */
    char kname[32];
    snprintf(kname, sizeof kname, "op_%u", i);
    const hlo_value *outv = &op->results[0];
    st = lower_fusion(ops, n, &outv, 1, kname, &ks[i]);
    if (st) {
      fprintf(stderr, "  %s: result %u (%s) does not lower: ", name, i, op_name(op->opcode));
      hlo_status_print(st, stderr);
    }
    CHECK(!st);
    if (!st) made++;
  }
  const backend *be = backend_cpu();
  backend_module *mod = NULL;
  if (!st) {
    backend_compile_options o = {.cc = cc};
    st = be->compile((const kernel *const *)ks, made, &o, &mod);
    if (st && hlo_status_code_of(st) == HLO_UNAVAILABLE) {
      printf("%s: skipped (%s)\n", name, hlo_status_message(st));
      compiler_missing = 1;
      hlo_status_free(st);
      st = NULL;
      made = 0;
    } else {
      if (st) hlo_status_print(st, stderr);
      CHECK(!st);
    }
  }
  for (uint32_t i = 0; i < made && !st && mod; i++) {
    const kernel *k = ks[i];
    void *bufs[8];
    for (uint32_t j = 0; j < k->num_inputs; j++) {
      const hlo_value *v = k->inputs[j].value;
      bufs[j] = NULL;
      for (uint32_t a = 0; a < na; a++)
        if (v == &r.f->body.block.args[a]) bufs[j] = args[a]->data;
      if (!bufs[j] && k->inputs[j].literal) bufs[j] = k->inputs[j].literal->u.dense.data;
      CHECK(bufs[j] != NULL);
    }
    tensor *out = tensor_new(k->outputs[0].buf.value->type);
    bufs[k->num_inputs] = out->data;
    st = be->launch(mod, i, bufs);
    CHECK(!st);
    char what[96];
    const hlo_op *op = ret->operands[i]->def;
    snprintf(what, sizeof what, "%s: %s (result %u)", name, op_name(op->opcode), i);
    /* exp, logistic, tanh: XLA's approximations in f32 (emit_c.c), within
     * the measured bounds of glibc's; bf16/f16 computed in f32, then
     * rounded: one ULP of their type. Every other op: bit for bit. */
    hlo_dtype odt = out->type->dtype;
    int f32_ulps = op->opcode == OP_TANH          ? TANH_F32_ULPS
                   : op->opcode == OP_EXPONENTIAL ? EXP_F32_ULPS
                   : op->opcode == OP_LOGISTIC    ? LOGISTIC_F32_ULPS
                                                  : 0;
    double tol = !f32_ulps || odt == HLO_F64 ? rel : odt == HLO_F32 ? -f32_ulps : -1;
    if (!st) CHECK(same_elems(odt, out->data, r.res[i]->data, out->num_elems, tol, what));
    tensor_release(out);
  }
  if (mod) be->module_destroy(mod);
  for (uint32_t i = 0; i < nk; i++) kernel_destroy(ks[i]);
  free(ks);
  for (uint32_t i = 0; i < na; i++) tensor_release(args[i]);
  hlo_status_free(st);
  tl_run_free(&r);
}

/* ------------------------------------------------------- elementwise ops */

static hlo_dtype g_dt; /* the type the fill functions fill */

/* args: a, b (every pair of edge values), p (i1: alternating), c (b
 * rotated: the clamp's upper bounds). */
static void fill_pairs(tensor *const *args, uint32_t n) {
  char ev[MAX_EDGE * 8];
  int ne = edge_values(g_dt, ev);
  for (int i = 0; i < ne; i++)
    for (int j = 0; j < ne; j++) {
      int64_t k = (int64_t)i * ne + j;
      elem_set_bits(g_dt, args[0]->data, k, elem_get_bits(g_dt, ev, i));
      elem_set_bits(g_dt, args[1]->data, k, elem_get_bits(g_dt, ev, j));
      elem_set_i64(HLO_I1, args[2]->data, k, (i + j) & 1);
      elem_set_bits(g_dt, args[3]->data, k, elem_get_bits(g_dt, ev, (i * 7 + j * 3) % ne));
    }
  (void)n;
}

static void elementwise_case(int t, const char *cc) {
  hlo_dtype dt = tl_kernel_types[t].dt;
  const char *tn = tl_kernel_types[t].name;
  int cls = tl_kernel_types[t].cls;
  char ev[MAX_EDGE * 8];
  int ne = edge_values(dt, ev);
  int64_t n = (int64_t)ne * ne;
  strbuf sb;
  sb_init(&sb);
  char ty[64], ti1[64];
  snprintf(ty, sizeof ty, "tensor<%lldx%s>", (long long)n, tn);
  snprintf(ti1, sizeof ti1, "tensor<%lldxi1>", (long long)n);
  sb_printf(&sb, "func.func @main(%%a: %s, %%b: %s, %%p: %s, %%c: %s) -> (", ty, ty, ti1, ty);
  strbuf body, rets, types;
  sb_init(&body);
  sb_init(&rets);
  sb_init(&types);
  int nr = 0;
  for (int o = 0; o < tl_num_kernel_ops; o++) {
    if (!(tl_kernel_ops[o].cls & cls)) continue;
    const char *on = tl_kernel_ops[o].name;
    if (tl_kernel_ops[o].arity == 1)
      sb_printf(&body, "  %%r%d = \"stablehlo.%s\"(%%a) : (%s) -> %s\n", nr, on, ty, ty);
    else if (tl_kernel_ops[o].arity == 2)
      sb_printf(&body, "  %%r%d = \"stablehlo.%s\"(%%a, %%b) : (%s, %s) -> %s\n", nr, on, ty, ty, ty);
    else if (!strcmp(on, "select"))
      sb_printf(&body, "  %%r%d = \"stablehlo.select\"(%%p, %%a, %%b) : (%s, %s, %s) -> %s\n", nr,
                ti1, ty, ty, ty);
    else
      sb_printf(&body, "  %%r%d = \"stablehlo.clamp\"(%%b, %%a, %%c) : (%s, %s, %s) -> %s\n", nr,
                ty, ty, ty, ty);
    sb_printf(&rets, "%s%%r%d", nr ? ", " : "", nr);
    sb_printf(&types, "%s%s", nr ? ", " : "", ty);
    nr++;
  }
  /* compares: every direction, with the type's compare_type */
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  const char *ct = cls == TL_C_F ? "FLOAT" : cls == TL_C_I ? "SIGNED" : "UNSIGNED";
  for (int d = 0; d < 6; d++) {
    sb_printf(&body, "  %%r%d = stablehlo.compare %s, %%a, %%b, %s : (%s, %s) -> %s\n", nr, dirs[d],
              ct, ty, ty, ti1);
    sb_printf(&rets, ", %%r%d", nr);
    sb_printf(&types, ", %s", ti1);
    nr++;
  }
  if (cls == TL_C_F) {
    sb_printf(&body, "  %%r%d = stablehlo.is_finite %%a : (%s) -> %s\n", nr, ty, ti1);
    sb_printf(&rets, ", %%r%d", nr);
    sb_printf(&types, ", %s", ti1);
    nr++;
  }
  /* a splat constant operand (an immediate in the kernel) */
  sb_printf(&body, "  %%k = stablehlo.constant dense<%s> : %s\n", cls == TL_C_B ? "true" : cls == TL_C_F ? "-2.5" : "3", ty);
  sb_printf(&body, "  %%r%d = \"stablehlo.%s\"(%%a, %%k) : (%s, %s) -> %s\n", nr,
            cls == TL_C_B ? "xor" : "multiply", ty, ty, ty);
  sb_printf(&rets, ", %%r%d", nr);
  sb_printf(&types, ", %s", ty);
  nr++;
  sb_printf(&sb, "%s) {\n%s  return %s : %s\n}\n", sb_cstr(&types), sb_cstr(&body), sb_cstr(&rets),
            sb_cstr(&types));
  char name[64];
  snprintf(name, sizeof name, "elementwise_%s%s", tn, cc ? "_ubsan" : "");
  g_dt = dt;
  run_ops(name, sb_cstr(&sb), fill_pairs, 0, cc);
  sb_free(&body);
  sb_free(&rets);
  sb_free(&types);
  sb_free(&sb);
}

TEST(every_elementwise_op_on_edge_values) {
  for (int t = 0; t < tl_num_kernel_types; t++) elementwise_case(t, NULL);
}

/* ---------------------------------------------------------------- converts */

static void fill_edges(tensor *const *args, uint32_t n) {
  char ev[MAX_EDGE * 8];
  int ne = edge_values(g_dt, ev);
  for (uint32_t a = 0; a < n; a++)
    for (int64_t i = 0; i < args[a]->num_elems; i++)
      elem_set_bits(g_dt, args[a]->data, i, elem_get_bits(g_dt, ev, i % ne));
}

static void convert_case(int s, const char *cc) {
  hlo_dtype dt = tl_kernel_types[s].dt;
  char ev[MAX_EDGE * 8];
  int ne = edge_values(dt, ev);
  strbuf sb, body, rets, types;
  sb_init(&sb);
  sb_init(&body);
  sb_init(&rets);
  sb_init(&types);
  bool first = true;
  for (int t = 0; t < tl_num_kernel_types; t++) {
    if (t == s) continue;
    sb_printf(&body, "  %%r%d = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dx%s>\n", t, ne,
              tl_kernel_types[s].name, ne, tl_kernel_types[t].name);
    sb_printf(&rets, "%s%%r%d", first ? "" : ", ", t);
    sb_printf(&types, "%stensor<%dx%s>", first ? "" : ", ", ne, tl_kernel_types[t].name);
    first = false;
  }
  sb_printf(&sb, "func.func @main(%%a: tensor<%dx%s>) -> (%s) {\n%s  return %s : %s\n}\n", ne,
            tl_kernel_types[s].name, sb_cstr(&types), sb_cstr(&body), sb_cstr(&rets), sb_cstr(&types));
  char name[64];
  snprintf(name, sizeof name, "convert_from_%s%s", tl_kernel_types[s].name, cc ? "_ubsan" : "");
  g_dt = dt;
  run_ops(name, sb_cstr(&sb), fill_edges, 0, cc);
  sb_free(&body);
  sb_free(&rets);
  sb_free(&types);
  sb_free(&sb);
}

TEST(every_convert_on_edge_values) {
  for (int s = 0; s < tl_num_kernel_types; s++) convert_case(s, NULL);
}

/* --------------------------------------------------------------- reduces */

/* rows of ne values: integers and bools, the edge values rotated by the
 * row; floats, the edge values rotated for the first 3 rows (NaN and inf
 * must agree too), then positive finite values of mixed magnitude (no
 * cancellation: the sum's order changes only the last bits). */
static uint64_t rng_state;
static double rnd(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void fill_rows(tensor *const *args, uint32_t n) {
  char ev[MAX_EDGE * 8];
  int ne = edge_values(g_dt, ev);
  rng_state = 99;
  int64_t rows = args[0]->type->dims[0], cols = args[0]->type->dims[1];
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      int64_t k = r * cols + c;
      if (dtype_is_float(g_dt) && r >= 3)
        elem_set_f64(g_dt, args[0]->data, k, 0.9 + 0.2 * rnd()); /* products of ~300 stay normal */
      else
        elem_set_bits(g_dt, args[0]->data, k, elem_get_bits(g_dt, ev, (r + c) % ne));
    }
  (void)n;
}

/* The init value (the combiner's identity) as text. */
static void identity_text(hlo_dtype dt, const char *comb, char *out, size_t cap) {
  int cls = cls_of(dt);
  bool mx = !strcmp(comb, "maximum"), mn = !strcmp(comb, "minimum");
  bool one = !strcmp(comb, "multiply") || !strcmp(comb, "and");
  if (cls == TL_C_B) {
    snprintf(out, cap, "%s", one || mn ? "true" : "false");
  } else if (cls == TL_C_F && (mx || mn)) {
    const char *bits = dt == HLO_BF16 ? (mx ? "0xFF80" : "0x7F80")
                       : dt == HLO_F16 ? (mx ? "0xFC00" : "0x7C00")
                       : dt == HLO_F32 ? (mx ? "0xFF800000" : "0x7F800000")
                                       : (mx ? "0xFFF0000000000000" : "0x7FF0000000000000");
    snprintf(out, cap, "%s", bits);
  } else if (cls == TL_C_F) {
    snprintf(out, cap, "%s", one ? "1.0" : "0.0");
  } else if (mx) { /* integers */
    snprintf(out, cap, "%lld", cls == TL_C_U ? 0LL : (long long)int_min(dt));
  } else if (mn || (!strcmp(comb, "and") && cls == TL_C_U)) {
    snprintf(out, cap, "%llu", (unsigned long long)int_max(dt));
  } else if (!strcmp(comb, "and")) {
    snprintf(out, cap, "-1");
  } else {
    snprintf(out, cap, "%s", one ? "1" : "0");
  }
}

static void reduce_case(int t, const char *cc) {
  hlo_dtype dt = tl_kernel_types[t].dt;
  const char *tn = tl_kernel_types[t].name;
  int cls = tl_kernel_types[t].cls;
  char ev[MAX_EDGE * 8];
  int ne = edge_values(dt, ev);
  /* rows of 8 ne + 3 values: long enough for reduction lanes (kernel.h:
   * 8..64 partial accumulators, combined as a tree), with a tail */
  int rows = ne + 3, cols = 8 * ne + 3 < 131 ? 131 : 8 * ne + 3;
  static const char *const combs[] = {"add", "multiply", "maximum", "minimum", "and", "or"};
  strbuf sb, body, rets, types;
  sb_init(&sb);
  sb_init(&body);
  sb_init(&rets);
  sb_init(&types);
  int nr = 0;
  for (int c = 0; c < 6; c++) {
    if (c >= 4 && cls == TL_C_F) continue;
    char init[64];
    identity_text(dt, combs[c], init, sizeof init);
    sb_printf(&body, "  %%i%d = stablehlo.constant dense<%s> : tensor<%s>\n", nr, init, tn);
    sb_printf(&body,
              "  %%r%d = stablehlo.reduce(%%a init: %%i%d) applies stablehlo.%s across dimensions = "
              "[1] : (tensor<%dx%dx%s>, tensor<%s>) -> tensor<%dx%s>\n",
              nr, nr, combs[c], rows, cols, tn, tn, rows, tn);
    sb_printf(&rets, "%s%%r%d", nr ? ", " : "", nr);
    sb_printf(&types, "%stensor<%dx%s>", nr ? ", " : "", rows, tn);
    nr++;
  }
  sb_printf(&sb, "func.func @main(%%a: tensor<%dx%dx%s>) -> (%s) {\n%s  return %s : %s\n}\n", rows,
            cols, tn, sb_cstr(&types), sb_cstr(&body), sb_cstr(&rets), sb_cstr(&types));
  char name[64];
  snprintf(name, sizeof name, "reduce_%s%s", tn, cc ? "_ubsan" : "");
  g_dt = dt;
  /* float sums and products: the kernel accumulates in order in a wider
   * type (f32 for bf16/f16, f64 for f32 sums) and rounds once, the
   * interpreter rounds each step to the type, so they may differ by up to
   * cols half-ULPs of the type (products of 37 values in order: bf16 3 ULP, f32 7 ULP
   * seen) */
  double rel = cols * (dt == HLO_BF16 ? 0x1p-8 : dt == HLO_F16 ? 0x1p-11 : dt == HLO_F32 ? 0x1p-24 : 0x1p-53);
  run_ops(name, sb_cstr(&sb), fill_rows, cls == TL_C_F ? rel : 0, cc);
  sb_free(&body);
  sb_free(&rets);
  sb_free(&types);
  sb_free(&sb);
}

TEST(every_reduce_combiner_on_edge_values) {
  for (int t = 0; t < tl_num_kernel_types; t++) reduce_case(t, NULL);
}

/* ------------------------------------------------------------ exp sweep */

/* Every 4093rd f32 bit pattern (a million values over the whole range:
 * both signs, denormals, the overflow and underflow thresholds, inf, NaN). */
static void fill_sweep(tensor *const *args, uint32_t n) {
  for (int64_t i = 0; i < args[0]->num_elems; i++)
    elem_set_bits(HLO_F32, args[0]->data, i, (uint64_t)(uint32_t)(i * 4093 + 7));
  (void)n;
}

/* The kernels compute f32 exp with hlo_expf (emit_c.c: XLA's all-f32
 * polynomial, so that it vectorises): within EXP_F32_ULPS of glibc's expf,
 * which the interpreter calls; logistic goes through hlo_expf too (within
 * LOGISTIC_F32_ULPS). f32 tanh is XLA's rational approximation: within
 * TANH_F32_ULPS of glibc's tanhf (run_ops). */
TEST(exp_logistic_tanh_within_ulps_over_the_float_range) {
  enum { N = 1049344 }; /* 2^32 / 4093 */
  char text[800];
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<%dxf32>) -> (tensor<%dxf32>, tensor<%dxf32>, tensor<%dxf32>) {\n"
           "  %%0 = stablehlo.exponential %%a : tensor<%dxf32>\n"
           "  %%1 = stablehlo.logistic %%a : tensor<%dxf32>\n"
           "  %%2 = stablehlo.tanh %%a : tensor<%dxf32>\n"
           "  return %%0, %%1, %%2 : tensor<%dxf32>, tensor<%dxf32>, tensor<%dxf32>\n}\n",
           N, N, N, N, N, N, N, N, N, N);
  run_ops("exp_tanh_sweep", text, fill_sweep, 0, NULL);
}

/* The same kernels built with UBSan: undefined behaviour aborts. */
TEST(generated_c_is_free_of_undefined_behaviour) {
  if (compiler_missing == 1) {
    printf("ubsan: skipped (no C compiler)\n");
    return;
  }
  make_ubsan_cc();
  if (ubsan_state != 1) {
    printf("ubsan: skipped (%s)\n", ubsan_why);
    remove_ubsan_cc();
    return;
  }
  /* the cache would key entries by the temporary wrapper's path */
  const char *old = getenv("HLO_CACHE_DIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("HLO_CACHE_DIR", "off", 1);
  for (int t = 0; t < tl_num_kernel_types; t++) elementwise_case(t, ubsan_cc);
  for (int s = 0; s < tl_num_kernel_types; s++) convert_case(s, ubsan_cc);
  for (int t = 0; t < tl_num_kernel_types; t++) reduce_case(t, ubsan_cc);
  if (saved) setenv("HLO_CACHE_DIR", saved, 1);
  else unsetenv("HLO_CACHE_DIR");
  free(saved);
  remove_ubsan_cc();
}

TEST_MAIN()
