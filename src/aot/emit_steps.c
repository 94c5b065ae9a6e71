/* emit_steps.c — the C of the data steps of --emit=lib (aot_internal.h):
 * kernels (called over all their tiles, the large ones on the thread team),
 * gemms (a BLAS or the library's loops, in row blocks on the team, with
 * their epilogue kernel and chained product per block: output fusion as
 * runtime/executable_cpu_epilogue.c), fills, dynamic_slice /
 * dynamic_update_slice / pad / row gather and scatter (the forms of
 * runtime/executable_cpu_copy.c, same semantics), sorts (the interpreter's
 * merge sort over a generated comparator), convolutions and window ops (the
 * interpreter's folds, in its order), and of the interpreter's steps:
 * reverse, gathers in the spec's general form, jaxlib's LAPACK custom
 * calls (?potrf, ?getrf, ?trsm on f32 / f64). The helpers they call are
 * lib_text.c's. */
#include <stdio.h>
#include <string.h>
#include "aot/aot_internal.h"
#include "interp/interp_lapack.h"
#include "ir/element.h"
#include "support/arena.h"
#include "support/float.h"

/* The integer list attribute `name` of op (or struct field), as ints. */
static bool ints_of(arena *a, const hlo_attr *at, int64_t **v, uint32_t *n) {
  *v = NULL;
  *n = 0;
  return !at || attr_as_ints(a, at, v, n);
}

/* A kernel step: its buffers in one array, the kernel over all its tiles. */
static hlo_status emit_kernel(emitter *E, const step *q) {
  const backend_module *m = E->x->mod;
  if (!m || q->kernel >= m->n) return status_at(HLO_INTERNAL, &q->op->loc, "--emit=lib: no kernel");
  strbuf *c = E->c;
  char b[96];
  sb_puts(c, "  {\n    void *const b[] = {");
  for (uint32_t i = 0; i < q->nin + q->nout; i++) {
    AOT_PTR(i < q->nin ? q->in[i] : q->out[i - q->nin], b);
    sb_printf(c, "%s%s", i ? ", " : "", b);
  }
  /* the CPU backend's rule: inline under 128K points of work */
  if (m->points[q->kernel] >= ((int64_t)1 << 17) && m->tiles[q->kernel] > 1)
    sb_printf(c, "};\n    %s_launch(T, %s, b, %lld);\n  }\n", E->name, m->names[q->kernel],
              (long long)m->tiles[q->kernel]);
  else
    sb_printf(c, "};\n    %s(b, 0, %lld);\n  }\n", m->names[q->kernel], (long long)m->tiles[q->kernel]);
  return NULL;
}

bool aot_gemm_needs_ws(aot_blas blas, const backend_gemm *g) {
  return blas == AOT_BLAS_DNNL && g->dtype == HLO_BF16 && g->c_dtype == HLO_BF16;
}

/* The library's function for product g (lib_text.c), or NULL. */
static const char *gemm_fn(const backend_gemm *g) {
  if (g->dtype == HLO_F32 && g->c_dtype == HLO_F32) return "gemm_f32";
  if (g->dtype == HLO_F64 && g->c_dtype == HLO_F64) return "gemm_f64";
  if (g->dtype == HLO_BF16 && g->c_dtype == HLO_BF16) return "gemm_bf16";
  if (g->dtype == HLO_BF16 && g->c_dtype == HLO_F32) return "gemm_bf16_f32";
  return NULL;
}

/* backend_gemm's strides made explicit (its zeros: dense). */
typedef struct gemm_geo {
  int64_t lda, ldb, ldc, sa, sb, sc;
} gemm_geo;

static gemm_geo geo_of(const backend_gemm *g) {
  gemm_geo r;
  r.lda = g->lda ? g->lda : g->trans_a ? g->m : g->k;
  r.ldb = g->ldb ? g->ldb : g->trans_b ? g->k : g->n;
  r.ldc = g->ldc ? g->ldc : g->n;
  r.sa = g->batch_stride_a ? g->batch_stride_a : g->m * g->k;
  r.sb = g->batch_stride_b ? g->batch_stride_b : g->k * g->n;
  r.sc = g->batch_stride_c ? g->batch_stride_c : g->m * g->n;
  return r;
}

/* The workspace of the product whose C is value v: "(s + OFF)" or "NULL". */
static void ws_of(const emitter *E, const hlo_value *v, char *buf, size_t n) {
  if (E->gemm_ws[v->id] >= 0) snprintf(buf, n, "(s + %lld)", (long long)E->gemm_ws[v->id]);
  else snprintf(buf, n, "NULL");
}

/* Prints "{v0, v1, ...}" of the values' buffers ("{0}" when none). */
static hlo_status put_ptrs(emitter *E, const hlo_value *const *v, uint32_t n) {
  char b[96];
  sb_putc(E->c, '{');
  if (!n) sb_puts(E->c, "0");
  for (uint32_t i = 0; i < n; i++) {
    AOT_PTR(v[i], b);
    sb_printf(E->c, "%s%s", i ? ", " : "", b);
  }
  sb_putc(E->c, '}');
  return NULL;
}

/* The chained product of step q as a function of the epilogue's rows
 * (executable_cpu_epilogue.c, run_chain_rows): rows [i0, i1) of P . B2 of
 * matrix b, on the calling thread, with its own epilogue (ep2) on them.
 * Printed into E->fns; returns its number. */
static uint32_t emit_chain_fn(emitter *E, const step *q, const char *fn2) {
  const gemm_chain *gc = q->chain;
  const backend_gemm *f = &gc->g;
  gemm_geo G = geo_of(f);
  int64_t lda = f->lda ? f->lda : f->k;
  size_t es = hlo_dtype_size(f->dtype), ces = hlo_dtype_size(f->c_dtype);
  uint32_t k = E->nchains++;
  sb_printf(E->fns,
            "\n/* the product chained to the gemm at line %u (line %u), on a block of rows */\n"
            "static void %s_chain%u(const %s_epi *e, int64_t b, int64_t i0, int64_t i1) {\n"
            "  %s_%s(NULL, 1, i1 - i0, %lld, %lld, 0, %d, %lld, %lld, %lld, 0, 0, 0,\n"
            "      (const uint8_t *)e->cbufs[0] + (b * %lld + i0 * %lld) * %zu,\n"
            "      (const uint8_t *)e->cbufs[1] + b * %lld * %zu,\n"
            "      (uint8_t *)e->cbufs[2] + (b * %lld + i0 * %lld) * %zu,\n"
            "      e->cbufs[3] ? (uint8_t *)e->cbufs[3] + (b * %lld + i0) * %lld * 4 : NULL, e->ep2,\n"
            "      b * %lld + i0);\n"
            "}\n",
            q->op->loc.line, gc->op ? gc->op->loc.line : 0, E->name, k, E->name, E->name, fn2,
            (long long)f->n, (long long)f->k, f->trans_b, (long long)lda, (long long)G.ldb,
            (long long)G.ldc, (long long)G.sa, (long long)lda, es, (long long)G.sb, es,
            (long long)G.sc, (long long)G.ldc, ces, (long long)f->m, (long long)f->n,
            (long long)f->m);
  return k;
}

