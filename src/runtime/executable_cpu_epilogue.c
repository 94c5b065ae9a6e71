/* executable_cpu_epilogue.c — output fusion of a GEMM and the kernel that
 * consumes its rows (XLA's output fusion of a dot with its bias, activation
 * and residual, done at the thunk level).
 *
 * A GEMM step writes C (m x n) through the library; the kernel step that
 * reads C next (GELU, bias, a LayerNorm or softmax row kernel) would then
 * stream C through memory again. When that kernel's tiles are rows of C
 * (tile t reads only rows [t / tpr, ...] of C: the kernel's thread tiles
 * walk C's rows in order, `tpr` tiles per row), the two steps become one:
 * the backend's gemm calls the kernel on each block of rows as soon as the
 * thread that computed them is done with them (backend_gemm_epilogue),
 * while they are still in its cache, and no barrier separates the two.
 *
 * The merged step keeps both lists: in = {A, B, the kernel's inputs (C
 * among them)}, out = {C, the kernel's outputs}, so liveness and buffer
 * assignment see every value the step touches at once (nothing the GEMM
 * reads may share memory with what the kernel writes). The kernel moves up
 * to the GEMM's place in the program, so it is merged only when its other
 * inputs are made before the GEMM. --check compiles without this fusion so
 * that the GEMM and the kernel are compared with the interpreter apart.
 *
 * A batched product (attention's scores, [B, H, S, S]) or one whose rows
 * are spread over more dims (JAX's [1, S, D]) is merged with a kernel
 * whose tile b*m + r reads only row r of matrix b (kernel_tiles_flat_rows:
 * the softmax over the heads' rows, llama's SiLU over [1, 256, 704]): the
 * GEMM calls the epilogue per matrix (or block of its rows), and run_rows
 * offsets the tiles by the matrix.
 *
 * Chains: when the epilogue's one output P is read next by a second GEMM
 * as its left operand, row for row (attention's softmax(Q K^T) . V, an
 * MLP's act(x W1) . W2), that GEMM joins the step too (gemm_chain): each
 * block of rows goes GEMM -> kernel -> second GEMM (-> its own epilogue)
 * on the thread that made it, while P's rows are still in its cache, and
 * the barrier between the two products goes. P is still written whole
 * (its buffer is the step's output). Only products the backend splits
 * into row blocks are chained (CHAIN_MIN_WORK): the merged step keeps the
 * operands of both products live at once, which costs memory for nothing
 * when the first product is one block. HLO_NO_GEMM_CHAIN=1 (any value but
 * empty or 0) turns chains off (for measuring them). */
#include <stdlib.h>
#include <string.h>
#include "runtime/executable_cpu_internal.h"

/* Tiles of k per row of input `in` (an m x n matrix read by rows), or 0
 * when a tile of k may read other rows: k's first index variable walks
 * the rows (dims[0] == m, a thread dim of tile 1), input `in` is read at
 * row x0 only (dim 0 of its map is exactly x0, dim 1 does not depend on
 * x0), and the thread tiles of the other dims all lie within one row. */
static int64_t tiles_per_row(const kernel *k, uint32_t in, int64_t m) {
  if (k->rank < 1 || k->dims[0] != m || k->sched.num_thread_dims < 1 || k->sched.tile[0] != 1)
    return 0;
  int64_t tiles = kernel_num_tiles(k);
  if (tiles <= 0 || tiles % m) return 0;
  bool read = false;
  for (uint32_t j = 0; j < k->num_body; j++) {
    const kinst *q = &k->body[j];
    if (q->kind != KI_LOAD || q->input != in) continue;
    const kernel_map *mp = &q->map;
    if (mp->flat || mp->rank != 2) return 0;
    const kernel_affine *r = &mp->dim[0], *c = &mp->dim[1];
    if (r->offset != 0 || r->coeff[0] != 1 || c->coeff[0] != 0) return 0;
    for (uint32_t d = 1; d < k->rank; d++)
      if (r->coeff[d] != 0) return 0;
    read = true;
  }
  return read ? tiles / m : 0;
}

/* The index of the first step after `from` in p that reads value v, or
 * p->nsteps. */
static uint32_t next_reader(const program *p, uint32_t from, const hlo_value *v) {
  for (uint32_t s = from + 1; s < p->nsteps; s++)
    for (uint32_t i = 0; i < p->steps[s].nin; i++)
      if (p->steps[s].in[i] == v) return s;
  return p->nsteps;
}

/* Whether every input of step q but `skip` is made before step `before`
 * of p (or not by a step of p at all: arguments, constants, outer values). */
