/* test_cuda_emit.c — the CUDA dialect (backend/cuda/emit_cuda.h) and NVRTC
 * (backend/cuda/nvrtc.h), with no GPU: kernels are lowered as
 * test_kernel_ops.c lowers them (each op alone, on every element type the
 * kernels hold; every convert; every reduce combiner on long and short
 * rows; softmax, LayerNorm and a reduce without an identity as one
 * multi-stage kernel each), scheduled with cuda_schedule, printed with
 * cuda_emit_module and compiled by NVRTC for sm_90: every unit must
 * compile. Also: a source that does not compile gives HLO_INTERNAL with the
 * compiler's log; a machine without libnvrtc (simulated in a child process
 * with HLO_NVRTC_LIB=/nonexistent) gives HLO_UNAVAILABLE; the launch
 * geometry covers every tile (a huge 1-d kernel too). Where libnvrtc cannot
 * be loaded, the compile checks print "skipped: <reason>" and pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/cpu/cpu.h"
#include "backend/cuda/emit_cuda.h"
#include "backend/cuda/nvrtc.h"
#include "codegen/lower_fusion.h"
#include "ir/element.h"
#include "support/strbuf.h"
#include "test.h"
#include "testlib.h"

/* ---------------------------------------------------------------- nvrtc */

static int nvrtc_state = -1; /* -1 untried, 0 unavailable, 1 loaded */
static char nvrtc_why[512];
static int units_compiled, kernels_compiled;

static bool have_nvrtc(void) {
  if (nvrtc_state < 0) {
    hlo_status st = nvrtc_load();
    nvrtc_state = !st;
    if (st) snprintf(nvrtc_why, sizeof nvrtc_why, "%s", hlo_status_message(st));
    else printf("using %s\n", nvrtc_version_text());
    hlo_status_free(st);
  }
  return nvrtc_state == 1;
}

/* Compiles `src` for sm_90 (a check); prints "skipped" without NVRTC. On
 * failure, the log and the source go to stderr. */
static void compile_ok(const char *src, const char *what, uint32_t nkernels) {
  if (!have_nvrtc()) {
    printf("%s: skipped: %s\n", what, nvrtc_why);
    return;
  }
  void *cubin = NULL;
  size_t len = 0;
  hlo_status st = nvrtc_compile(src, what, 90, &cubin, &len);
  if (st) {
    fprintf(stderr, "--- %s does not compile:\n%s\n--- source:\n%s\n", what,
            hlo_status_message(st), src);
    hlo_status_free(st);
  } else {
    units_compiled++;
    kernels_compiled += (int)nkernels;
  }
  CHECK(!st);
  CHECK(st || (cubin && len > 16));
  free(cubin);
}

/* ------------------------------------------------------------- lowering */

static hlo_module_ir *g_mod; /* the module of lower_text's kernels */

/* Kernels of `text`'s @main: with `whole`, all its ops as one fusion (one
 * kernel of every returned value); else each returned value's op alone
 * with the constants it reads (test_kernel_ops.c's way). Scheduled with
 * cuda_schedule. Returns the count (ks[] filled, caller destroys). */
static uint32_t lower_text(const char *name, const char *text, bool whole, kernel **ks,
                           uint32_t cap) {
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_text(name, text, 0, &st);
  if (!m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
  }
  CHECK(m != NULL);
  if (!m) return 0;
  const hlo_func *f = m->funcs;
  const hlo_op *ret = NULL;
  const hlo_op *all[256];
  uint32_t nall = 0;
  for (const hlo_op *op = f ? f->body.block.first : NULL; op; op = op->next) {
    if (op->opcode == OP_FUNC_RETURN) ret = op;
    else if (nall < 256) all[nall++] = op;
  }
  uint32_t n = 0;
  if (whole && ret) {
    st = lower_fusion(all, nall, (const hlo_value *const *)ret->operands, ret->num_operands, "k",
                      &ks[0]);
    if (st) hlo_status_print(st, stderr);
    CHECK(!st);
    n = st ? 0 : 1;
    hlo_status_free(st);
  }
  for (uint32_t i = 0; !whole && ret && i < ret->num_operands && n < cap; i++) {
    const hlo_op *op = ret->operands[i]->def;
    const hlo_op *ops[4];
    uint32_t no = 0;
    ops[no++] = op;
    for (uint32_t a = 0; a < op->num_operands && no < 4; a++)
      if (op->operands[a]->def) ops[no++] = op->operands[a]->def;
    const hlo_value *outv = &op->results[0];
    st = lower_fusion(ops, no, &outv, 1, "k", &ks[n]);
    if (st) {
      fprintf(stderr, "  %s: result %u (%s) does not lower: ", name, i, op_name(op->opcode));
      hlo_status_print(st, stderr);
      hlo_status_free(st);
      CHECK(0);
      continue;
    }
    n++;
  }
  for (uint32_t i = 0; i < n; i++) cuda_schedule(ks[i]);
  g_mod = m; /* the kernels borrow from it: freed by free_kernels */
  return n;
}

