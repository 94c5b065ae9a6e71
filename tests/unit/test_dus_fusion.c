/* test_dus_fusion.c — the in-place dynamic-update-slice fusion (XLA's loop
 * fusion with a dynamic_update_slice root; src/passes/fusion.c rule 6,
 * codegen/kernel.h "Dynamic-update outputs", executable_cpu.c's kernel
 * step `inplace`): the fused IR (the DUS is the root of a "loop" fusion
 * that computes its update; its operand and start indices are inputs), and
 * the CPU backend's results against the interpreter, bit for bit, for f32,
 * bf16 and i32, with start indices in range, past the end (clamped) and
 * negative; a while loop stacking its updates (a scan); an operand read
 * after the update (in place illegal: the kernel copies it first); the
 * same on cpu-devmem (the device-memory path: buffers apart from the
 * host's, the kernel's ranges recorded for the graph). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen/cstyle.h"
#include "codegen/lower_fusion.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "runtime/runtime.h"
#include "test.h"
#include "testlib.h"

/* A DUS of a [2,4,3] update (computed: u*u - u) into an operand computed
 * from %a ([6,4,8]); start indices %i (an argument: 0..8 at random, past
 * the end clamped to 4), 0 and the constant K; the result is read by one
 * more op (so the DUS result is a temporary: in place over %s). */
static char *dus_program(const char *t, int k) {
  static const char fmt[] =
      "func.func @main(%%a: tensor<6x4x8x%s>, %%u: tensor<2x4x3x%s>, %%i: tensor<i32>)\n"
      "    -> tensor<6x4x8x%s> {\n"
      "  %%s = stablehlo.add %%a, %%a : tensor<6x4x8x%s>\n"
      "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %%ck = stablehlo.constant dense<%d> : tensor<i32>\n"
      "  %%v = stablehlo.multiply %%u, %%u : tensor<2x4x3x%s>\n"
      "  %%w = stablehlo.subtract %%v, %%u : tensor<2x4x3x%s>\n"
      "  %%r = stablehlo.dynamic_update_slice %%s, %%w, %%i, %%c0, %%ck :\n"
      "       (tensor<6x4x8x%s>, tensor<2x4x3x%s>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
      "       -> tensor<6x4x8x%s>\n"
      "  %%o = stablehlo.multiply %%r, %%r : tensor<6x4x8x%s>\n"
      "  return %%o : tensor<6x4x8x%s>\n"
      "}\n";
  char *p = malloc(4096);
  if (p) snprintf(p, 4096, fmt, t, t, t, t, k, t, t, t, t, t, t, t);
  return p;
}

/* The operand read after the update: not in place (the kernel copies %s
 * into the result first); and one whose update is not computed (no
 * fusion: a plain copy). */
static const char *dus_read_after =
    "func.func @main(%a: tensor<5x16xf32>, %u: tensor<2x16xf32>, %i: tensor<i32>)\n"
    "    -> (tensor<5x16xf32>, tensor<5x16xf32>) {\n"
    "  %s = stablehlo.add %a, %a : tensor<5x16xf32>\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %w = stablehlo.exponential %u : tensor<2x16xf32>\n"
    "  %r = stablehlo.dynamic_update_slice %s, %w, %i, %c0 :\n"
    "       (tensor<5x16xf32>, tensor<2x16xf32>, tensor<i32>, tensor<i32>) -> tensor<5x16xf32>\n"
    "  %o = stablehlo.multiply %r, %r : tensor<5x16xf32>\n"
    "  %t = stablehlo.add %s, %r : tensor<5x16xf32>\n"
    "  return %o, %t : tensor<5x16xf32>, tensor<5x16xf32>\n"
    "}\n";

