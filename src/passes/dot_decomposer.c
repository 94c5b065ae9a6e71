/* dot_decomposer.c — XLA's DotDecomposer: every dot_general becomes a
 * canonical matrix product that a GEMM library takes without copies,
 *
 *   lhs [B, M, K] (or [B, K, M]) x rhs [B, K, N] (or [B, N, K]) -> [B, M, N]
 *
 * (no B when there are no batch dims), with transposes and reshapes around
 * it: each operand is transposed to (batch dims, free dims, contracting
 * dims) for the lhs and (batch, contracting, free) for the rhs, or to the
 * transposed-matrix order, which the GEMM takes as a trans flag (no
 * transpose when the dims lie in either order already; else the order
 * that keeps the innermost dim innermost) — then reshaped to rank 3 (rank 2 without
 * batch dims); the product is reshaped back to the original result shape,
 * which is (batch, lhs free, rhs free) in both. The fusion pass then turns
 * the transposes into copy kernels; the reshapes are free.
 *
 * Exactness: the contracting dims keep their listed order, so the product
 * sums its K terms in the same order as the original (row-major over the
 * listed contracting dims, as the interpreter does): bit-exact.
 *
 * Left alone: dots already canonical (batch dims leading and in order on
 * both sides, one contracting dim at either end of each operand's matrix
 * dims), dynamic or quantized types, `stablehlo.dot` (rank <= 2 already),
 * and dots with no contracting dims (outer products stay elementwise work
 * for the interpreter/kernels). */
#include <string.h>
#include "passes/builder.h"
#include "passes/passes.h"
#include "passes/use_index.h"
#include "support/arena.h"

#define DD_MAX_RANK 16

typedef struct dot_dims {
  int64_t lb[DD_MAX_RANK], rb[DD_MAX_RANK], lc[DD_MAX_RANK], rc[DD_MAX_RANK];
  uint32_t nb, nc;
} dot_dims;

/* Copies field `name` of dot_dimension_numbers into out (absent: empty). */
static bool dims_field(arena *a, const hlo_attr *dn, const char *name, int64_t *out,
                       uint32_t *n) {
  const hlo_attr *f = attr_field(dn, name);
  *n = 0;
  if (!f) return true;
  int64_t *v;
  uint32_t k;
  if (!attr_as_ints(a, f, &v, &k) || k > DD_MAX_RANK) return false;
  memcpy(out, v, k * sizeof *v);
  *n = k;
  return true;
}

/* Reads the dimension numbers of a dot_general that this pass can take. */
static bool read_dims(arena *a, const hlo_op *op, dot_dims *d) {
  const hlo_attr *dn = op_attr(op, "dot_dimension_numbers");
  uint32_t nrb, nrc;
  if (!dn || dn->kind != ATTR_STRUCT) return false;
  if (!dims_field(a, dn, "lhs_batching_dimensions", d->lb, &d->nb) ||
      !dims_field(a, dn, "rhs_batching_dimensions", d->rb, &nrb) ||
      !dims_field(a, dn, "lhs_contracting_dimensions", d->lc, &d->nc) ||
      !dims_field(a, dn, "rhs_contracting_dimensions", d->rc, &nrc))
    return false;
  return nrb == d->nb && nrc == d->nc;
}

static bool listed(const int64_t *v, uint32_t n, int64_t x) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* The free dims of an operand of rank r (neither batch nor contracting), in
 * order; returns their count. */
static uint32_t free_dims(uint32_t r, const int64_t *b, uint32_t nb, const int64_t *c,
                          uint32_t nc, int64_t *out) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < r; i++)
    if (!listed(b, nb, i) && !listed(c, nc, i)) out[n++] = i;
  return n;
}

static bool is_identity(const int64_t *perm, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (perm[i] != (int64_t)i) return false;
  return true;
}