static bool inputs_ready(const program *p, const step *q, const hlo_value *skip,
                         uint32_t before) {
  for (uint32_t i = 0; i < q->nin; i++) {
    const hlo_value *v = q->in[i];
    if (v == skip) continue;
    for (uint32_t s = before; s < p->nsteps; s++) {
      const step *w = &p->steps[s];
      if (w == q) continue;
      for (uint32_t o = 0; o < w->nout; o++)
        if (w->out[o] == v) return false;
    }
    for (uint32_t o = 0; o < q->nout; o++)
      if (q->out[o] == v) return false;
  }
  return true;
}

/* Merges kernel step ki into GEMM step gi of p (see the file comment). */
static hlo_status merge(program *p, uint32_t gi, uint32_t ki, const kernel *k, int64_t tpr) {
  step *g = &p->steps[gi], *q = &p->steps[ki];
  uint32_t nin = g->nin + q->nin, nout = g->nout + q->nout;
  const hlo_value **in = malloc(nin * sizeof *in), **out = malloc(nout * sizeof *out);
  if (!in || !out) {
    free(in);
    free(out);
    return cpu_oom();
  }
  memcpy(in, g->in, g->nin * sizeof *in);
  memcpy(in + g->nin, q->in, q->nin * sizeof *in);
  memcpy(out, g->out, g->nout * sizeof *out);
  memcpy(out + g->nout, q->out, q->nout * sizeof *out);
  g->epilogue = true;
  g->epi_kernel = q->kernel;
  g->epi_nin = q->nin;
  g->epi_nout = q->nout;
  g->epi_tiles_per_row = tpr;
  g->epi_op = q->op;
  g->epi_inplace = q->inplace;
  (void)k;
  free(g->in);
  free(g->out);
  g->in = in;
  g->out = out;
  g->nin = nin;
  g->nout = nout;
  free(q->in);
  free(q->out);
  memmove(q, q + 1, (p->nsteps - ki - 1) * sizeof *q);
  p->nsteps--;
  return NULL;
}

/* Whether GEMM step g's product c is dense in c's type: [B..., m, n]
 * with the leading dims' product the batch times m, row stride n and
 * matrix stride m n, so that row r of matrix b is row b m + r of c seen as
 * a matrix of its last dim (kernel_tiles_flat_rows). */
static bool dense_product(const step *g, const hlo_type *ct) {
  const backend_gemm *gg = &g->g;
  if (!ct || ct->kind != TYPE_TENSOR || ct->rank < 2) return false;
  int64_t lead = 1;
  for (uint32_t j = 0; j + 1 < ct->rank; j++) lead *= ct->dims[j];
  return ct->dims[ct->rank - 1] == gg->n && lead == gg->batch * gg->m &&
         (gg->ldc == 0 || gg->ldc == gg->n) &&
         (gg->batch_stride_c == 0 || gg->batch_stride_c == gg->m * gg->n);
}

/* Whether output j of epilogue kernel k (merged into GEMM step g) writes
 * the rows of g's product that its tile reads: tile b*m + r (tpr of them a
 * row) writes only row b*m + r of the output seen as a matrix of its last
 * dim. */
static bool epilogue_out_rows(const step *g, const kernel *k, uint32_t j) {
  uint32_t buf = k->num_inputs + j;
  if (g->epi_tiles_per_row == 1) return kernel_tiles_flat_rows(k, buf);
  /* an elementwise kernel over [m, n], several tiles a row: row x0 */
  const kernel_map *mp = &k->outputs[j].map;
  if (g->g.batch != 1 || k->rank != 2 || k->dims[0] != g->g.m || mp->flat || mp->rank != 2)
    return false;
  const kernel_affine *r = &mp->dim[0], *c = &mp->dim[1];
  if (r->offset != 0 || r->coeff[0] != 1 || c->coeff[0] != 0) return false;
  for (uint32_t d = 1; d < KERNEL_MAX_RANK; d++)
    if (r->coeff[d] != 0) return false;
  return true;
}

/* Whether value v, of dtype dt, is dense [..., rows, cols] with `rows`
 * rows in all (its last dim the columns). */
static bool dense_rows(const hlo_value *v, hlo_dtype dt, int64_t rows, int64_t cols) {
  const hlo_type *t = v->type;
  if (!t || t->kind != TYPE_TENSOR || t->rank < 1 || t->dtype != dt) return false;
  int64_t lead = 1;
  for (uint32_t j = 0; j + 1 < t->rank; j++) lead *= t->dims[j];
  return t->dims[t->rank - 1] == cols && lead == rows;
}