/* A scan: a while loop stacks -h * 2 (h negated each step) at row i of a carried stack. */
static const char *dus_scan =
    "func.func @main(%x: tensor<3x8xf32>, %z: tensor<4x3x8xf32>) -> tensor<4x3x8xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %s = %z, %h = %x) : tensor<i32>, tensor<4x3x8xf32>,\n"
    "      tensor<3x8xf32>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<4> : tensor<i32>\n"
    "    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %z0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %two = stablehlo.constant dense<2.0> : tensor<3x8xf32>\n"
    "    %h2 = stablehlo.negate %h : tensor<3x8xf32>\n"
    "    %m = stablehlo.multiply %h2, %two : tensor<3x8xf32>\n"
    "    %u = stablehlo.reshape %m : (tensor<3x8xf32>) -> tensor<1x3x8xf32>\n"
    "    %s2 = stablehlo.dynamic_update_slice %s, %u, %i, %z0, %z0 :\n"
    "       (tensor<4x3x8xf32>, tensor<1x3x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
    "       -> tensor<4x3x8xf32>\n"
    "    %i2 = stablehlo.add %i, %one : tensor<i32>\n"
    "    stablehlo.return %i2, %s2, %h2 : tensor<i32>, tensor<4x3x8xf32>, tensor<3x8xf32>\n"
    "  }\n"
    "  return %r#1 : tensor<4x3x8xf32>\n"
    "}\n";

/* The number of fusions in b (and nested blocks) whose root is a
 * dynamic_update_slice, of kind "loop"; *plain counts unfused DUS ops. */
static int dus_fusions(const hlo_block *b, int *plain) {
  int n = 0;
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->opcode == OP_DYNAMIC_UPDATE_SLICE) ++*plain;
    if (op->opcode == OP_FUSION && op->num_regions == 1) {
      const hlo_block *fb = &op->regions[0].block;
      const hlo_op *ret = fb->last;
      const hlo_op *root = ret && ret->num_operands ? ret->operands[0]->def : NULL;
      const hlo_attr *k = op_attr(op, "kind");
      if (root && root->opcode == OP_DYNAMIC_UPDATE_SLICE && k && k->kind == ATTR_STRING &&
          k->u.str.len == 4 && !memcmp(k->u.str.s, "loop", 4)) {
        n++;
        /* the operand and the start indices are the fusion's arguments
         * (or constants copied in) */
        for (uint32_t i = 0; i < root->num_operands; i++) {
          const hlo_value *v = root->operands[i];
          if (i != 1) CHECK(!v->def || v->def->opcode == OP_CONSTANT);
        }
        /* the update is computed in the fusion */
        CHECK(root->operands[1]->def != NULL);
      }
      continue;
    }
    for (uint32_t r = 0; r < op->num_regions; r++) n += dus_fusions(&op->regions[r].block, plain);
  }
  return n;
}

static int fused(const char *text, int *plain) {
  hlo_status st = NULL;
  hlo_module_ir *m = tl_parse_text("t.mlir", text, TL_VERIFY, &st);
  CHECK(m != NULL);
  if (!m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return -1;
  }
  pass_pipeline_options po = {.pipeline = PASS_PIPELINE_CPU, .verify_each = true};
  st = pass_pipeline_run(m, &po, NULL);
  CHECK(!st);
  hlo_status_free(st);
  *plain = 0;
  int n = 0;
  for (const hlo_func *f = m->funcs; f; f = f->next) n += dus_fusions(&f->body.block, plain);
  module_free(m);
  return n;
}

