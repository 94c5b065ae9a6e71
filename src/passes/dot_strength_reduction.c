/* dot_strength_reduction.c — small dot_generals become elementwise work and
 * a reduction (XLA's "dot strength reduction", AlgebraicSimplifier;
 * generalised to any dimension numbers), for backends where a GEMM library
 * call costs far more than the arithmetic of a tiny product (the CUDA
 * backend: each cuBLASLt call is one graph node of several microseconds,
 * never fused with its neighbours). A dot_general
 *
 *   lhs [lb..., lf..., lc...] (any order) x rhs [rb..., rf..., rc...]
 *     -> [B..., M..., N...]
 *
 * becomes, in one index space S = [B..., M..., N..., K...] (batch dims,
 * lhs free dims, rhs free dims, then the contracting dims in their listed
 * order, last so the reduce is over trailing dims as the kernels want):
 *
 *   a = broadcast_in_dim(convert?(lhs)) to S
 *   b = broadcast_in_dim(convert?(rhs)) to S
 *   r = reduce(multiply(a, b), 0) over the trailing K dims, combiner add
 *   result = convert?(r)
 *
 * (no contracting dims, an outer product: the multiply is the result.)
 * The fusion pass then makes the broadcasts, the multiply and the reduce
 * one input fusion: the product space is never materialised, each output
 * element sums its K products in a register.
 *
 * Accumulation type: integers accumulate in the result's type (the spec
 * converts each operand to the result element type, then multiplies and
 * adds, wrapping: the same values exactly); floats in f32 — f64 when an
 * operand or the result is f64 — so bf16/f16 operands are widened (exact)
 * and summed in f32 as cuBLASLt does, and the result is rounded to its
 * type once at the end. With DEFAULT precision the GEMM may use TF32;
 * full f32 products are at least as precise, so any precision_config is
 * taken. Dots whose `algorithm` asks for anything but a plain product
 * (dot_algorithm_is_plain: tf32, multi-component bf16, imprecise
 * accumulation...) are left alone, and so are dynamic, quantized, complex,
 * boolean or f8 types, `stablehlo.dot`, and index spaces of more than
 * DSR_MAX_RANK dims (the kernels' limit, KERNEL_MAX_RANK).
 *
 * Which dots (DSR_MAX_MACS, DSR_MAX_K): those of at most 2^18 multiply-adds
 * (batch*M*N*K) and at most 4096 contracting elements. A cuBLASLt call on
 * an H200 costs a launch plus 3-6 us of fixed work, whatever its size; a
 * reduce fusion of 2^18 f32 FMAs is ~0.25 us of issue on one SM-wide wave
 * (the operands are at most a few hundred KiB and stay in L2), so up to
 * about this size the rewrite never loses, and it lets the products fuse
 * with the elementwise ops around them (one kernel instead of three). At
 * larger sizes the tensor cores win quickly (a 128x128x128 product is 2^21
 * MACs). The K bound keeps each output's sum short (the CUDA emitter sums
 * a short row in one thread, a long one over a block: emit_cuda.c) and its
 * rounding error (a serial f32 sum, error growing with K) near the GEMM's.
 * The models: tiny_llama_train_step's products (at most 64x32x32 = 2^16)
 * and lstm_scan's (4x64x16 = 2^12) are all under it. */
#include <string.h>
#include "codegen/kernel.h"
#include "ir/element.h"
#include "passes/builder.h"
#include "passes/dot_decomposer.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

/* The largest dot rewritten, in multiply-adds (batch * M * N * K). */
#define DSR_MAX_MACS ((int64_t)1 << 18)
/* The largest contraction rewritten (product of the contracting dims). */
#define DSR_MAX_K ((int64_t)4096)
/* The largest index space [batch, lhs free, rhs free, contracting]. */
#define DSR_MAX_RANK KERNEL_MAX_RANK

static bool is_float(hlo_dtype t) {
  return t == HLO_F32 || t == HLO_BF16 || t == HLO_F16 || t == HLO_F64;
}

static bool is_int(hlo_dtype t) {
  hlo_dtype_class c = dtype_class(t);
  return c == HLO_CLASS_SINT || c == HLO_CLASS_UINT;
}

/* a * b for non-negative sizes, saturating at INT64_MAX. */
static int64_t mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

