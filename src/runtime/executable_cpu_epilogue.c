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
 * offsets the tiles by the matrix. */
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
  return NULL;
}

typedef struct epilogue_ctx {
  const cpu_exec *x;
  const step *s;
  void *const *kbufs;
} epilogue_ctx;

/* Rows [row_begin, row_end) of matrix `batch` of the product are rows
 * batch * m + row_* of it seen as one matrix: the kernel's tiles of them. */
static void run_rows(void *ctx, int64_t batch, int64_t row_begin, int64_t row_end) {
  const epilogue_ctx *e = ctx;
  int64_t tpr = e->s->epi_tiles_per_row, base = batch * e->s->g.m;
  e->x->be->launch_tiles(e->x->mod, e->s->epi_kernel, e->kbufs, (base + row_begin) * tpr,
                         (base + row_end) * tpr);
}

hlo_status cpu_run_gemm(cpu_exec *x, const step *s, void *const *bufs) {
  void *c = bufs[s->nin];
  if (!s->epilogue) return x->be->gemm(&s->g, bufs[0], bufs[1], c);
  /* the kernel's buffers: its inputs (after A and B), then its outputs (after C) */
  uint32_t n = s->epi_nin + s->epi_nout;
  void *small[32];
  void **kb = n <= 32 ? small : malloc(n * sizeof *kb);
  if (!kb) return cpu_oom();
  memcpy(kb, bufs + 2, s->epi_nin * sizeof *kb);
  memcpy(kb + s->epi_nin, bufs + s->nin + 1, s->epi_nout * sizeof *kb);
  epilogue_ctx e = {x, s, kb};
  backend_gemm_epilogue ep = {run_rows, &e};
  hlo_status st = x->be->gemm_epilogue(&s->g, bufs[0], bufs[1], c, &ep);
  if (kb != small) free(kb);
  return st;
}