/* Whether every input of GEMM step hi of p but its left operand and its
 * own product (which its epilogue kernel reads) is made before step gi of
 * p (or outside p): step hi can run at gi's place, reading nothing gi makes. */
static bool chain_inputs_ready(const program *p, uint32_t gi, uint32_t hi) {
  const step *h = &p->steps[hi];
  for (uint32_t i = 1; i < h->nin; i++) {
    const hlo_value *v = h->in[i];
    bool own = false;
    for (uint32_t o = 0; o < h->nout; o++) own |= h->out[o] == v;
    if (own) continue;
    for (uint32_t s = gi; s < p->nsteps; s++) {
      if (s == hi) continue;
      for (uint32_t o = 0; o < p->steps[s].nout; o++)
        if (p->steps[s].out[o] == v) return false;
    }
  }
  return true;
}

/* The multiply-adds below which a first product is not chained: the CPU
 * backend computes such a product as one block on the calling thread
 * (backend.h, backend_gemm_epilogue), so its rows are not split. */
#define CHAIN_MIN_WORK (128.0 * 128.0 * 128.0)

/* Chains GEMM step gi of p (with a one-output epilogue making P) with the
 * GEMM step that reads P next as its left operand, when that product's
 * rows are P's rows (see gemm_chain). The second step moves up to the
 * first's place, so its other inputs must be made before it. */
static hlo_status chain_gemm(program *p, uint32_t gi, kernel *const *ks, uint32_t nks) {
  step *g = &p->steps[gi];
  if (g->kind != STEP_GEMM || !g->epilogue || g->chain || g->epi_nout != 1 ||
      g->epi_kernel >= nks || g->nout != 2)
    return NULL;
  const hlo_value *pv = g->out[1];
  uint32_t hi = next_reader(p, gi, pv);
  if (hi >= p->nsteps) return NULL;
  const step *h = &p->steps[hi];
  const backend_gemm *a = &g->g, *b = &h->g;
  /* a product the backend runs in one block (backend_gemm_epilogue: the
   * CPU's under 128^3 multiply-adds) gains nothing from a chain, whose
   * merged step keeps both products' operands live at once */
  if ((double)a->batch * (double)a->m * (double)a->n * (double)a->k < CHAIN_MIN_WORK)
    return NULL;
  if (h->kind != STEP_GEMM || h->chain || h->nin < 2 || h->in[0] != pv || b->trans_a ||
      b->batch != a->batch || b->m != a->m || b->dtype != pv->type->dtype ||
      (b->lda && b->lda != b->k) || (a->batch > 1 && b->batch_stride_a &&
                                     b->batch_stride_a != b->m * b->k))
    return NULL;
  for (uint32_t i = 1; i < h->nin; i++)
    if (h->in[i] == pv) return NULL; /* P read again inside the second step */
  if (!dense_rows(pv, b->dtype, a->batch * a->m, b->k) ||
      !epilogue_out_rows(g, ks[g->epi_kernel], 0) || !chain_inputs_ready(p, gi, hi))
    return NULL;
  gemm_chain *c = calloc(1, sizeof *c);
  uint32_t nin = g->nin + h->nin - 1, nout = g->nout + h->nout;
  const hlo_value **in = malloc(nin * sizeof *in), **out = malloc(nout * sizeof *out);
  if (!c || !in || !out) {
    free(c);
    free(in);
    free(out);
    return cpu_oom();
  }
  *c = (gemm_chain){.g = h->g, .a_out = 1, .in_at = g->nin, .out_at = g->nout, .op = h->op,
                    .epilogue = h->epilogue, .epi_kernel = h->epi_kernel,
                    .epi_nin = h->epi_nin, .epi_nout = h->epi_nout,
                    .epi_tiles_per_row = h->epi_tiles_per_row, .epi_op = h->epi_op};
  memcpy(in, g->in, g->nin * sizeof *in);
  memcpy(in + g->nin, h->in + 1, (h->nin - 1) * sizeof *in);
  memcpy(out, g->out, g->nout * sizeof *out);
  memcpy(out + g->nout, h->out, h->nout * sizeof *out);
  free(g->in);
  free(g->out);
  g->in = in, g->out = out, g->nin = nin, g->nout = nout, g->chain = c;
  step *q = &p->steps[hi];
  free(q->in);
  free(q->out);
  memmove(q, q + 1, (p->nsteps - hi - 1) * sizeof *q);
  p->nsteps--;
  return NULL;
}