/* A gemm step: the library's NAME_gemm_TYPE over its batch, strides made
 * explicit; with an epilogue (output fusion), the kernel over each block
 * of rows on the thread that computed it, and a chained product after it. */
static hlo_status emit_gemm(emitter *E, const step *q) {
  const backend_gemm *g = &q->g;
  const char *fn = gemm_fn(g);
  if (!fn) return aot_unsupported(q, "is a matrix product of a type the library lacks");
  const gemm_chain *gc = q->epilogue ? q->chain : NULL;
  const char *fn2 = gc ? gemm_fn(&gc->g) : NULL;
  if (gc && !fn2) return aot_unsupported(q, "chains a matrix product of a type the library lacks");
  const backend_module *m = E->x->mod;
  if (q->epilogue && (!m || q->epi_kernel >= m->n || q->nin < 2 + q->epi_nin ||
                      q->nout < 1 + q->epi_nout))
    return status_at(HLO_INTERNAL, &q->op->loc, "--emit=lib: a gemm epilogue without its kernel");
  if (gc && ((gc->epilogue && gc->epi_kernel >= m->n) || gc->in_at + 1 + gc->epi_nin > q->nin ||
             gc->out_at + 1 + gc->epi_nout > q->nout || gc->a_out >= q->nout))
    return status_at(HLO_INTERNAL, &q->op->loc, "--emit=lib: a gemm chain without its buffers");
  gemm_geo G = geo_of(g);
  char a[96], bb[96], cc[96], ws[96];
  AOT_PTR(q->in[0], a);
  AOT_PTR(q->in[1], bb);
  AOT_PTR(q->out[0], cc);
  ws_of(E, q->out[0], ws, sizeof ws);
  strbuf *c = E->c;
  const char *ep = "NULL";
  if (q->epilogue) {
    sb_puts(c, "  {\n    void *const kb[] = ");
    const hlo_value *kbv[64];
    uint32_t nk = q->epi_nin + q->epi_nout;
    if (nk > 64) return aot_unsupported(q, "has an epilogue of too many buffers");
    for (uint32_t i = 0; i < q->epi_nin; i++) kbv[i] = q->in[2 + i];
    for (uint32_t i = 0; i < q->epi_nout; i++) kbv[q->epi_nin + i] = q->out[1 + i];
    HLO_TRY(put_ptrs(E, kbv, nk));
    sb_puts(c, ";\n");
    char chain[64] = "NULL", ep2[16] = "NULL";
    if (gc) {
      if (gc->epilogue) {
        uint32_t n2 = gc->epi_nin + gc->epi_nout;
        if (n2 > 64) return aot_unsupported(q, "has an epilogue of too many buffers");
        for (uint32_t i = 0; i < gc->epi_nin; i++) kbv[i] = q->in[gc->in_at + 1 + i];
        for (uint32_t i = 0; i < gc->epi_nout; i++) kbv[gc->epi_nin + i] = q->out[gc->out_at + 1 + i];
        sb_puts(c, "    void *const kb2[] = ");
        HLO_TRY(put_ptrs(E, kbv, n2));
        sb_printf(c, ";\n    const %s_epi e2 = {%s, kb2, %lld, NULL, NULL, NULL};\n", E->name,
                  m->names[gc->epi_kernel], (long long)gc->epi_tiles_per_row);
        snprintf(ep2, sizeof ep2, "&e2");
      }
      char p[96], b2[96], c2[96], w2[96];
      AOT_PTR(q->out[gc->a_out], p);
      AOT_PTR(q->in[gc->in_at], b2);
      AOT_PTR(q->out[gc->out_at], c2);
      ws_of(E, q->out[gc->out_at], w2, sizeof w2);
      sb_printf(c, "    void *const cb[] = {%s, %s, %s, %s};\n", p, b2, c2, w2);
      snprintf(chain, sizeof chain, "%s_chain%u", E->name, emit_chain_fn(E, q, fn2));
    }
    sb_printf(c, "    const %s_epi e = {%s, kb, %lld, %s, %s, %s};\n", E->name,
              m->names[q->epi_kernel], (long long)q->epi_tiles_per_row, chain,
              gc ? "cb" : "NULL", ep2);
    ep = "&e";
  }
  sb_printf(c,
            "%s  %s_%s(T, %lld, %lld, %lld, %lld, %d, %d, %lld, %lld, %lld, %lld, %lld, %lld, %s, %s, %s, %s, %s, 0);\n",
            q->epilogue ? "  " : "", E->name, fn, (long long)g->batch, (long long)g->m,
            (long long)g->n, (long long)g->k, g->trans_a, g->trans_b, (long long)G.lda,
            (long long)G.ldb, (long long)G.ldc, (long long)G.sa, (long long)G.sb, (long long)G.sc,
            a, bb, cc, ws, ep);
  if (q->epilogue) sb_puts(c, "  }\n");
  return NULL;
}

/* A splat's element bytes as a C initializer. */
static hlo_status splat_bytes(const hlo_op *op, const hlo_type *t, strbuf *c) {
  const hlo_attr *a = op_attr(op, "value");
  size_t es = hlo_dtype_size(t->dtype);
  if (!a || a->kind != ATTR_DENSE || es > 16 || !a->u.dense.data)
    return status_at(HLO_INTERNAL, &op->loc, "--emit=lib: a fill without a splat value");
  const uint8_t *d = a->u.dense.data;
  sb_putc(c, '{');
  for (size_t i = 0; i < es; i++) sb_printf(c, "%s%u", i ? ", " : "", d[i]);
  sb_putc(c, '}');
  return NULL;
}

hlo_status aot_emit_fill_to(emitter *E, const hlo_op *op, const hlo_type *t, const char *dst) {
  sb_puts(E->c, "  {\n    static const uint8_t e[] = ");
  HLO_TRY(splat_bytes(op, t, E->c));
  sb_printf(E->c, ";\n    %s_fill(%s, e, %lld, %zu);\n  }\n", E->name, dst,
            (long long)type_num_elements(t), hlo_dtype_size(t->dtype));
  return NULL;
}

/* dynamic_slice / dynamic_update_slice: the start indices read and clamped
 * at run time (the spec's rule), then one block copy (the update over a
 * copy of the operand, or over the operand itself when the buffer
 * assignment put the result there: in place). */