/* Whether `op` is a dot_general this pass rewrites; fills *d and *acc (the
 * accumulation type). */
static bool candidate(const hlo_op *op, dot_dims *d, hlo_dtype *acc) {
  if (op->opcode != OP_DOT_GENERAL || op->num_operands != 2 || op->num_results != 1) return false;
  const hlo_type *lt = op->operands[0]->type, *rt = op->operands[1]->type,
                 *ot = op->results[0].type;
  const hlo_type *ts[3] = {lt, rt, ot};
  for (int i = 0; i < 3; i++)
    if (!ts[i] || ts[i]->kind != TYPE_TENSOR || !type_is_static(ts[i]) || ts[i]->quant ||
        ts[i]->rank > DSR_MAX_RANK)
      return false;
  if (is_float(lt->dtype) && is_float(rt->dtype) && is_float(ot->dtype)) {
    bool f64 = lt->dtype == HLO_F64 || rt->dtype == HLO_F64 || ot->dtype == HLO_F64;
    *acc = f64 ? HLO_F64 : HLO_F32;
  } else if (is_int(lt->dtype) && is_int(rt->dtype) && is_int(ot->dtype)) {
    *acc = ot->dtype;
  } else {
    return false;
  }
  if (!dot_algorithm_is_plain(op)) return false;
  arena a;
  arena_init(&a);
  bool read = dot_dims_read(&a, op, d);
  arena_deinit(&a);
  if (!read) return false;
  int64_t lf[DSR_MAX_RANK], rf[DSR_MAX_RANK];
  uint32_t nlf = dot_free_dims(lt->rank, d->lb, d->nb, d->lc, d->nc, lf);
  uint32_t nrf = dot_free_dims(rt->rank, d->rb, d->nb, d->rc, d->nc, rf);
  if (d->nb + nlf + d->nc != lt->rank || d->nb + nrf + d->nc != rt->rank) return false;
  if (d->nb + nlf + nrf != ot->rank || ot->rank + d->nc > DSR_MAX_RANK) return false;
  int64_t k = 1;
  for (uint32_t i = 0; i < d->nc; i++) {
    int64_t l = d->lc[i], r = d->rc[i];
    if (l < 0 || l >= lt->rank || r < 0 || r >= rt->rank || lt->dims[l] != rt->dims[r])
      return false;
    k = mul_sat(k, lt->dims[l]);
  }
  if (k > DSR_MAX_K) return false;
  int64_t out = type_num_elements(ot);
  return out >= 0 && mul_sat(out, k) <= DSR_MAX_MACS;
}

/* The ops a rewrite made, to index them once built. */
typedef struct made_ops {
  hlo_op *ops[12];
  uint32_t n;
} made_ops;

static hlo_value *made(made_ops *mo, hlo_value *v) {
  if (v && mo->n < 12) mo->ops[mo->n++] = v->def;
  return v;
}

/* x converted to `dt` (x itself when it has that type). */
static hlo_value *convert_to(builder *b, made_ops *mo, hlo_value *x, hlo_dtype dt) {
  if (x->type->dtype == dt) return x;
  return made(mo, b_convert(b, x, dt));
}