/* Concatenates three dim lists into perm. */
static void cat3(int64_t *perm, const int64_t *a, uint32_t na, const int64_t *b, uint32_t nb,
                 const int64_t *c, uint32_t nc) {
  memcpy(perm, a, na * sizeof *a);
  memcpy(perm + na, b, nb * sizeof *b);
  memcpy(perm + na + nb, c, nc * sizeof *c);
}

/* Whether the dot is canonical already (what the CPU backend's GEMM thunk
 * takes): batch dims [0..nb) on both sides, one contracting dim, at the
 * first or last of each operand's non-batch dims. */
static bool canonical(const dot_dims *d, uint32_t lrank, uint32_t rrank) {
  for (uint32_t i = 0; i < d->nb; i++)
    if (d->lb[i] != (int64_t)i || d->rb[i] != (int64_t)i) return false;
  if (d->nc != 1) return false;
  return (d->lc[0] == (int64_t)d->nb || d->lc[0] == (int64_t)lrank - 1) &&
         (d->rc[0] == (int64_t)d->nb || d->rc[0] == (int64_t)rrank - 1);
}

static int64_t prod(const hlo_type *t, const int64_t *dims, uint32_t n) {
  int64_t p = 1;
  for (uint32_t i = 0; i < n; i++) p *= t->dims[dims[i]];
  return p;
}

/* One operand made canonical: transposed when its dims are in neither the
 * matrix order (batch, first, second) nor (batch, second, first), then
 * reshaped to [B,] rows x cols. *swapped: it is stored in the second
 * order. */
/* The ops a rewrite made, to index them once built. */
typedef struct made_ops {
  hlo_op *ops[8];
  uint32_t n;
} made_ops;

static hlo_value *made(made_ops *mo, hlo_value *v) {
  if (v && mo->n < 8) mo->ops[mo->n++] = v->def;
  return v;
}

/* x reshaped to dims[0..n), or x itself when it has that shape already. */
static hlo_value *reshape_to(builder *b, made_ops *mo, hlo_value *x, const int64_t *dims,
                             uint32_t n) {
  if (x && x->type->rank == n && !memcmp(x->type->dims, dims, n * sizeof *dims)) return x;
  return made(mo, b_reshape(b, x, b_type(b, x ? x->type->dtype : HLO_F32, n, dims)));
}

static hlo_value *canon_operand(builder *b, made_ops *mo, hlo_value *x, const int64_t *bd,
                                uint32_t nb, const int64_t *first, uint32_t nf,
                                const int64_t *second, uint32_t ns, bool *swapped) {
  const hlo_type *t = x->type;
  int64_t perm[3 * DD_MAX_RANK], alt[3 * DD_MAX_RANK];
  cat3(perm, bd, nb, first, nf, second, ns);
  cat3(alt, bd, nb, second, ns, first, nf);
  *swapped = false;
  hlo_value *y = x;
  if (is_identity(alt, t->rank) && !is_identity(perm, t->rank)) {
    *swapped = true;
  } else if (!is_identity(perm, t->rank)) {
    /* a copy either way: take the order that keeps the innermost dim
     * innermost (contiguous rows are copied, not scattered) */
    int64_t last = (int64_t)t->rank - 1;
    *swapped = perm[last] != last && alt[last] == last;
    y = made(mo, b_transpose(b, x, *swapped ? alt : perm));
  }
  int64_t dims[3], n = 0;
  if (nb) dims[n++] = prod(t, bd, nb);
  int64_t p = prod(t, first, nf), q = prod(t, second, ns);
  dims[n++] = *swapped ? q : p;
  dims[n++] = *swapped ? p : q;
  return reshape_to(b, mo, y, dims, (uint32_t)n);
}