static hlo_status emit_dslice(emitter *E, const step *q) {
  const hlo_type *ot = q->in[0]->type;
  uint32_t rank = ot->rank, first = q->kind == STEP_DSLICE ? 1 : 2;
  const hlo_type *bt = q->kind == STEP_DSLICE ? q->out[0]->type : q->in[1]->type;
  size_t es = hlo_dtype_size(ot->dtype);
  char src[96], dst[96], upd[96], idx[96];
  AOT_PTR(q->in[0], src);
  AOT_PTR(q->out[0], dst);
  strbuf *c = E->c;
  sb_puts(c, "  {\n    const int64_t od[] = ");
  aot_print_dims(c, ot->dims, rank);
  sb_puts(c, ", bd[] = ");
  aot_print_dims(c, bt->dims, rank);
  sb_printf(c, ";\n    int64_t st[%u] = {0};\n    const int64_t zero[%u] = {0};\n",
            rank ? rank : 1, rank ? rank : 1);
  const char *stn = "st", *zn = "zero";
  for (uint32_t d = 0; d < rank; d++) {
    const hlo_type *it = q->in[first + d]->type;
    const char *ct = aot_int_ctype(it->dtype);
    if (!ct) return aot_unsupported(q, "has start indices of a type the library lacks");
    AOT_PTR(q->in[first + d], idx);
    sb_printf(c, "    %s[%u] = %s_clamp((int64_t)*(const %s *)%s, %lld);\n", stn, d, E->name, ct,
              idx, (long long)(ot->dims[d] - bt->dims[d]));
  }
  if (q->kind == STEP_DSLICE) {
    sb_printf(c, "    %s_copy_block(%s, bd, %s, %s, od, %s, bd, %u, %zu);\n", E->name, dst, zn, src,
              stn, rank, es);
  } else {
    AOT_PTR(q->in[1], upd);
    if (strcmp(dst, src)) /* else in place */
      sb_printf(c, "    memcpy(%s, %s, %lld);\n", dst, src,
                (long long)((int64_t)es * type_num_elements(ot)));
    sb_printf(c, "    %s_copy_block(%s, od, %s, %s, bd, %s, bd, %u, %zu);\n", E->name, dst, stn,
              upd, zn, rank, es);
  }
  sb_printf(c, "    (void)od; (void)bd; (void)st; (void)zero;\n  }\n");
  return NULL;
}

/* pad: the result filled with the padding value, then the operand's
 * elements that land inside it (edge padding may be negative; the
 * geometry from executable_cpu_copy.c's cpu_pad_geometry). */
static hlo_status emit_pad(emitter *E, const step *q) {
  const hlo_type *ot = q->in[0]->type, *rt = q->out[0]->type;
  uint32_t rank = ot->rank;
  size_t es = hlo_dtype_size(rt->dtype);
  int64_t first[16] = {0}, count[16] = {0}, stride[16] = {0}, low[16] = {0};
  bool empty = false;
  if (rank > 16) return aot_unsupported(q, "has a rank past 16");
  hlo_status gst = cpu_pad_geometry(q, first, count, stride, low, &empty);
  if (gst) {
    hlo_status_free(gst);
    return aot_unsupported(q, "has padding attributes the library cannot read");
  }
  char src[96], val[96], dst[96];
  AOT_PTR(q->in[0], src);
  AOT_PTR(q->in[1], val);
  AOT_PTR(q->out[0], dst);
  strbuf *c = E->c;
  sb_printf(c, "  %s_fill(%s, %s, %lld, %zu);\n", E->name, dst, val,
            (long long)type_num_elements(rt), es);
  if (empty || rank == 0) {
    if (rank == 0 && !empty) sb_printf(c, "  memcpy(%s, %s, %zu);\n", dst, src, es);
    return NULL;
  }
  sb_puts(c, "  {\n    const int64_t od[] = ");
  aot_print_dims(c, ot->dims, rank);
  sb_puts(c, ", rd[] = ");
  aot_print_dims(c, rt->dims, rank);
  sb_puts(c, ", first[] = ");
  aot_print_dims(c, first, rank);
  sb_puts(c, ", count[] = ");
  aot_print_dims(c, count, rank);
  sb_puts(c, ", stride[] = ");
  aot_print_dims(c, stride, rank);
  sb_puts(c, ", low[] = ");
  aot_print_dims(c, low, rank);
  sb_printf(c, ";\n    %s_pad(%s, %s, %u, %zu, od, rd, first, count, stride, low);\n  }\n", E->name,
            dst, src, rank, es);
  return NULL;
}

/* The number of batching dims of a row gather / scatter (the field's
 * length). */
static uint32_t batch_dims(const step *q) {
  const hlo_attr *dn =
      op_attr(q->op, q->kind == STEP_GATHER ? "dimension_numbers" : "scatter_dimension_numbers");
  const hlo_attr *f = dn ? attr_field(dn, q->kind == STEP_GATHER ? "operand_batching_dims"
                                                                 : "input_batching_dims")
                         : NULL;
  arena a;
  arena_init(&a);
  int64_t *v;
  uint32_t n = 0;
  if (!ints_of(&a, f, &v, &n)) n = 0;
  arena_deinit(&a);
  return n;
}

/* 0: set, 1: add, -1: another combiner (executable_cpu_copy.c's rule). */
static int scatter_add(const hlo_op *op) {
  if (op->num_regions != 1) return -1;
  const hlo_block *b = &op->regions[0].block;
  if (b->num_args != 2 || !b->last || b->last->num_operands != 1) return -1;
  const hlo_value *r = b->last->operands[0];
  if (r == &b->args[1] && b->first == b->last) return 0;
  const hlo_op *o = r->def;
  if (!o || o != b->first || o->next != b->last || o->opcode != OP_ADD) return -1;
  return (o->operands[0] == &b->args[0] && o->operands[1] == &b->args[1]) ||
                 (o->operands[0] == &b->args[1] && o->operands[1] == &b->args[0])
             ? 1
             : -1;
}

/* The row forms of gather (out[i] = operand row clamp(idx[i]) of its
 * batch) and scatter (in order of i, row idx[i] of the output set to or
 * added with update row i; out-of-bounds rows skipped), as
 * executable_cpu_copy.c runs them. */