/* Rewrites one dot_general. */
static hlo_status reduce_dot(hlo_module_ir *m, use_index *ui, hlo_op *op, const dot_dims *d,
                             hlo_dtype acc) {
  hlo_value *lhs = op->operands[0], *rhs = op->operands[1];
  const hlo_type *lt = lhs->type, *rt = rhs->type, *ot = op->results[0].type;
  int64_t lf[DSR_MAX_RANK], rf[DSR_MAX_RANK];
  uint32_t nlf = dot_free_dims(lt->rank, d->lb, d->nb, d->lc, d->nc, lf);
  uint32_t nrf = dot_free_dims(rt->rank, d->rb, d->nb, d->rc, d->nc, rf);
  uint32_t nb = d->nb, nc = d->nc, rank = nb + nlf + nrf + nc;
  /* the index space and where each operand dim lies in it */
  int64_t sdims[DSR_MAX_RANK], lmap[DSR_MAX_RANK], rmap[DSR_MAX_RANK];
  if (ot->rank) memcpy(sdims, ot->dims, ot->rank * sizeof *sdims);
  for (uint32_t i = 0; i < nb; i++) lmap[d->lb[i]] = i, rmap[d->rb[i]] = i;
  for (uint32_t i = 0; i < nlf; i++) lmap[lf[i]] = nb + i;
  for (uint32_t i = 0; i < nrf; i++) rmap[rf[i]] = nb + nlf + i;
  for (uint32_t i = 0; i < nc; i++) {
    uint32_t s = nb + nlf + nrf + i;
    sdims[s] = lt->dims[d->lc[i]];
    lmap[d->lc[i]] = s, rmap[d->rc[i]] = s;
  }
  builder b;
  builder_at(&b, m, op);
  made_ops mo = {0};
  hlo_type *st = b_type(&b, acc, rank, sdims);
  hlo_value *l = convert_to(&b, &mo, lhs, acc), *r = convert_to(&b, &mo, rhs, acc);
  hlo_value *lb = l ? made(&mo, b_broadcast_in_dim(&b, l, st, lmap, lt->rank)) : NULL;
  hlo_value *rb = r ? made(&mo, b_broadcast_in_dim(&b, r, st, rmap, rt->rank)) : NULL;
  hlo_value *p = lb && rb ? made(&mo, B_MUL(&b, lb, rb)) : NULL;
  if (nc == 0) { /* an outer product: the multiply is the result */
    hlo_value *out = p ? convert_to(&b, &mo, p, ot->dtype) : NULL;
    HLO_TRY(builder_status(&b));
    for (uint32_t i = 0; i < mo.n; i++) HLO_TRY(use_index_add_op(ui, mo.ops[i]));
    HLO_TRY(use_index_replace_all(ui, &op->results[0], out));
    use_index_erase(ui, op);
    return NULL;
  }
  hlo_type *scalar = b_type(&b, acc, 0, NULL);
  hlo_value *zero = scalar ? made(&mo, is_float(acc) ? b_const_of(&b, scalar, 0.0)
                                                     : b_const_int_of(&b, scalar, 0))
                           : NULL;
  hlo_type *redt = b_type(&b, acc, ot->rank, ot->dims);
  hlo_value *rin[2] = {p, zero};
  hlo_op *red = p && zero ? b_op(&b, OP_REDUCE, rin, 2, &redt, 1, 1) : NULL;
  HLO_TRY(builder_status(&b));
  int64_t rdims[DSR_MAX_RANK];
  for (uint32_t i = 0; i < nc; i++) rdims[i] = nb + nlf + nrf + i;
  b_set_attr(&b, red, "dimensions", b_i64s(&b, rdims, nc));
  hlo_block *body = &red->regions[0].block;
  hlo_type *args[2] = {scalar, scalar};
  HLO_TRY(builder_status(&b));
  HLO_TRY(block_set_args(m, body, args, 2));
  builder rbld;
  builder_at_end(&rbld, m, body, op->loc);
  hlo_value *sum = B_ADD(&rbld, &body->args[0], &body->args[1]);
  b_op(&rbld, OP_RETURN, &sum, 1, NULL, 0, 0);
  HLO_TRY(builder_status(&rbld));
  mo.ops[mo.n++] = red;
  hlo_value *out = convert_to(&b, &mo, &red->results[0], ot->dtype);
  HLO_TRY(builder_status(&b));
  for (uint32_t i = 0; i < mo.n; i++) HLO_TRY(use_index_add_op(ui, mo.ops[i]));
  HLO_TRY(use_index_replace_all(ui, &op->results[0], out));
  use_index_erase(ui, op);
  return NULL;
}

static hlo_status reduce_block(hlo_module_ir *m, use_index *ui, hlo_block *blk) {
  for (hlo_op *op = blk->first, *next; op; op = next) {
    next = op->next;
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(reduce_block(m, ui, &op->regions[r].block));
    dot_dims d;
    hlo_dtype acc;
    if (candidate(op, &d, &acc)) HLO_TRY(reduce_dot(m, ui, op, &d, acc));
  }
  return NULL;
}

hlo_status pass_dot_strength_reduction(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui;
    HLO_TRY(use_index_build(f, &ui));
    hlo_status st = reduce_block(m, ui, &f->body.block);
    use_index_free(ui);
    HLO_TRY(st);
  }
  return NULL;
}