TEST(dus_is_the_fusion_root) {
  char *p = dus_program("f32", 2);
  int plain = 0;
  CHECK_EQ_INT(fused(p, &plain), 1);
  CHECK_EQ_INT(plain, 0);
  free(p);
  CHECK_EQ_INT(fused(dus_scan, &plain), 1);
  CHECK_EQ_INT(plain, 0);
  CHECK_EQ_INT(fused(dus_read_after, &plain), 1);
  /* an update that is an argument: nothing to fuse, the DUS stays a copy */
  const char *arg_update =
      "func.func @main(%a: tensor<5x16xf32>, %u: tensor<2x16xf32>, %i: tensor<i32>)\n"
      "    -> tensor<5x16xf32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r = stablehlo.dynamic_update_slice %a, %u, %i, %c0 :\n"
      "       (tensor<5x16xf32>, tensor<2x16xf32>, tensor<i32>, tensor<i32>) -> tensor<5x16xf32>\n"
      "  return %r : tensor<5x16xf32>\n"
      "}\n";
  CHECK_EQ_INT(fused(arg_update, &plain), 0);
  CHECK_EQ_INT(plain, 1);
  /* an update computed from the operand: the operand is never loaded by
   * the fused kernel, so the op reading it stays out of the fusion */
  const char *reads_operand =
      "func.func @main(%a: tensor<4x8xf32>, %i: tensor<i32>) -> tensor<4x8xf32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %s = stablehlo.add %a, %a : tensor<4x8xf32>\n"
      "  %l = stablehlo.slice %s [0:1, 0:8] : (tensor<4x8xf32>) -> tensor<1x8xf32>\n"
      "  %w = stablehlo.exponential %l : tensor<1x8xf32>\n"
      "  %r = stablehlo.dynamic_update_slice %s, %w, %i, %c0 :\n"
      "       (tensor<4x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>\n"
      "  return %r : tensor<4x8xf32>\n"
      "}\n";
  CHECK_EQ_INT(fused(reads_operand, &plain), 1);
  bool skipped = false;
  /* exponential: hlo_expf, within 1 ULP of libm (emit_c.c) */
  CHECK(tl_backends_agree("reads_operand", reads_operand, NULL, 1, 2, 5, NULL, &skipped));
}

TEST(dus_fusion_matches_the_interpreter) {
  static const char *const types[] = {"f32", "bf16", "i32"};
  static const int ks[] = {2, 5, 7, 100, -3}; /* in range, the last, clamped, negative */
  for (int t = 0; t < 3; t++)
    for (int j = 0; j < 5; j++) {
      char *p = dus_program(types[t], ks[j]);
      CHECK(p != NULL);
      if (!p) return;
      runtime_cpu_stats cs;
      memset(&cs, 0, sizeof cs);
      bool skipped = false;
      char name[64];
      snprintf(name, sizeof name, "dus_%s_%d", types[t], ks[j]);
      /* several seeds: %i takes several values in 0..8 (4..8 clamped) */
      for (uint64_t seed = 1; seed <= 4 && !skipped; seed++)
        CHECK(tl_backends_agree(name, p, NULL, 0, 0, seed, &cs, &skipped));
      free(p);
      if (skipped) return;
      CHECK_EQ_INT(cs.copies, 0); /* no STEP_DUS: fused */
      CHECK_EQ_INT(cs.interp, 0);
    }
}