/* Emits kernels ks[0..n) as one unit (named NAME_i), checks each launch
 * geometry, compiles the unit; returns the source (caller frees) when
 * `keep`. */
static char *emit_and_compile(const char *what, kernel **ks, uint32_t n, bool keep) {
  char (*names)[48] = calloc(n ? n : 1, sizeof *names);
  const char **np = calloc(n ? n : 1, sizeof *np);
  for (uint32_t i = 0; i < n; i++) {
    snprintf(names[i], sizeof names[i], "%s_%u", what, i);
    np[i] = names[i];
    /* without the SM count the grid covers every tile; with it, at most
     * what 132 SMs hold at once (2048 threads each) */
    cuda_geometry g = cuda_launch_geometry(ks[i], 0), g132 = cuda_launch_geometry(ks[i], 132);
    int64_t tiles = kernel_num_tiles(ks[i]);
    cuda_form_info f = cuda_kernel_form(ks[i]);
    uint64_t per_block = f.form == CUDA_FORM_BLOCK_ROWS ? 1
                         : f.form == CUDA_FORM_REG_ROWS ? f.rows_per_block : g.block_x;
    CHECK(g.block_x >= 32 && g.block_x <= 1024 && g.block_x % 32 == 0);
    CHECK((uint64_t)g.grid_x * per_block >= (uint64_t)tiles || g.grid_x == 2147483647u);
    CHECK(tiles == 0 || g.grid_x > 0);
    CHECK(g.shared_bytes <= 227 * 1024);
    CHECK(g132.block_x == g.block_x && g132.grid_x <= g.grid_x &&
          (uint64_t)g132.grid_x * g132.block_x <= 132u * 2048u && (tiles == 0 || g132.grid_x > 0));
  }
  strbuf sb;
  sb_init(&sb);
  hlo_status st = cuda_emit_module((const kernel *const *)ks, np, n, &sb);
  if (st) hlo_status_print(st, stderr);
  CHECK(!st);
  for (uint32_t i = 0; i < n && !st; i++) {
    char sig[96];
    /* (rows in registers carry __launch_bounds__ before void) */
    snprintf(sig, sizeof sig, " void %s(hlo_bufs B,", names[i]);
    const char *at = strstr(sb_cstr(&sb), sig);
    const char *line = at;
    while (line && line > sb_cstr(&sb) && line[-1] != '\n') line--;
    CHECK(at && !strncmp(line, "extern \"C\" __global__ ", strlen("extern \"C\" __global__ ")));
  }
  if (!st) compile_ok(sb_cstr(&sb), what, n);
  hlo_status_free(st);
  char *src = keep ? strdup(sb_cstr(&sb)) : NULL;
  sb_free(&sb);
  free(names);
  free(np);
  return src;
}

static void free_kernels(kernel **ks, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) kernel_destroy(ks[i]);
  module_free(g_mod);
  g_mod = NULL;
}

/* ---------------------------------------------------------------- tests */

static int ops_covered, converts_covered, reduces_covered;