static hlo_status emit_rows(emitter *E, const step *q) {
  const hlo_type *ot = q->in[0]->type, *it = q->in[1]->type;
  uint32_t nb = batch_dims(q);
  if (nb >= ot->rank) return aot_unsupported(q, "has a row form the library cannot read");
  int64_t batches = 1, nrows = ot->dims[nb], re = 1;
  for (uint32_t d = 0; d < nb; d++) batches *= ot->dims[d];
  for (uint32_t d = nb + 1; d < ot->rank; d++) re *= ot->dims[d];
  int64_t nidx = type_num_elements(it), per_batch = batches ? nidx / batches : 0;
  const char *ct = aot_int_ctype(it->dtype);
  if (!ct) return aot_unsupported(q, "has indices of a type the library lacks");
  size_t es = hlo_dtype_size(ot->dtype);
  char src[96], idx[96], dst[96], upd[96];
  AOT_PTR(q->in[0], src);
  AOT_PTR(q->in[1], idx);
  strbuf *c = E->c;
  if (q->kind == STEP_GATHER) {
    AOT_PTR(q->out[0], dst);
    sb_printf(c,
              "  for (int64_t i = 0; i < %lld; i++) {\n"
              "    int64_t r = %s_clamp((int64_t)((const %s *)%s)[i], %lld);\n"
              "    memcpy((uint8_t *)%s + i * %lld, (const uint8_t *)%s + (i / %lld * %lld + r) * %lld, %lld);\n"
              "  }\n",
              (long long)nidx, E->name, ct, idx, (long long)(nrows - 1), dst,
              (long long)(re * (int64_t)es), src, (long long)(per_batch ? per_batch : 1),
              (long long)nrows, (long long)(re * (int64_t)es), (long long)(re * (int64_t)es));
    return NULL;
  }
  int add = scatter_add(q->op);
  const char *at = NULL;
  switch (ot->dtype) {
  case HLO_F32: at = "float"; break;
  case HLO_F64: at = "double"; break;
  case HLO_I32: at = "uint32_t"; break; /* wraps: unsigned arithmetic */
  case HLO_I64: at = "uint64_t"; break;
  default: break;
  }
  if (add < 0 || (add == 1 && !at)) return aot_unsupported(q, "has a combiner the library lacks");
  AOT_PTR(q->in[2], upd);
  AOT_PTR(q->out[0], dst);
  int64_t rb = re * (int64_t)es;
  if (strcmp(dst, src)) /* else in place */
    sb_printf(c, "  memcpy(%s, %s, %lld);\n", dst, src, (long long)(batches * nrows * rb));
  sb_printf(c,
            "  for (int64_t i = 0; i < %lld; i++) {\n"
            "    int64_t r = (int64_t)((const %s *)%s)[i];\n"
            "    if (r < 0 || r >= %lld) continue;\n"
            "    uint8_t *o = (uint8_t *)%s + (i / %lld * %lld + r) * %lld;\n"
            "    const uint8_t *u = (const uint8_t *)%s + i * %lld;\n",
            (long long)nidx, ct, idx, (long long)nrows, dst, (long long)(per_batch ? per_batch : 1),
            (long long)nrows, (long long)rb, upd, (long long)rb);
  if (!add) {
    sb_printf(c, "    memcpy(o, u, %lld);\n", (long long)rb);
  } else {
    sb_printf(c,
              "    for (int64_t k = 0; k < %lld; k++) {\n"
              "      %s a, b;\n"
              "      memcpy(&a, o + k * %zu, %zu);\n"
              "      memcpy(&b, u + k * %zu, %zu);\n"
              "      a = (%s)(a + b);\n"
              "      memcpy(o + k * %zu, &a, %zu);\n"
              "    }\n",
              (long long)re, at, es, es, es, es, at, es, es);
  }
  sb_puts(c, "  }\n");
  return NULL;
}

/* A float key's value as a C expression of a double (for the constants of
 * a canonicalisation). */
static void double_lit(strbuf *c, double v) {
  if (v != v) sb_puts(c, "__builtin_nan(\"\")");
  else if (v > 1e308 * 10) sb_puts(c, "__builtin_inf()");
  else if (v < -1e308 * 10) sb_puts(c, "(-__builtin_inf())");
  else sb_printf(c, "%a", v);
}

/* The key's float kind for NAME_fval: 0 f32, 1 f64, 2 bf16, 3 f16; -1: an integer. */
static int fkind(hlo_dtype t) {
  return t == HLO_F32 ? 0 : t == HLO_F64 ? 1 : t == HLO_BF16 ? 2 : t == HLO_F16 ? 3 : -1;
}

/* A sort step: a comparator function over element indices (the keys in
 * order: canonicalised, compared as the interpreter compares them) and a
 * sort function running the interpreter's bottom-up merge sort
 * (interp/interp_sort.c) on each slice, so the order is the interpreter's,
 * NaN keys included. The index arrays (2 x the slice length) are the
 * step's scratch. */