static hlo_status chain_gemms(cpu_exec *x, program *p, kernel *const *ks, uint32_t nks) {
  for (uint32_t gi = 0; gi < p->nsteps; gi++) {
    bool before = p->steps[gi].chain != NULL;
    HLO_TRY(chain_gemm(p, gi, ks, nks));
    x->stats.gemm_chains += !before && p->steps[gi].chain;
  }
  return NULL;
}

hlo_status cpu_fuse_epilogues(cpu_exec *x, kernel *const *ks, uint32_t nks) {
  if (!x->be->gemm_epilogue || !x->be->launch_tiles) return NULL;
  for (uint32_t pi = 0; pi < x->nprogs; pi++) {
    program *p = &x->progs[pi];
    for (uint32_t gi = 0; gi < p->nsteps; gi++) {
      step *g = &p->steps[gi];
      if (g->kind != STEP_GEMM || g->epilogue || g->g.batch < 1 || g->nout != 1) continue;
      const hlo_value *c = g->out[0];
      const hlo_type *ct = c->type;
      /* a plain m x n product, or one whose rows are spread over more
       * dims ([B..., M, N] of a batch, JAX's [1, S, D]) */
      bool flat = g->g.batch > 1 || !ct || ct->kind != TYPE_TENSOR || ct->rank != 2 ||
                  ct->dims[0] != g->g.m || ct->dims[1] != g->g.n;
      if (flat && !dense_product(g, ct)) continue;
      /* a product the block returns lives in its own result buffer, which
       * the merged step cannot write: keep the steps apart */
      const hlo_op *term = p->block->last;
      bool returned = false;
      for (uint32_t i = 0; term && i < term->num_operands; i++) returned |= term->operands[i] == c;
      if (returned) continue;
      uint32_t ki = next_reader(p, gi, c);
      if (ki >= p->nsteps) continue;
      const step *q = &p->steps[ki];
      if (q->kind != STEP_KERNEL || q->kernel >= nks) continue;
      const kernel *k = ks[q->kernel];
      int32_t at = -1;
      for (uint32_t i = 0; i < q->nin && i < k->num_inputs; i++)
        if (q->in[i] == c) at = at < 0 ? (int32_t)i : -2;
      if (at < 0) continue; /* not read, or read as two inputs */
      /* a row kernel (one tile per row, kernel_tiles_rows), or an
       * elementwise kernel with one or more tiles per row */
      int64_t rows = 0, tpr = 0;
      if (flat) /* tile b*m + r: row r of matrix b, one tile a row */
        tpr = kernel_tiles_flat_rows(k, (uint32_t)at) ? 1 : 0;
      else if (kernel_tiles_rows(k, (uint32_t)at, &rows) && rows == 1 &&
               kernel_num_tiles(k) == g->g.m)
        tpr = 1;
      else
        tpr = tiles_per_row(k, (uint32_t)at, g->g.m);
      if (!tpr || !inputs_ready(p, q, c, gi)) continue;
      HLO_TRY(merge(p, gi, ki, k, tpr));
      x->stats.epilogues++;
    }
  }
  const char *off = getenv("HLO_NO_GEMM_CHAIN");
  if (off && *off && strcmp(off, "0")) return NULL;
  for (uint32_t pi = 0; pi < x->nprogs; pi++)
    HLO_TRY(chain_gemms(x, &x->progs[pi], ks, nks));
  return NULL;
}

/* The second product of a chain, run on blocks of the first's rows. */
typedef struct chain_ctx {
  const cpu_exec *x;
  const gemm_chain *c;
  const char *a, *b;           /* P, B2 */
  char *out;                   /* C2 */
  void *const *kbufs;          /* its epilogue kernel's buffers */
  hlo_status err;              /* the first failure of a block (atomic) */
} chain_ctx;

/* An epilogue: kernel `kernel` on the tiles of rows of a product. Tile
 * numbering is over the whole product (`m` rows a matrix); a block's rows
 * are offset by `base` (a chained product run on a block of rows starting
 * at row `base` of the whole). Then the chained product on those rows. */
typedef struct epilogue_ctx {
  const cpu_exec *x;
  uint32_t kernel;
  int64_t tpr, m, base;
  void *const *kbufs;
  chain_ctx *chain;
} epilogue_ctx;

static void run_chain_rows(chain_ctx *h, int64_t batch, int64_t row_begin, int64_t row_end);

/* Rows [row_begin, row_end) of matrix `batch` of the product are rows
 * base + batch * m + row_* of it seen as one matrix: the kernel's tiles of
 * them; then the chained product on them. */