TEST(every_elementwise_op_on_every_type_compiles) {
  for (int t = 0; t < tl_num_kernel_types; t++) {
    const char *tn = tl_kernel_types[t].name;
    int cls = tl_kernel_types[t].cls;
    char ty[64], ti1[64];
    snprintf(ty, sizeof ty, "tensor<37x5x%s>", tn);
    snprintf(ti1, sizeof ti1, "tensor<37x5xi1>");
    strbuf body, rets, types, sb;
    sb_init(&body);
    sb_init(&rets);
    sb_init(&types);
    sb_init(&sb);
    int nr = 0;
    for (int o = 0; o < tl_num_kernel_ops; o++) {
      if (!(tl_kernel_ops[o].cls & cls)) continue;
      const char *on = tl_kernel_ops[o].name;
      if (tl_kernel_ops[o].arity == 1)
        sb_printf(&body, "  %%r%d = \"stablehlo.%s\"(%%a) : (%s) -> %s\n", nr, on, ty, ty);
      else if (tl_kernel_ops[o].arity == 2)
        sb_printf(&body, "  %%r%d = \"stablehlo.%s\"(%%a, %%b) : (%s, %s) -> %s\n", nr, on, ty, ty,
                  ty);
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
    static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    const char *ct = cls == TL_C_F ? "FLOAT" : cls == TL_C_I ? "SIGNED" : "UNSIGNED";
    for (int d = 0; d < 6; d++) {
      sb_printf(&body, "  %%r%d = stablehlo.compare %s, %%a, %%b, %s : (%s, %s) -> %s\n", nr,
                dirs[d], ct, ty, ty, ti1);
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
    /* splat constants: an immediate, and +-inf / NaN literals for floats */
    sb_printf(&body, "  %%k = stablehlo.constant dense<%s> : %s\n",
              cls == TL_C_B ? "true" : cls == TL_C_F ? "-2.5" : "3", ty);
    sb_printf(&body, "  %%r%d = \"stablehlo.%s\"(%%a, %%k) : (%s, %s) -> %s\n", nr,
              cls == TL_C_B ? "xor" : "multiply", ty, ty, ty);
    sb_printf(&rets, ", %%r%d", nr);
    sb_printf(&types, ", %s", ty);
    nr++;
    if (cls == TL_C_F) {
      const char *inf = !strcmp(tn, "bf16") ? "0xFF80" : !strcmp(tn, "f16") ? "0xFC00"
                        : !strcmp(tn, "f32") ? "0xFF800000" : "0xFFF0000000000000";
      const char *nan = !strcmp(tn, "bf16") ? "0x7FC0" : !strcmp(tn, "f16") ? "0x7E00"
                        : !strcmp(tn, "f32") ? "0x7FC00000" : "0x7FF8000000000000";
      sb_printf(&body, "  %%ki = stablehlo.constant dense<%s> : %s\n", inf, ty);
      sb_printf(&body, "  %%kn = stablehlo.constant dense<%s> : %s\n", nan, ty);
      sb_printf(&body, "  %%r%d = stablehlo.maximum %%a, %%ki : %s\n", nr, ty);
      sb_printf(&rets, ", %%r%d", nr);
      sb_printf(&types, ", %s", ty);
      nr++;
      sb_printf(&body, "  %%r%d = stablehlo.add %%a, %%kn : %s\n", nr, ty);
      sb_printf(&rets, ", %%r%d", nr);
      sb_printf(&types, ", %s", ty);
      nr++;
    }
    sb_printf(&sb, "func.func @main(%%a: %s, %%b: %s, %%p: %s, %%c: %s) -> (%s) {\n%s  return %s : %s\n}\n",
              ty, ty, ti1, ty, sb_cstr(&types), sb_cstr(&body), sb_cstr(&rets), sb_cstr(&types));
    kernel *ks[128];
    uint32_t n = lower_text("ops.mlir", sb_cstr(&sb), false, ks, 128);
    CHECK_EQ_INT(n, nr);
    char what[48];
    snprintf(what, sizeof what, "ops_%s", tn);
    char *src = emit_and_compile(what, ks, n, false);
    free(src);
    ops_covered += (int)n;
    free_kernels(ks, n);
    sb_free(&body);
    sb_free(&rets);
    sb_free(&types);
    sb_free(&sb);
  }
  printf("elementwise: %d kernels (op x type) emitted\n", ops_covered);
}

TEST(every_convert_compiles) {
  for (int s = 0; s < tl_num_kernel_types; s++) {
    strbuf sb, body, rets, types;
    sb_init(&sb);
    sb_init(&body);
    sb_init(&rets);
    sb_init(&types);
    int nr = 0;
    for (int t = 0; t < tl_num_kernel_types; t++) {
      if (t == s) continue;
      sb_printf(&body, "  %%r%d = stablehlo.convert %%a : (tensor<300x%s>) -> tensor<300x%s>\n", t,
                tl_kernel_types[s].name, tl_kernel_types[t].name);
      sb_printf(&rets, "%s%%r%d", nr ? ", " : "", t);
      sb_printf(&types, "%stensor<300x%s>", nr ? ", " : "", tl_kernel_types[t].name);
      nr++;
    }
    sb_printf(&sb, "func.func @main(%%a: tensor<300x%s>) -> (%s) {\n%s  return %s : %s\n}\n",
              tl_kernel_types[s].name, sb_cstr(&types), sb_cstr(&body), sb_cstr(&rets), sb_cstr(&types));
    kernel *ks[16];
    uint32_t n = lower_text("convert.mlir", sb_cstr(&sb), false, ks, 16);
    CHECK_EQ_INT(n, nr);
    char what[48];
    snprintf(what, sizeof what, "convert_from_%s", tl_kernel_types[s].name);
    free(emit_and_compile(what, ks, n, false));
    converts_covered += (int)n;
    free_kernels(ks, n);
    sb_free(&body);
    sb_free(&rets);
    sb_free(&types);
    sb_free(&sb);
  }
  printf("converts: %d kernels emitted\n", converts_covered);
}

/* Each reduce combiner on rows of `cols` (long: a block per row; short:
 * a thread per row). */
static void reduce_case(int t, int rows, int cols, bool check_spread) {
  const char *tn = tl_kernel_types[t].name;
  int cls = tl_kernel_types[t].cls;
  static const char *const combs[] = {"add", "multiply", "maximum", "minimum", "and", "or"};
  strbuf sb, body, rets, types;
  sb_init(&sb);
  sb_init(&body);
  sb_init(&rets);
  sb_init(&types);
  int nr = 0;
  for (int c = 0; c < 6; c++) {
    if (c >= 4 && cls == TL_C_F) continue;
    const char *init = cls == TL_C_B ? (c == 1 || c == 3 || c == 4 ? "true" : "false")
                       : cls == TL_C_F ? (c == 1 ? "1.0" : "0.0")
                                    : (c == 1 ? "1" : "0");
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
  kernel *ks[8];
  uint32_t n = lower_text("reduce.mlir", sb_cstr(&sb), false, ks, 8);
  CHECK_EQ_INT(n, nr);
  uint32_t most_threads = 1;
  for (uint32_t i = 0; i < n; i++) {
    cuda_form_info f = cuda_kernel_form(ks[i]);
    CHECK(f.form == CUDA_FORM_REG_ROWS); /* every combiner has an identity */
    CHECK(check_spread == (f.row_threads > 1));
    if (f.row_threads > most_threads) most_threads = f.row_threads;
  }
  char what[48];
  snprintf(what, sizeof what, "reduce_%s_%dx%d", tn, rows, cols);
  char *src = emit_and_compile(what, ks, n, true);
  /* a row over several warps also meets in shared memory */
  if (check_spread && src)
    CHECK(strstr(src, "hlo_shfl_xor(acc") &&
          (most_threads <= 32 || strstr(src, "__syncthreads();")));
  free(src);
  reduces_covered += (int)n;
  free_kernels(ks, n);
  sb_free(&body);
  sb_free(&rets);
  sb_free(&types);
  sb_free(&sb);
}

TEST(every_reduce_combiner_compiles_on_long_and_short_rows) {
  for (int t = 0; t < tl_num_kernel_types; t++) {
    reduce_case(t, 7, 1000, true);
    reduce_case(t, 100, 13, false);
  }
  printf("reduces: %d kernels emitted\n", reduces_covered);
}


static void layernorm_text(const char *ty, int rows, int cols, char *out, size_t cap) {
  char m[64], r[64], c[64];
  snprintf(m, sizeof m, "tensor<%dx%dx%s>", rows, cols, ty);
  snprintf(r, sizeof r, "tensor<%dx%s>", rows, ty);
  snprintf(c, sizeof c, "tensor<%dx%s>", cols, ty);
  snprintf(out, cap,
           "func.func @main(%%x: %s, %%g: %s) -> (%s, %s) {\n"
           "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
           "  %%n = stablehlo.constant dense<%d.0> : %s\n"
           "  %%eps = stablehlo.constant dense<1.0e-5> : %s\n"
           "  %%s = stablehlo.reduce(%%x init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
           "  %%mean = stablehlo.divide %%s, %%n : %s\n"
           "  %%mb = stablehlo.broadcast_in_dim %%mean, dims = [0] : (%s) -> %s\n"
           "  %%c = stablehlo.subtract %%x, %%mb : %s\n"
           "  %%t = stablehlo.tanh %%c : %s\n"
           "  %%sq = stablehlo.multiply %%t, %%t : %s\n"
           "  %%ss = stablehlo.reduce(%%sq init: %%zero) applies stablehlo.add across dimensions = [1] : (%s, tensor<%s>) -> %s\n"
           "  %%var = stablehlo.divide %%ss, %%n : %s\n"
           "  %%ve = stablehlo.add %%var, %%eps : %s\n"
           "  %%rs = stablehlo.rsqrt %%ve : %s\n"
           "  %%rb = stablehlo.broadcast_in_dim %%rs, dims = [0] : (%s) -> %s\n"
           "  %%y = stablehlo.multiply %%t, %%rb : %s\n"
           "  %%gb = stablehlo.broadcast_in_dim %%g, dims = [1] : (%s) -> %s\n"
           "  %%y2 = stablehlo.multiply %%y, %%gb : %s\n"
           "  return %%y2, %%mean : %s, %s\n}\n",
           m, c, m, r, ty, cols, r, r, m, ty, r, r, r, m, m, m, m, m, ty, r, r, r, r, r, m, m, c,
           m, m, m, r);
}

TEST(row_fusions_compile_as_one_kernel) {
  static const int shapes[][2] = {{64, 4096}, {5, 1000}, {300, 24}, {3, 100000 / 8}};
  static const char *const tys[] = {"f32", "bf16", "f16"};
  char text[4096];
  for (int s = 0; s < 4; s++)
    for (int t = 0; t < 3; t++)
      for (int p = 0; p < 2; p++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        if (p == 0) tl_softmax_program(tys[t], rows, cols, text, sizeof text);
        else layernorm_text(tys[t], rows, cols, text, sizeof text);
        kernel *ks[1];
        uint32_t n = lower_text("row.mlir", text, true, ks, 1);
        CHECK_EQ_INT(n, 1);
        if (!n) {
          free_kernels(ks, 0);
          continue;
        }
        CHECK(ks[0]->num_stages >= 3);
        /* rows of at most 8192 in registers, longer ones a block each */
        cuda_form_info f = cuda_kernel_form(ks[0]);
        cuda_geometry g = cuda_launch_geometry(ks[0], 0);
        if (cols <= 8192) {
          CHECK(f.form == CUDA_FORM_REG_ROWS);
          CHECK((int64_t)f.row_threads * f.chunks * f.vec >= cols);
          CHECK_EQ_INT(g.shared_bytes, 0);
          CHECK_EQ_INT(g.block_x, f.row_threads * f.rows_per_block);
          CHECK_EQ_INT(g.grid_x, (rows + (int)f.rows_per_block - 1) / (int)f.rows_per_block);
        } else {
          CHECK(f.form == CUDA_FORM_BLOCK_ROWS);
          if (ks[0]->num_temps) CHECK(g.shared_bytes >= (uint32_t)cols * 4);
          CHECK_EQ_INT(g.grid_x, rows);
        }
        char what[64];
        snprintf(what, sizeof what, "%s_%s_%dx%d", p ? "layernorm" : "softmax", tys[t], rows, cols);
        free(emit_and_compile(what, ks, n, false));
        free_kernels(ks, n);
      }
}

TEST(reduce_without_identity_folds_in_thread_0) {
  const char *text =
      "func.func @main(%a: tensor<6x500xf32>) -> tensor<6xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<6x500xf32>, tensor<f32>) -> tensor<6xf32>\n"
      "    reducer(%x: tensor<f32>, %y: tensor<f32>) {\n"
      "      %h = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "      %s = stablehlo.multiply %x, %h : tensor<f32>\n"
      "      %t = stablehlo.add %s, %y : tensor<f32>\n"
      "      stablehlo.return %t : tensor<f32>\n"
      "    }\n"
      "  return %r : tensor<6xf32>\n}\n";
  kernel *ks[1];
  uint32_t n = lower_text("noid.mlir", text, true, ks, 1);
  CHECK_EQ_INT(n, 1);
  if (!n) {
    free_kernels(ks, 0);
    return;
  }
  int64_t i;
  double f;
  CHECK(!kernel_stage_identity(ks[0], 0, &i, &f));
  CHECK(ks[0]->sched.row_threads > 1);
  char *src = emit_and_compile("noid", ks, n, true);
  CHECK(src && strstr(src, "if (hlo_tid == 0) {") && !strstr(src, "hlo_shfl_xor(acc"));
  free(src);
  free_kernels(ks, n);
}

/* f16 rows of dims 10 x 7 x `inner`, reduced over all three */
static void several_row_dims_text(int inner, char *out, size_t cap) {
  char m[64];
  snprintf(m, sizeof m, "tensor<6x10x7x%dxf16>", inner);
  snprintf(out, cap,
           "func.func @main(%%x: %s) -> (%s, tensor<6xf16>) {\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f16>\n"
           "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across dimensions = [1, 2, 3] : (%s, tensor<f16>) -> tensor<6xf16>\n"
           "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0] : (tensor<6xf16>) -> %s\n"
           "  %%e = stablehlo.exponential %%x : %s\n"
           "  %%y = stablehlo.divide %%e, %%sb : %s\n"
           "  return %%y, %%s : %s, tensor<6xf16>\n}\n",
           m, m, m, m, m, m, m);
}

TEST(several_row_dims_spread_the_linear_row) {
  char text[2048];
  /* 2310 elements: in registers (about 32 a thread: 128 threads, 19
   * scalar chunks each), the coordinates from the linear position */
  several_row_dims_text(33, text, sizeof text);
  kernel *ks[1];
  uint32_t n = lower_text("rows3.mlir", text, true, ks, 1);
  CHECK_EQ_INT(n, 1);
  if (n) {
    CHECK_EQ_INT(ks[0]->num_reduce_dims, 3);
    cuda_form_info f = cuda_kernel_form(ks[0]);
    CHECK(f.form == CUDA_FORM_REG_ROWS && f.vec == 1 && f.row_threads == 128 && f.chunks == 19);
    char *src = emit_and_compile("rows3", ks, n, true);
    CHECK(src && strstr(src, "const int64_t x1 = hlo_p / 231;") &&
          strstr(src, "const int64_t x2 = hlo_p / 33 % 7;") &&
          strstr(src, "const int64_t hlo_xb = hlo_p % 33;"));
    free(src);
  }
  free_kernels(ks, n);
  /* 23310 elements: a block per row, the linear position spread */
  several_row_dims_text(333, text, sizeof text);
  n = lower_text("rows3l.mlir", text, true, ks, 1);
  CHECK_EQ_INT(n, 1);
  if (n) {
    CHECK_EQ_INT(ks[0]->sched.row_threads, 256);
    CHECK(cuda_kernel_form(ks[0]).form == CUDA_FORM_BLOCK_ROWS);
    char *src = emit_and_compile("rows3l", ks, n, true);
    CHECK(src && strstr(src, "for (int64_t xr = hlo_tid; xr < 23310; xr += 256) {"));
    free(src);
  }
  free_kernels(ks, n);
}

/* A kernel out = in (f32) over dims[0..rank), made by hand. */
static kernel *copy_kernel(uint32_t rank, const int64_t *dims) {
  kernel *k = NULL;
  hlo_loc loc = {0};
  hlo_status st = kernel_create("copy", rank, dims, &loc, &k);
  uint32_t in = 0, v = 0;
  if (!st) st = kernel_add_input(k, HLO_F32, rank, dims, NULL, &in);
  kinst ld = kinst_make(KI_LOAD, HLO_F32);
  ld.input = in;
  ld.map = kernel_map_identity(rank);
  if (!st) st = kernel_add_inst(k, false, &ld, &v);
  kinst one = kinst_make(KI_CONST, HLO_F32);
  one.cval.f = 1.0;
  uint32_t c = 0, a = 0;
  if (!st) st = kernel_add_inst(k, false, &one, &c);
  kinst add = kinst_make(KI_OP, HLO_F32);
  add.op = OP_ADD;
  add.num_args = 2;
  add.args[0] = v;
  add.args[1] = c;
  if (!st) st = kernel_add_inst(k, false, &add, &a);
  kernel_map id = kernel_map_identity(rank);
  if (!st) st = kernel_add_output(k, HLO_F32, rank, dims, NULL, &id, a);
  CHECK(!st);
  hlo_status_free(st);
  if (k) cuda_schedule(k);
  return k;
}

TEST(launch_geometry_covers_every_tile) {
  static const struct {
    uint32_t rank;
    int64_t dims[4];
  } shapes[] = {
      {0, {0}},          {1, {1}},          {1, {31}},        {1, {257}},
      {1, {1 << 20}},    {2, {3, 5}},       {3, {7, 1, 300}}, {2, {0, 8}},
      {1, {(int64_t)1 << 40}},                                 /* huge: the grid is capped */
      {4, {1 << 16, 1 << 16, 2, 3}},
  };
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    kernel *k = copy_kernel(shapes[s].rank, shapes[s].dims);
    if (!k) continue;
    int64_t tiles = kernel_num_tiles(k), points = 1;
    for (uint32_t d = 0; d < k->rank; d++) points *= k->dims[d];
    /* one point per tile, or a chunk of vec points (contiguous f32: 8,
     * else 4 or 2, where the innermost dim divides) */
    cuda_form_info f = cuda_kernel_form(k);
    int64_t inner = k->rank && points > 0 ? k->dims[k->rank - 1] : 1; /* empty: no chunks */
    CHECK(f.form == (inner > 0 && inner % 2 == 0 ? CUDA_FORM_CHUNKS : CUDA_FORM_POINTS));
    CHECK_EQ_INT(f.vec, inner % 8 == 0 ? 8 : inner % 4 == 0 ? 4 : inner % 2 == 0 ? 2 : 1);
    CHECK_EQ_INT(tiles * f.vec, points);
    cuda_geometry g = cuda_launch_geometry(k, 0);
    cuda_geometry g132 = cuda_launch_geometry(k, 132);
    CHECK(g132.block_x == g.block_x && g132.grid_x <= g.grid_x &&
          (uint64_t)g132.grid_x * g132.block_x <= 132u * 2048u && (tiles == 0) == (g132.grid_x == 0));
    CHECK(g.grid_x <= 2147483647u);
    CHECK(g.block_x >= 32 && g.block_x <= 1024);
    if (tiles == 0) CHECK_EQ_INT(g.grid_x, 0);
    /* every tile is some thread's (the kernel's grid-stride loop covers
     * the rest when the grid is capped) */
    if ((uint64_t)tiles <= 2147483647ull * g.block_x)
      CHECK((uint64_t)g.grid_x * g.block_x >= (uint64_t)tiles &&
            (uint64_t)(g.grid_x - (tiles > 0)) * g.block_x < (uint64_t)tiles + (tiles == 0));
    else
      CHECK_EQ_INT(g.grid_x, 2147483647u);
    kernel_destroy(k);
  }
  /* the huge one compiles (64-bit tile indices) */
  int64_t huge = (int64_t)1 << 40;
  kernel *k = copy_kernel(1, &huge);
  if (k) {
    char *src = emit_and_compile("huge", &k, 1, true);
    CHECK(src && strstr(src, "t += (int64_t)gridDim.x * blockDim.x"));
    free(src);
    kernel_destroy(k);
  }
}

TEST(too_many_buffers_is_unimplemented) {
  int64_t dims[1] = {10};
  kernel *k = copy_kernel(1, dims);
  if (!k) return;
  for (int i = 0; i < CUDA_MAX_BUFS; i++) {
    uint32_t idx;
    hlo_status st = kernel_add_input(k, HLO_F32, 1, dims, NULL, &idx);
    CHECK(!st);
    hlo_status_free(st);
  }
  strbuf sb;
  sb_init(&sb);
  const char *name = "many";
  hlo_status st = cuda_emit_module((const kernel *const *)&k, &name, 1, &sb);
  CHECK(st && hlo_status_code_of(st) == HLO_UNIMPLEMENTED);
  hlo_status_free(st);
  sb_free(&sb);
  kernel_destroy(k);
}

TEST(bad_schedules_are_internal) {
  const char *text =
      "func.func @main(%a: tensor<6x500xf32>) -> tensor<6xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<6x500xf32>, tensor<f32>) -> tensor<6xf32>\n"
      "  return %r : tensor<6xf32>\n}\n";
  kernel *ks[1];
  uint32_t n = lower_text("bad.mlir", text, true, ks, 1);
  CHECK_EQ_INT(n, 1);
  if (!n) {
    free_kernels(ks, 0);
    return;
  }
  /* rows in registers; as a block per row: */
  CHECK(cuda_kernel_form(ks[0]).form == CUDA_FORM_REG_ROWS);
  ks[0]->sched.row_threads = 256;
  CHECK(cuda_kernel_form(ks[0]).form == CUDA_FORM_BLOCK_ROWS);
  const char *name = "bad";
  strbuf sb;
  sb_init(&sb);
  /* the C dialect has no threads per row */
  hlo_status st = cstyle_emit_kernel(cpu_c_dialect(), ks[0], &sb);
  CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
  hlo_status_free(st);
  /* not a power of two */
  ks[0]->sched.row_threads = 48;
  st = cuda_emit_module((const kernel *const *)ks, &name, 1, &sb);
  CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
  hlo_status_free(st);
  /* with reduction lanes */
  ks[0]->sched.row_threads = 64;
  ks[0]->sched.reduce_lanes[0] = 8;
  st = cuda_emit_module((const kernel *const *)ks, &name, 1, &sb);
  CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
  hlo_status_free(st);
  sb_free(&sb);
  free_kernels(ks, n);
}

TEST(broken_source_is_internal_with_the_log) {
  if (!have_nvrtc()) {
    printf("broken source: skipped: %s\n", nvrtc_why);
    return;
  }
  void *cubin = (void *)1;
  size_t len = 1;
  hlo_status st = nvrtc_compile("extern \"C\" __global__ void k() { this_is_not_declared(); }\n",
                                "broken.cu", 90, &cubin, &len);
  CHECK(st && hlo_status_code_of(st) == HLO_INTERNAL);
  CHECK(st && strstr(hlo_status_message(st), "this_is_not_declared"));
  CHECK(cubin == NULL && len == 0);
  hlo_status_free(st);
}

TEST(no_libnvrtc_is_unavailable) {
  /* nvrtc_load loads once per process: the child process (this binary
   * again, with HLO_NVRTC_LIB naming no library) checks the error, and its
   * compile checks print "skipped" and pass */
  if (getenv("HLO_TEST_CUDA_CHILD")) {
    hlo_status st = nvrtc_load();
    CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE);
    CHECK(st && strstr(hlo_status_message(st), "/nonexistent/libnvrtc.so"));
    hlo_status_free(st);
    void *cubin = NULL;
    size_t len = 0;
    st = nvrtc_compile("", "x.cu", 90, &cubin, &len);
    CHECK(st && hlo_status_code_of(st) == HLO_UNAVAILABLE && !nvrtc_version_text());
    hlo_status_free(st);
    return;
  }
  char path[] = "/tmp/hlo_cuda_emit_child.XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    setenv("HLO_NVRTC_LIB", "/nonexistent/libnvrtc.so", 1);
    setenv("HLO_TEST_CUDA_CHILD", "1", 1);
    execl("/proc/self/exe", "test_cuda_emit", (char *)NULL);
    _exit(127);
  }
  close(fd);
  CHECK(pid > 0);
  int status = 0;
  if (pid > 0) CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  size_t len = 0;
  char *out = tl_read_file(path, &len);
  CHECK(out && strstr(out, "ops_f32: skipped: cannot load NVRTC") && strstr(out, " 0 failed"));
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && out) fprintf(stderr, "child:\n%s\n", out);
  free(out);
  unlink(path);
}

TEST(summary) {
  printf("compiled with NVRTC: %d units, %d kernels\n", units_compiled, kernels_compiled);
}

TEST_MAIN()