static hlo_status emit_sort(emitter *E, const step *q) {
  const backend_sort *d = q->sort;
  if (!d) return aot_unsupported(q, "has no description (internal)");
  uint32_t k = E->nsorts++;
  const char *N = E->name;
  strbuf *f = E->fns;
  sb_printf(f, "\n/* the comparator of the sort at line %u */\n", q->op->loc.line);
  sb_printf(f, "static int %s_less%u(const void *const *in, int64_t a, int64_t b) {\n", N, k);
  for (uint32_t i = 0; i < d->nkeys; i++) {
    const backend_sort_key *key = &d->keys[i];
    size_t es = hlo_dtype_size(key->dtype);
    int fk = fkind(key->dtype);
    sb_printf(f, "  { /* key %u: operand %u, %s%s */\n", i, key->operand,
              hlo_dtype_name(key->dtype), key->descending ? ", descending" : "");
    sb_printf(f,
              "    uint64_t ua = 0, ub = 0;\n"
              "    memcpy(&ua, (const uint8_t *)in[%u] + a * %zu, %zu);\n"
              "    memcpy(&ub, (const uint8_t *)in[%u] + b * %zu, %zu);\n",
              key->operand, es, es, key->operand, es, es);
    const char *lt = key->descending ? ">" : "<";
    if (fk >= 0) {
      sb_printf(f, "    double va = %s_fval(ua, %d), vb = %s_fval(ub, %d);\n", N, fk, N, fk);
      for (int side = 0; side < 2 && key->ncanon; side++) {
        const char *u = side ? "ub" : "ua", *v = side ? "vb" : "va";
        for (uint32_t j = 0; j < key->ncanon; j++) {
          const backend_sort_canon *cn = &key->canon[j];
          sb_printf(f, "    %sif (", j ? "else " : "");
          if (cn->is_nan) sb_printf(f, "%s != %s", v, v);
          else {
            sb_printf(f, "%s == ", v);
            double_lit(f, cn->eq_value);
          }
          sb_printf(f, ") %s = %lluull, %s = ", u, (unsigned long long)cn->to_bits, v);
          double_lit(f, float_decode(key->dtype, cn->to_bits));
          sb_puts(f, ";\n");
        }
      }
      if (key->cmp == BACKEND_SORT_FLOAT) {
        sb_printf(f, "    if (va %s vb) return 1;\n    if (!(va == vb)) return 0;\n", lt);
      } else {
        sb_printf(f,
                  "    (void)va; (void)vb;\n"
                  "    uint64_t ka = %s_total(ua, %zu), kb = %s_total(ub, %zu);\n"
                  "    if (ka %s kb) return 1;\n    if (ka != kb) return 0;\n",
                  N, es * 8, N, es * 8, lt);
      }
    } else if (key->cmp == BACKEND_SORT_SIGNED) {
      const char *st = es == 1 ? "int8_t" : es == 2 ? "int16_t" : es == 4 ? "int32_t" : "int64_t";
      const char *ut = es == 1 ? "uint8_t" : es == 2 ? "uint16_t" : es == 4 ? "uint32_t" : "uint64_t";
      sb_printf(f,
                "    int64_t sa = (%s)(%s)ua, sb = (%s)(%s)ub;\n"
                "    if (sa %s sb) return 1;\n    if (sa != sb) return 0;\n",
                st, ut, st, ut, lt);
    } else {
      sb_printf(f, "    if (ua %s ub) return 1;\n    if (ua != ub) return 0;\n", lt);
    }
    sb_puts(f, "  }\n");
  }
  sb_puts(f, "  return 0;\n}\n");
  int64_t len = d->dims[d->dimension], stride = 1, total = 1;
  for (uint32_t i = 0; i < d->rank; i++) total *= d->dims[i];
  for (uint32_t i = d->dimension + 1; i < d->rank; i++) stride *= d->dims[i];
  sb_printf(f,
            "static void %s_sort%u(const void *const *in, void *const *out, int64_t *perm) {\n"
            "  const int64_t len = %lld, stride = %lld, nslices = %lld;\n"
            "  int64_t *tmp = perm + len;\n"
            "  for (int64_t sl = 0; sl < nslices; sl++) {\n"
            "    int64_t base = sl / stride * len * stride + sl %% stride;\n"
            "    for (int64_t j = 0; j < len; j++) perm[j] = base + j * stride;\n"
            "    for (int64_t width = 1; width < len; width *= 2) {\n"
            "      for (int64_t lo = 0; lo < len; lo += 2 * width) {\n"
            "        int64_t mid = lo + width < len ? lo + width : len;\n"
            "        int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;\n"
            "        int64_t i = lo, j = mid, o = lo;\n"
            "        while (i < mid && j < hi)\n"
            "          tmp[o++] = %s_less%u(in, perm[j], perm[i]) ? perm[j++] : perm[i++];\n"
            "        while (i < mid) tmp[o++] = perm[i++];\n"
            "        while (j < hi) tmp[o++] = perm[j++];\n"
            "      }\n"
            "      memcpy(perm, tmp, sizeof *perm * (size_t)len);\n"
            "      if (width > len / 2) break;\n"
            "    }\n",
            N, k, (long long)len, (long long)stride, (long long)(len ? total / len : 0), N, k);
  for (uint32_t i = 0; i < d->num_operands; i++) {
    size_t es = hlo_dtype_size(d->dtypes[i]);
    sb_printf(f,
              "    for (int64_t j = 0; j < len; j++)\n"
              "      memcpy((uint8_t *)out[%u] + (base + j * stride) * %zu,\n"
              "             (const uint8_t *)in[%u] + perm[j] * %zu, %zu);\n",
              i, es, i, es, es);
  }
  sb_puts(f, "  }\n}\n");
  /* the call */
  char b[96];
  strbuf *c = E->c;
  sb_puts(c, "  {\n    const void *const in[] = {");
  for (uint32_t i = 0; i < q->nin; i++) {
    AOT_PTR(q->in[i], b);
    sb_printf(c, "%s%s", i ? ", " : "", b);
  }
  sb_puts(c, "};\n    void *const out[] = {");
  for (uint32_t i = 0; i < q->nout; i++) {
    AOT_PTR(q->out[i], b);
    sb_printf(c, "%s%s", i ? ", " : "", b);
  }
  sb_printf(c, "};\n    %s_sort%u(in, out, (int64_t *)(s + %lld));\n  }\n", N, k,
            (long long)E->sort_tmp[q->out[0]->id]);
  return NULL;
}

static void print_u32s(strbuf *c, const uint32_t *d, uint32_t n) {
  sb_putc(c, '{');
  if (!n) sb_puts(c, "0");
  for (uint32_t i = 0; i < n; i++) sb_printf(c, "%s%u", i ? ", " : "", d[i]);
  sb_putc(c, '}');
}

/* A convolution step: its description as a static struct and the direct
 * loop of its element type. */
static hlo_status emit_conv(emitter *E, const step *q) {
  const backend_conv *d = q->conv;
  if (!d || q->nin != 2 || q->nout != 1) return aot_unsupported(q, "has an unexpected form");
  const char *fn = d->result_dtype == HLO_F32 ? "conv_f32" : d->result_dtype == HLO_F64 ? "conv_f64"
                   : d->result_dtype == HLO_BF16 ? "conv_bf16" : "conv_f16";
  int64_t ns = d->num_spatial;
  strbuf *c = E->c;
  sb_printf(c, "  {\n    static const %s_conv_desc d = {%u, %u, ", E->name, d->rank, d->num_spatial);
  aot_print_dims(c, d->lhs_dims, d->rank);
  sb_puts(c, ", ");
  aot_print_dims(c, d->rhs_dims, d->rank);
  sb_puts(c, ", ");
  aot_print_dims(c, d->result_dims, d->rank);
  sb_printf(c, ", %u, %u, ", d->input_batch_dimension, d->input_feature_dimension);
  print_u32s(c, d->input_spatial_dimensions, d->num_spatial);
  sb_printf(c, ", %u, %u, ", d->kernel_input_feature_dimension, d->kernel_output_feature_dimension);
  print_u32s(c, d->kernel_spatial_dimensions, d->num_spatial);
  sb_printf(c, ", %u, %u, ", d->output_batch_dimension, d->output_feature_dimension);
  print_u32s(c, d->output_spatial_dimensions, d->num_spatial);
  sb_puts(c, ", ");
  aot_print_dims(c, d->window_strides, (uint32_t)ns);
  sb_puts(c, ", ");
  aot_print_dims(c, d->padding_low, (uint32_t)ns);
  sb_puts(c, ", ");
  aot_print_dims(c, d->lhs_dilation, (uint32_t)ns);
  sb_puts(c, ", ");
  aot_print_dims(c, d->rhs_dilation, (uint32_t)ns);
  sb_puts(c, ", {");
  for (int64_t i = 0; i < ns; i++) sb_printf(c, "%s%d", i ? ", " : "", d->window_reversal[i] ? 1 : 0);
  if (!ns) sb_puts(c, "0");
  sb_printf(c, "}, %lld, %lld};\n", (long long)d->feature_group_count, (long long)d->batch_group_count);
  char l[96], r[96], o[96];
  AOT_PTR(q->in[0], l);
  AOT_PTR(q->in[1], r);
  AOT_PTR(q->out[0], o);
  sb_printf(c, "    %s_%s(&d, %s, %s, %s);\n  }\n", E->name, fn, l, r, o);
  return NULL;
}

/* reduce_window / select_and_scatter: the description as arrays, the fold
 * of its element type. */