TEST(dus_fusion_in_a_scan) {
  bool skipped = false;
  runtime_cpu_stats cs;
  memset(&cs, 0, sizeof cs);
  for (uint64_t seed = 1; seed <= 3 && !skipped; seed++)
    CHECK(tl_backends_agree("dus_scan", dus_scan, NULL, 0, 0, seed, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.copies, 0);
}

TEST(dus_fusion_not_in_place) {
  bool skipped = false;
  runtime_cpu_stats cs;
  memset(&cs, 0, sizeof cs);
  for (uint64_t seed = 1; seed <= 4 && !skipped; seed++)
    CHECK(tl_backends_agree("dus_read_after", dus_read_after, NULL, 3, 2, seed, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.copies, 0);
}

/* The kernel of the first two ops of `text` (the update's producer, then
 * the dynamic_update_slice) lowered as one fusion named `kname`: yours
 * with *m (free the module after the kernel); NULL (checked) on an error. */
static kernel *lower_dus_text(const char *file, const char *text, const char *kname,
                              hlo_module_ir **m) {
  hlo_status st = NULL;
  *m = tl_parse_text(file, text, TL_VERIFY, &st);
  CHECK(*m != NULL);
  if (!*m) {
    hlo_status_print(st, stderr);
    hlo_status_free(st);
    return NULL;
  }
  const hlo_block *b = &(*m)->funcs->body.block;
  const hlo_op *ops[2] = {b->first, b->first->next};
  const hlo_value *outs[1] = {&ops[1]->results[0]};
  kernel *k = NULL;
  st = lower_fusion(ops, 2, outs, 1, kname, &k);
  CHECK(!st && k);
  hlo_status_free(st);
  return k;
}

/* The kernel of a DUS fusion: the update's index space, its output the
 * operand's shape with clamped dynamic starts; an update of part of the
 * last dim is printed for C and CUDA by the one printer (cstyle) and
 * compiled by NVRTC where it is present. */
TEST(dus_kernel_prints_for_c_and_cuda) {
  const char *text =
      "func.func @main(%s: tensor<6x4x8xbf16>, %u: tensor<2x4x4xbf16>, %i: tensor<i32>,\n"
      "    %j: tensor<i32>) -> tensor<6x4x8xbf16> {\n"
      "  %v = stablehlo.multiply %u, %u : tensor<2x4x4xbf16>\n"
      "  %r = stablehlo.dynamic_update_slice %s, %v, %i, %j, %j :\n"
      "       (tensor<6x4x8xbf16>, tensor<2x4x4xbf16>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
      "       -> tensor<6x4x8xbf16>\n"
      "  return %r : tensor<6x4x8xbf16>\n"
      "}\n";
  hlo_module_ir *m = NULL;
  kernel *k = lower_dus_text("k.mlir", text, "dus_k", &m);
  if (k) {
    CHECK_EQ_INT(k->rank, 3);
    CHECK_EQ_INT(k->dims[0], 2);
    CHECK_EQ_INT(k->dims[2], 4);
    CHECK(kernel_has_dus(k));
    CHECK_EQ_INT(k->num_outputs, 1);
    CHECK_EQ_INT(k->outputs[0].buf.dims[0], 6);
    CHECK_EQ_INT(k->outputs[0].dus_operand, 1); /* in0: the operand */
    CHECK(k->inputs[0].may_alias && k->outputs[0].buf.may_alias);
    CHECK(!kernel_check_schedule(k));
    int64_t r = 0;
    CHECK(!kernel_tiles_rows(k, k->num_inputs, &r));
    strbuf pr = {0};
    kernel_print(k, &pr);
    CHECK(pr.data && strstr(pr.data, "update of in0 at starts ["));
    sb_free(&pr);
    static const char *const want[] = {"o0s0", "!= (const void *)in0"};
    CHECK(tl_cuda_prints_and_compiles("dus_kernel_prints_for_c_and_cuda", k, "dus_k", want, 2));
  }
  kernel_destroy(k);
  module_free(m);
}

/* Whole rows (no start along the last dim): the CUDA emitter prints the
 * kernel in 16-byte chunks (plan_of's FORM_VEC), the output pointer moved
 * to the box's first element, and NVRTC compiles it. */
TEST(dus_kernel_of_whole_rows_prints_in_chunks) {
  const char *text =
      "func.func @main(%s: tensor<6x4x8xf32>, %u: tensor<2x4x8xf32>, %i: tensor<i32>,\n"
      "    %j: tensor<i32>) -> tensor<6x4x8xf32> {\n"
      "  %v = stablehlo.multiply %u, %u : tensor<2x4x8xf32>\n"
      "  %r = stablehlo.dynamic_update_slice %s, %v, %i, %j, %j :\n"
      "       (tensor<6x4x8xf32>, tensor<2x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
      "       -> tensor<6x4x8xf32>\n"
      "  return %r : tensor<6x4x8xf32>\n"
      "}\n";
  hlo_module_ir *m = NULL;
  kernel *k = lower_dus_text("rows.mlir", text, "dus_rows", &m);
  if (k) {
    static const char *const want[] = {"hlo_vst", "out0 += 0 + o0s2 * 1LL + o0s1 * 8LL + o0s0 * 32LL",
                                       "!= (const void *)in0"};
    CHECK(tl_cuda_prints_and_compiles("dus_kernel_of_whole_rows_prints_in_chunks", k, "dus_rows", want, 3));
  }
  kernel_destroy(k);
  module_free(m);
}

/* The device-memory path (runtime/executable_cpu_device.c) on cpu-devmem. */
TEST(dus_fusion_on_device_memory) {
  static const hlo_compile_options devmem = {.backend = RUNTIME_BACKEND_CPU_DEVMEM,
                                             .no_cache = true};
  bool skipped = false;
  char *p = dus_program("f32", 7);
  for (uint64_t seed = 1; seed <= 3 && !skipped && p; seed++)
    CHECK(tl_backends_agree("dus_devmem", p, &devmem, 0, 0, seed, NULL, &skipped));
  free(p);
  for (uint64_t seed = 1; seed <= 2 && !skipped; seed++) {
    CHECK(tl_backends_agree("dus_scan_devmem", dus_scan, &devmem, 0, 0, seed, NULL, &skipped));
    CHECK(tl_backends_agree("dus_read_after_devmem", dus_read_after, &devmem, 3, 2, seed, NULL,
                            &skipped));
  }
}

/* A DUS of a computed [3,32,8] update into a splat constant [64,32,16]
 * (128 KiB: filled at run time, FILL_MIN_BYTES) at starts %i (0..8), 0
 * and K (clamped past 8); `after`: its result is read by one more op (a
 * temporary), else returned. */
static char *dus_splat_program(const char *t, const char *splat, int k, bool after) {
  static const char fmt[] =
      "func.func @main(%%u: tensor<3x32x8x%s>, %%i: tensor<i32>) -> tensor<64x32x16x%s> {\n"
      "  %%z = stablehlo.constant dense<%s> : tensor<64x32x16x%s>\n"
      "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %%ck = stablehlo.constant dense<%d> : tensor<i32>\n"
      "  %%v = stablehlo.multiply %%u, %%u : tensor<3x32x8x%s>\n"
      "  %%w = stablehlo.subtract %%v, %%u : tensor<3x32x8x%s>\n"
      "  %%r = stablehlo.dynamic_update_slice %%z, %%w, %%i, %%c0, %%ck :\n"
      "       (tensor<64x32x16x%s>, tensor<3x32x8x%s>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
      "       -> tensor<64x32x16x%s>\n"
      "%s"
      "}\n";
  char tail[256];
  if (after)
    snprintf(tail, sizeof tail,
             "  %%o = stablehlo.multiply %%r, %%r : tensor<64x32x16x%s>\n"
             "  return %%o : tensor<64x32x16x%s>\n", t, t);
  else
    snprintf(tail, sizeof tail, "  return %%r : tensor<64x32x16x%s>\n", t);
  char *p = malloc(4096);
  if (p) snprintf(p, 4096, fmt, t, t, splat, t, k, t, t, t, t, t, tail);
  return p;
}

/* The same in a while body: each iteration updates a fresh splat (filled
 * in the body) and adds it to the carried sum. */
static const char *dus_splat_loop =
    "func.func @main(%x: tensor<2x32x16xf32>) -> tensor<64x32x16xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %s0 = stablehlo.constant dense<0.0> : tensor<64x32x16xf32>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %s = %s0, %h = %x) : tensor<i32>, tensor<64x32x16xf32>,\n"
    "      tensor<2x32x16xf32>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<5> : tensor<i32>\n"
    "    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %z0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %seven = stablehlo.constant dense<7> : tensor<i32>\n"
    "    %f = stablehlo.constant dense<-0.5> : tensor<64x32x16xf32>\n"
    "    %h2 = stablehlo.negate %h : tensor<2x32x16xf32>\n"
    "    %m = stablehlo.multiply %h2, %h : tensor<2x32x16xf32>\n"
    "    %at = stablehlo.multiply %i, %seven : tensor<i32>\n"
    "    %u = stablehlo.dynamic_update_slice %f, %m, %at, %z0, %z0 :\n"
    "       (tensor<64x32x16xf32>, tensor<2x32x16xf32>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
    "       -> tensor<64x32x16xf32>\n"
    "    %s2 = stablehlo.add %s, %u : tensor<64x32x16xf32>\n"
    "    %i2 = stablehlo.add %i, %one : tensor<i32>\n"
    "    stablehlo.return %i2, %s2, %h2 : tensor<i32>, tensor<64x32x16xf32>, tensor<2x32x16xf32>\n"
    "  }\n"
    "  return %r#1 : tensor<64x32x16xf32>\n"
    "}\n";

/* A fused DUS whose operand is a splat constant (copied into the fusion):
 * the operand is filled at run time (a STEP_FILL, as for a plain DUS) and
 * the kernel updates that buffer in place, instead of copying a
 * compile-time constant of the operand's size into its result at every
 * call (const_bytes was 131072 + the indices; now only the indices). The
 * results match the interpreter's. */
TEST(dus_fusion_over_a_splat_is_in_place) {
  static const char *const types[] = {"f32", "i32"};
  static const char *const splats[] = {"1.5", "-3"};
  static const int ks[] = {4, 8, 100}; /* in range, the last, clamped */
  for (int t = 0; t < 2; t++)
    for (int j = 0; j < 3; j++)
      for (int after = 0; after < 2; after++) {
        char *p = dus_splat_program(types[t], splats[t], ks[j], after);
        CHECK(p != NULL);
        if (!p) return;
        int plain = 0;
        CHECK_EQ_INT(fused(p, &plain), 1);
        CHECK_EQ_INT(plain, 0);
        runtime_cpu_stats cs;
        memset(&cs, 0, sizeof cs);
        bool skipped = false;
        char name[64];
        snprintf(name, sizeof name, "dus_splat_%s_%d_%d", types[t], ks[j], after);
        for (uint64_t seed = 1; seed <= 3 && !skipped; seed++)
          CHECK(tl_backends_agree(name, p, NULL, 0, 0, seed, &cs, &skipped));
        free(p);
        if (skipped) return;
        CHECK_EQ_INT(cs.copies, 0); /* fused: no STEP_DUS */
        CHECK_EQ_INT(cs.interp, 0);
        CHECK_EQ_INT(cs.fills, 1);  /* the operand, filled at run time */
        CHECK(cs.const_bytes < 1024); /* no 128 KiB compile-time operand */
        /* the fill is the DUS's result's buffer (in place): nothing else
         * of 128 KiB in the arena besides the result */
        CHECK(cs.temp_bytes < 131072);
      }
  runtime_cpu_stats cs;
  memset(&cs, 0, sizeof cs);
  bool skipped = false;
  for (uint64_t seed = 1; seed <= 2 && !skipped; seed++)
    CHECK(tl_backends_agree("dus_splat_loop", dus_splat_loop, NULL, 0, 0, seed, &cs, &skipped));
  if (skipped) return;
  CHECK_EQ_INT(cs.copies, 0);
  CHECK(cs.const_bytes < 1024);
  static const hlo_compile_options devmem = {.backend = RUNTIME_BACKEND_CPU_DEVMEM,
                                             .no_cache = true};
  char *p = dus_splat_program("f32", "1.5", 8, true);
  for (uint64_t seed = 1; seed <= 2 && !skipped && p; seed++)
    CHECK(tl_backends_agree("dus_splat_devmem", p, &devmem, 0, 0, seed, NULL, &skipped));
  free(p);
  CHECK(tl_backends_agree("dus_splat_loop_devmem", dus_splat_loop, &devmem, 0, 0, 1, NULL,
                          &skipped));
}

TEST_MAIN()