static void run_rows(void *ctx, int64_t batch, int64_t row_begin, int64_t row_end) {
  const epilogue_ctx *e = ctx;
  int64_t first = e->base + batch * e->m;
  e->x->be->launch_tiles(e->x->mod, e->kernel, e->kbufs, (first + row_begin) * e->tpr,
                         (first + row_end) * e->tpr);
  if (e->chain) run_chain_rows(e->chain, batch, row_begin, row_end);
}

/* Records the first error of a block (the others are freed). */
static void chain_fail(chain_ctx *h, hlo_status st) {
  hlo_status none = NULL;
  if (!__atomic_compare_exchange_n(&h->err, &none, st, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    hlo_status_free(st);
}

/* The chained product on rows [row_begin, row_end) of matrix `batch`: one
 * product of that many rows (run on this thread: a parallel call from a
 * worker runs inline), with its own epilogue on them. */
static void run_chain_rows(chain_ctx *h, int64_t batch, int64_t row_begin, int64_t row_end) {
  const backend_gemm *f = &h->c->g;
  backend_gemm g = *f;
  int64_t lda = f->lda ? f->lda : f->k, ldc = f->ldc ? f->ldc : f->n;
  int64_t sa = f->batch_stride_a ? f->batch_stride_a : f->m * f->k;
  int64_t sb = f->batch_stride_b ? f->batch_stride_b : f->k * f->n;
  int64_t sc = f->batch_stride_c ? f->batch_stride_c : f->m * f->n;
  size_t es = hlo_dtype_size(f->dtype), ces = hlo_dtype_size(f->c_dtype);
  g.batch = 1, g.m = row_end - row_begin, g.lda = lda, g.ldc = ldc;
  g.batch_stride_a = g.batch_stride_b = g.batch_stride_c = 0;
  const char *a = h->a + (size_t)(batch * sa + row_begin * lda) * es;
  const char *b = h->b + (size_t)(batch * sb) * es;
  char *c = h->out + (size_t)(batch * sc + row_begin * ldc) * ces;
  hlo_status st;
  if (!h->c->epilogue) {
    st = h->x->be->gemm(&g, a, b, c);
  } else {
    epilogue_ctx e = {h->x, h->c->epi_kernel, h->c->epi_tiles_per_row, f->m,
                      batch * f->m + row_begin, h->kbufs, NULL};
    backend_gemm_epilogue ep = {run_rows, &e};
    st = h->x->be->gemm_epilogue(&g, a, b, c, &ep);
  }
  if (st) chain_fail(h, st);
}

hlo_status cpu_run_gemm(cpu_exec *x, const step *s, void *const *bufs) {
  void *c = bufs[s->nin];
  if (!s->epilogue) return x->be->gemm(&s->g, bufs[0], bufs[1], c);
  /* the kernel's buffers: its inputs (after A and B), then its outputs
   * (after C); a chained product's: P, its inputs (B2 first) and its
   * outputs (C2 first) */
  const gemm_chain *gc = s->chain;
  uint32_t n = s->epi_nin + s->epi_nout, n2 = gc ? gc->epi_nin + gc->epi_nout : 0;
  void *small[32];
  void **kb = n + n2 <= 32 ? small : malloc((n + n2) * sizeof *kb);
  if (!kb) return cpu_oom();
  memcpy(kb, bufs + 2, s->epi_nin * sizeof *kb);
  memcpy(kb + s->epi_nin, bufs + s->nin + 1, s->epi_nout * sizeof *kb);
  chain_ctx h = {0};
  if (gc) {
    void *const *in2 = bufs + gc->in_at, *const *out2 = bufs + s->nin + gc->out_at;
    memcpy(kb + n, in2 + 1, gc->epi_nin * sizeof *kb);
    memcpy(kb + n + gc->epi_nin, out2 + 1, gc->epi_nout * sizeof *kb);
    h = (chain_ctx){x, gc, bufs[s->nin + gc->a_out], in2[0], out2[0], kb + n, NULL};
  }
  epilogue_ctx e = {x, s->epi_kernel, s->epi_tiles_per_row, s->g.m, 0, kb, gc ? &h : NULL};
  backend_gemm_epilogue ep = {run_rows, &e};
  hlo_status st = x->be->gemm_epilogue(&s->g, bufs[0], bufs[1], c, &ep);
  hlo_status err = __atomic_load_n(&h.err, __ATOMIC_ACQUIRE);
  if (st) hlo_status_free(err);
  else st = err;
  if (st && gc && !status_loc(st)) st = status_note(st, "in the chained %s", op_name(gc->op->opcode));
  if (kb != small) free(kb);
  return st;
}