static hlo_status emit_window(emitter *E, const step *q) {
  const backend_window *w = q->win;
  if (!w) return aot_unsupported(q, "has no description (internal)");
  const char *suf = w->dtype == HLO_F32 ? "f32" : w->dtype == HLO_F64 ? "f64"
                    : w->dtype == HLO_I32 ? "i32" : "i64";
  strbuf *c = E->c;
  uint32_t R = w->rank;
  sb_puts(c, "  {\n    static const int64_t od[] = ");
  aot_print_dims(c, w->operand_dims, R);
  sb_puts(c, ", rd[] = ");
  aot_print_dims(c, w->window_out_dims, R);
  sb_puts(c, ", wd[] = ");
  aot_print_dims(c, w->window_dimensions, R);
  sb_puts(c, ", ws[] = ");
  aot_print_dims(c, w->window_strides, R);
  sb_puts(c, ", bd[] = ");
  aot_print_dims(c, w->base_dilations, R);
  sb_puts(c, ", wdl[] = ");
  aot_print_dims(c, w->window_dilations, R);
  sb_puts(c, ", pl[] = ");
  aot_print_dims(c, w->padding_low, R);
  sb_puts(c, ";\n    (void)bd; (void)wdl; (void)rd;\n");
  char a[96], b[96], i[96], o[96];
  if (w->kind == BACKEND_REDUCE_WINDOW) {
    if (q->nin != 2 || q->nout != 1) return aot_unsupported(q, "has an unexpected form");
    AOT_PTR(q->in[0], a);
    AOT_PTR(q->in[1], i);
    AOT_PTR(q->out[0], o);
    sb_printf(c, "    %s_rw_%s(%s, %s, %s, %u, od, rd, wd, ws, bd, wdl, pl, %d);\n  }\n", E->name, suf,
              a, i, o, R, (int)w->reducer);
  } else {
    if (q->nin != 3 || q->nout != 1) return aot_unsupported(q, "has an unexpected form");
    AOT_PTR(q->in[0], a);
    AOT_PTR(q->in[1], b);
    AOT_PTR(q->in[2], i);
    AOT_PTR(q->out[0], o);
    sb_printf(c, "    %s_ss_%s(%s, %s, %s, %s, %u, od, rd, wd, ws, pl, %d, %d);\n  }\n", E->name,
              suf, a, b, i, o, R, (int)w->select, (int)w->reducer);
  }
  return NULL;
}

/* ------------------------------------------------------------ LAPACK */

/* The integers of a layout entry ("dense<[0, 1]> : tensor<2xindex>" kept
 * verbatim, or a dense literal) into v[0..*n). */
static bool layout_ints(const hlo_attr *l, int64_t *v, uint32_t cap, uint32_t *n) {
  *n = 0;
  if (l->kind == ATTR_DENSE && l->u.dense.type && l->u.dense.type->kind == TYPE_TENSOR) {
    if (l->u.dense.num_elems > cap) return false;
    for (int64_t i = 0; i < l->u.dense.num_elems; i++)
      v[(*n)++] = elem_get_i64(l->u.dense.type->dtype, l->u.dense.data, l->u.dense.splat ? 0 : i);
    return true;
  }
  if (l->kind != ATTR_OPAQUE) return false;
  const char *p = l->u.str.s, *end = p + l->u.str.len;
  const char *d = NULL;
  for (const char *q = p; q + 6 <= end && !d; q++)
    if (!memcmp(q, "dense<", 6)) d = q + 6;
  if (!d) return false;
  while (d < end && *d != '>') {
    if (*d >= '0' && *d <= '9') {
      int64_t x = 0;
      while (d < end && *d >= '0' && *d <= '9') x = x * 10 + (*d++ - '0');
      if (*n >= cap) return false;
      v[(*n)++] = x;
    } else {
      d++;
    }
  }
  return true;
}

/* Whether every matrix (rank >= 2) among the operands / results of op has
 * a column-major layout with its batch dims outer ([r-2, r-1, r-3, ..., 0],
 * what JAX emits) and every other one is row-major (or absent). */
static bool lapack_layouts_ok(const hlo_op *op) {
  for (int side = 0; side < 2; side++) {
    const hlo_attr *a = op_attr(op, side ? "result_layouts" : "operand_layouts");
    uint32_t n = side ? op->num_results : op->num_operands;
    if (!a) continue;
    if (a->kind != ATTR_ARRAY || a->u.arr.n != n) return false;
    for (uint32_t i = 0; i < n; i++) {
      const hlo_type *t = side ? op->results[i].type : op->operands[i]->type;
      int64_t v[16];
      uint32_t k;
      if (t->kind != TYPE_TENSOR || t->rank > 16 || !layout_ints(a->u.arr.items[i], v, 16, &k))
        return false;
      if (k == 1 && t->rank > 1) return false;
      if (t->rank <= 1) continue;
      if (k != t->rank || v[0] != t->rank - 2 || v[1] != t->rank - 1) return false;
      for (uint32_t d = 2; d < k; d++)
        if (v[d] != (int64_t)(t->rank - 1 - d)) return false;
    }
  }
  return true;
}

/* The LAPACK target of step q's op: 0 potrf, 1 getrf, 2 trsm (*dbl: f64),
 * or -1 (another op, or a form the library lacks). */