/* Rewrites one dot_general into its canonical form. */
static hlo_status decompose(hlo_module_ir *m, use_index *ui, hlo_op *op, const dot_dims *d) {
  hlo_value *lhs = op->operands[0], *rhs = op->operands[1];
  const hlo_type *lt = lhs->type, *rt = rhs->type, *ot = op->results[0].type;
  int64_t lf[DD_MAX_RANK], rf[DD_MAX_RANK];
  uint32_t nlf = free_dims(lt->rank, d->lb, d->nb, d->lc, d->nc, lf);
  uint32_t nrf = free_dims(rt->rank, d->rb, d->nb, d->rc, d->nc, rf);
  builder b;
  builder_at(&b, m, op);
  bool lswap, rswap;
  made_ops mo = {0};
  hlo_value *l = canon_operand(&b, &mo, lhs, d->lb, d->nb, lf, nlf, d->lc, d->nc, &lswap);
  hlo_value *r = canon_operand(&b, &mo, rhs, d->rb, d->nb, d->rc, d->nc, rf, nrf, &rswap);
  uint32_t nb = d->nb ? 1 : 0;
  int64_t B = prod(lt, d->lb, d->nb), M = prod(lt, lf, nlf), N = prod(rt, rf, nrf);
  int64_t bd0 = 0, lc = lswap ? nb : nb + 1, rc = rswap ? nb + 1 : nb;
  int64_t pdims[3], np = 0;
  if (nb) pdims[np++] = B;
  pdims[np++] = M;
  pdims[np++] = N;
  hlo_type *pt = b_type(&b, ot->dtype, (uint32_t)np, pdims);
  hlo_value *ops[2] = {l, r};
  hlo_op *dot = b_op(&b, OP_DOT_GENERAL, ops, 2, &pt, 1, 0);
  b_set_attr(&b, dot, "dot_dimension_numbers",
             b_dot_dims(&b, &bd0, nb, &bd0, nb, &lc, 1, &rc, 1));
  for (uint32_t i = 0; dot && i < op->num_attrs; i++)
    if (strcmp(op->attrs[i].name, "dot_dimension_numbers"))
      b_set_attr(&b, dot, op->attrs[i].name, op->attrs[i].value);
  if (dot) made(&mo, &dot->results[0]);
  hlo_value *out = dot ? reshape_to(&b, &mo, &dot->results[0], ot->dims, ot->rank) : NULL;
  HLO_TRY(builder_status(&b));
  for (uint32_t i = 0; i < mo.n; i++) HLO_TRY(use_index_add_op(ui, mo.ops[i]));
  HLO_TRY(use_index_replace_all(ui, &op->results[0], out));
  use_index_erase(ui, op);
  return NULL;
}

/* Whether `op` is a dot_general this pass rewrites; fills *d. */
static bool candidate(arena *a, const hlo_op *op, dot_dims *d) {
  if (op->opcode != OP_DOT_GENERAL || op->num_operands != 2 || op->num_results != 1) return false;
  const hlo_type *lt = op->operands[0]->type, *rt = op->operands[1]->type,
                 *ot = op->results[0].type;
  const hlo_type *ts[3] = {lt, rt, ot};
  for (int i = 0; i < 3; i++)
    if (!ts[i] || ts[i]->kind != TYPE_TENSOR || !type_is_static(ts[i]) || ts[i]->quant ||
        ts[i]->rank > DD_MAX_RANK)
      return false;
  if (!read_dims(a, op, d) || d->nc == 0) return false;
  return !canonical(d, lt->rank, rt->rank);
}

static hlo_status decompose_block(hlo_module_ir *m, use_index *ui, hlo_block *blk) {
  for (hlo_op *op = blk->first, *next; op; op = next) {
    next = op->next;
    for (uint32_t r = 0; r < op->num_regions; r++)
      HLO_TRY(decompose_block(m, ui, &op->regions[r].block));
    dot_dims d;
    arena a;
    arena_init(&a);
    bool take = candidate(&a, op, &d);
    arena_deinit(&a);
    if (take) HLO_TRY(decompose(m, ui, op, &d));
  }
  return NULL;
}

hlo_status pass_dot_decomposer(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  for (hlo_func *f = m->funcs; f; f = f->next) {
    use_index *ui;
    HLO_TRY(use_index_build(f, &ui));
    hlo_status st = decompose_block(m, ui, &f->body.block);
    use_index_free(ui);
    HLO_TRY(st);
  }
  return NULL;
}