static int lapack_kind(const step *q, int *dbl) {
  const hlo_op *op = q->op;
  if (op->opcode != OP_CUSTOM_CALL || q->kind != STEP_INTERP) return -1;
  const hlo_attr *a = op_attr(op, "call_target_name");
  if (!a || (a->kind != ATTR_STRING && a->kind != ATTR_SYMBOL)) return -1;
  static const char *const names[] = {"lapack_spotrf_ffi", "lapack_dpotrf_ffi", "lapack_sgetrf_ffi",
                                      "lapack_dgetrf_ffi", "lapack_strsm_ffi", "lapack_dtrsm_ffi"};
  int kind = -1;
  for (int i = 0; i < 6; i++)
    if (a->u.str.len == strlen(names[i]) && !memcmp(a->u.str.s, names[i], a->u.str.len))
      kind = i / 2, *dbl = i % 2;
  if (kind < 0 || op->num_operands < 1 || q->nout != op->num_results) return -1;
  hlo_dtype ft = *dbl ? HLO_F64 : HLO_F32;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const hlo_type *t = op->operands[i]->type;
    if (t->kind != TYPE_TENSOR || !type_is_static(t) || t->dtype != ft) return -1;
  }
  const hlo_type *t0 = op->operands[0]->type;
  if (t0->rank < 2 || !lapack_layouts_ok(op)) return -1;
  int64_t batch = 1;
  for (uint32_t d = 0; d + 2 < t0->rank; d++) batch *= t0->dims[d];
  int64_t m = t0->dims[t0->rank - 2], n = t0->dims[t0->rank - 1], k = m < n ? m : n;
  if (m > (1 << 20) || n > (1 << 20)) return -1;
  const hlo_type *r0 = op->results[0].type;
  if (r0->kind != TYPE_TENSOR || r0->dtype != ft) return -1;
  if (kind == 0 || kind == 1) {
    uint32_t nres = kind == 0 ? 2 : 3;
    if (op->num_operands != 1 || op->num_results != nres || (kind == 0 && m != n) ||
        type_num_elements(r0) != batch * m * n)
      return -1;
    for (uint32_t i = 1; i < nres; i++) {
      const hlo_type *t = op->results[i].type;
      int64_t want = kind == 1 && i == 1 ? batch * k : batch;
      if (t->kind != TYPE_TENSOR || t->dtype != HLO_I32 || type_num_elements(t) != want) return -1;
    }
    return kind;
  }
  /* trsm: (a, b[, alpha]) -> x of b's type */
  if (op->num_operands < 2 || op->num_operands > 3 || op->num_results != 1) return -1;
  const hlo_type *bt = op->operands[1]->type;
  if (bt->rank < 2 || type_num_elements(r0) != type_num_elements(bt)) return -1;
  if (op->num_operands == 3 && type_num_elements(op->operands[2]->type) != 1) return -1;
  char side = lk_config_char(op, "side", 'L'), uplo = lk_config_char(op, "uplo", 'L');
  char trans = lk_config_char(op, "trans_x", 'N'), diag = lk_config_char(op, "diag", 'N');
  if ((side != 'L' && side != 'R') || (uplo != 'L' && uplo != 'U') ||
      (trans != 'N' && trans != 'T') || (diag != 'N' && diag != 'U'))
    return -1;
  int64_t bb = 1, ka = m, kb = n, bm = bt->dims[bt->rank - 2], bn = bt->dims[bt->rank - 1];
  for (uint32_t d = 0; d + 2 < bt->rank; d++) bb *= bt->dims[d];
  int64_t kk = side == 'L' ? bm : bn;
  if (ka != kk || kb != kk || (batch != bb && batch != 1)) return -1;
  return 2;
}

int64_t aot_lapack_ws(const step *q) {
  int dbl = 0, kind = lapack_kind(q, &dbl);
  if (kind < 0) return -1;
  int64_t es = dbl ? 8 : 4, bytes = type_num_elements(q->op->operands[0]->type) * es;
  if (kind == 2) {
    const hlo_type *bt = q->op->operands[1]->type;
    bytes += type_num_elements(bt) * es + (bt->dims[bt->rank - 2] + bt->dims[bt->rank - 1]) * es;
  }
  return bytes;
}

/* A LAPACK custom call (lapack_kind): the helper's call over the step's
 * buffers and its workspace. */
static hlo_status emit_lapack(emitter *E, const step *q, int kind, int dbl) {
  const hlo_op *op = q->op;
  const hlo_type *t0 = op->operands[0]->type;
  int64_t batch = 1;
  for (uint32_t d = 0; d + 2 < t0->rank; d++) batch *= t0->dims[d];
  int64_t m = t0->dims[t0->rank - 2], n = t0->dims[t0->rank - 1];
  if (E->gemm_ws[q->out[0]->id] < 0)
    return status_at(HLO_INTERNAL, &op->loc, "--emit=lib: a LAPACK call without its workspace");
  char a[96], o0[96], o1[96], o2[96], w[96];
  AOT_PTR(op->operands[0], a);
  AOT_PTR(q->out[0], o0);
  snprintf(w, sizeof w, "(s + %lld)", (long long)E->gemm_ws[q->out[0]->id]);
  strbuf *c = E->c;
  if (kind == 0) {
    AOT_PTR(q->out[1], o1);
    sb_printf(c, "  %s_potrf(%d, '%c', %lld, %lld, %s, %s, (int32_t *)%s, %s);\n", E->name, dbl,
              lk_config_uplo(op), (long long)batch, (long long)n, a, o0, o1, w);
  } else if (kind == 1) {
    AOT_PTR(q->out[1], o1);
    AOT_PTR(q->out[2], o2);
    sb_printf(c, "  %s_getrf(%d, %lld, %lld, %lld, %s, %s, (int32_t *)%s, (int32_t *)%s, %s);\n",
              E->name, dbl, (long long)batch, (long long)m, (long long)n, a, o0, o1, o2, w);
  } else {
    const hlo_type *bt = op->operands[1]->type;
    int64_t bb = 1;
    for (uint32_t d = 0; d + 2 < bt->rank; d++) bb *= bt->dims[d];
    char b[96], al[96] = "NULL";
    AOT_PTR(op->operands[1], b);
    if (op->num_operands == 3) AOT_PTR(op->operands[2], al);
    char side = lk_config_char(op, "side", 'L'), uplo = lk_config_char(op, "uplo", 'L');
    char trans = lk_config_char(op, "trans_x", 'N'), diag = lk_config_char(op, "diag", 'N');
    sb_printf(c, "  %s_trsm(%d, %d, %d, %d, %d, %lld, %lld, %lld, %lld, %s, %s, %s, %s, %s);\n",
              E->name, dbl, side == 'L', trans != 'N', uplo == 'L', diag == 'U', (long long)bb,
              (long long)batch, (long long)bt->dims[bt->rank - 2],
              (long long)bt->dims[bt->rank - 1], a, b, al, o0, w);
  }
  return NULL;
}

/* The index kind of NAME_ival for an integer type, or -1. */
static int ival_kind(hlo_dtype t) {
  switch (t) {
  case HLO_I8: return 0;
  case HLO_I16: return 1;
  case HLO_I32: return 2;
  case HLO_I64: return 3;
  case HLO_UI8: return 4;
  case HLO_UI16: return 5;
  case HLO_UI32: return 6;
  case HLO_UI64: return 7;
  default: return -1;
  }
}

/* A gather in the spec's general form (one the CPU backend runs on the
 * interpreter: not rows of the leading dim), without batching dims: its
 * description and NAME_gather. Errors: aot_unsupported for another form. */
static hlo_status emit_gather(emitter *E, const step *q) {
  const hlo_op *op = q->op;
  if (op->num_operands != 2 || q->nout != 1) return aot_unsupported(q, "has an unexpected form");
  const hlo_type *ot = op->operands[0]->type, *it = op->operands[1]->type, *rt = q->out[0]->type;
  const hlo_attr *dn = op_attr(op, "dimension_numbers");
  arena a;
  arena_init(&a);
  int64_t *offd, *coll, *smap, *obd, *ss;
  uint32_t noff, ncoll, nmap, nobd, nss;
  int64_t ivd = -1;
  const hlo_attr *iv = dn ? attr_field(dn, "index_vector_dim") : NULL;
  if (iv && iv->kind == ATTR_INT) ivd = iv->u.i.v;
  bool ok = dn && ivd >= 0 && ints_of(&a, attr_field(dn, "offset_dims"), &offd, &noff) &&
            ints_of(&a, attr_field(dn, "collapsed_slice_dims"), &coll, &ncoll) &&
            ints_of(&a, attr_field(dn, "start_index_map"), &smap, &nmap) &&
            ints_of(&a, attr_field(dn, "operand_batching_dims"), &obd, &nobd) && nobd == 0 &&
            ints_of(&a, op_attr(op, "slice_sizes"), &ss, &nss) && nss == ot->rank &&
            ot->rank <= 16 && it->rank <= 16 && rt->rank <= 16 && nmap <= 16 &&
            ival_kind(it->dtype) >= 0 && (uint64_t)ivd <= it->rank &&
            (ivd < (int64_t)it->rank ? it->dims[ivd] == (int64_t)nmap : nmap == 1);
  int32_t r2o[16], r2i[16];
  for (uint32_t d = 0; ok && d < rt->rank; d++) r2o[d] = r2i[d] = -1;
  /* offset dims: the operand's dims that are not collapsed, in order */
  uint32_t od = 0;
  for (uint32_t j = 0; ok && j < noff; j++) {
    while (od < ot->rank) {
      bool c = false;
      for (uint32_t k = 0; k < ncoll; k++) c |= coll[k] == (int64_t)od;
      if (!c) break;
      od++;
    }
    ok = od < ot->rank && offd[j] >= 0 && offd[j] < (int64_t)rt->rank;
    if (ok) r2o[offd[j]] = (int32_t)od++;
  }
  /* batch dims: the indices' dims but index_vector_dim, in order */
  uint32_t id = 0;
  for (uint32_t d = 0; ok && d < rt->rank; d++) {
    if (r2o[d] >= 0) continue;
    if ((int64_t)id == ivd) id++;
    ok = id < it->rank;
    if (ok) r2i[d] = (int32_t)id++;
  }
  for (uint32_t k = 0; ok && k < nmap; k++) ok = smap[k] >= 0 && smap[k] < (int64_t)ot->rank;
  strbuf *c = E->c;
  if (ok) {
    sb_printf(c, "  {\n    static const %s_gather_desc g = {%u, %u, %u, %u, %u, ", E->name, ot->rank,
              rt->rank, it->rank, (unsigned)ivd, nmap);
    aot_print_dims(c, ot->dims, ot->rank);
    sb_puts(c, ", ");
    aot_print_dims(c, rt->dims, rt->rank);
    sb_puts(c, ", ");
    aot_print_dims(c, it->dims, it->rank);
    sb_puts(c, ", ");
    aot_print_dims(c, ss, ot->rank);
    sb_puts(c, ", ");
    aot_print_dims(c, smap, nmap);
    sb_puts(c, ", {");
    for (uint32_t d = 0; d < rt->rank; d++) sb_printf(c, "%s%d", d ? ", " : "", r2o[d]);
    if (!rt->rank) sb_puts(c, "0");
    sb_puts(c, "}, {");
    for (uint32_t d = 0; d < rt->rank; d++) sb_printf(c, "%s%d", d ? ", " : "", r2i[d]);
    if (!rt->rank) sb_puts(c, "0");
    sb_puts(c, "}};\n");
  }
  arena_deinit(&a);
  if (!ok) return aot_unsupported(q, "is a gather of a form the library lacks");
  char o[96], i[96], r[96];
  AOT_PTR(op->operands[0], o);
  AOT_PTR(op->operands[1], i);
  AOT_PTR(q->out[0], r);
  sb_printf(c, "    %s_gather(&g, %s, %s, %d, %s, %zu);\n  }\n", E->name, o, i, ival_kind(it->dtype),
            r, hlo_dtype_size(rt->dtype));
  return NULL;
}

/* An interpreter step whose op the library does itself: reverse. Others:
 * the error naming the op. */
static hlo_status emit_interp(emitter *E, const step *q) {
  const hlo_op *op = q->op;
  if (op->opcode == OP_REVERSE && op->num_operands == 1 && op->num_results == 1 && q->nout == 1) {
    const hlo_type *t = op->operands[0]->type;
    arena a;
    arena_init(&a);
    int64_t *dims;
    uint32_t nd;
    bool ok = t->kind == TYPE_TENSOR && type_is_static(t) && t->rank <= 16 &&
              attr_as_ints(&a, op_attr(op, "dimensions"), &dims, &nd);
    int rev[16] = {0};
    for (uint32_t k = 0; ok && k < nd; k++) {
      ok = dims[k] >= 0 && dims[k] < (int64_t)t->rank;
      if (ok) rev[dims[k]] = 1;
    }
    arena_deinit(&a);
    if (ok) {
      char i[96], o[96];
      AOT_PTR(op->operands[0], i);
      AOT_PTR(q->out[0], o);
      strbuf *c = E->c;
      sb_puts(c, "  {\n    static const int64_t dims[] = ");
      aot_print_dims(c, t->dims, t->rank);
      sb_puts(c, ";\n    static const int rev[] = {");
      for (uint32_t d = 0; d < t->rank; d++) sb_printf(c, "%s%d", d ? ", " : "", rev[d]);
      if (!t->rank) sb_puts(c, "0");
      sb_printf(c, "};\n    %s_reverse(%s, %s, %u, dims, rev, %zu);\n  }\n", E->name, o, i, t->rank,
                hlo_dtype_size(t->dtype));
      return NULL;
    }
  }
  int dbl = 0, kind = lapack_kind(q, &dbl);
  if (kind >= 0) return emit_lapack(E, q, kind, dbl);
  if (op->opcode == OP_GATHER && type_num_elements(q->out[0]->type) >= 0) return emit_gather(E, q);
  return aot_unsupported(q, "runs on the interpreter in the CPU backend");
}

hlo_status aot_emit_data_step(emitter *E, const step *q) {
  switch (q->kind) {
  case STEP_KERNEL: return emit_kernel(E, q);
  case STEP_GEMM: return emit_gemm(E, q);
  case STEP_ALIAS: return NULL; /* the operand's bytes */
  case STEP_FILL: {
    if (q->elided) return NULL;
    char dst[96];
    AOT_PTR(q->out[0], dst);
    return aot_emit_fill_to(E, q->op, q->out[0]->type, dst);
  }
  case STEP_DSLICE:
  case STEP_DUS: return emit_dslice(E, q);
  case STEP_PAD: return emit_pad(E, q);
  case STEP_GATHER:
  case STEP_SCATTER: return emit_rows(E, q);
  case STEP_SORT: return emit_sort(E, q);
  case STEP_CONV: return emit_conv(E, q);
  case STEP_WINDOW: return emit_window(E, q);
  case STEP_INTERP: return emit_interp(E, q);
  case STEP_WHILE:
  case STEP_CASE: break;
  }
  return aot_unsupported(q, "is a step kind the library lacks");
}
