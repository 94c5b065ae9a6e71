/* emit_steps.c — the C of the data steps of --emit=lib (aot_internal.h):
 * kernels (called over all their tiles, the large ones on the thread team),
 * gemms (CBLAS or the library's loops), fills, dynamic_slice /
 * dynamic_update_slice / pad / row gather and scatter (the forms of
 * runtime/executable_cpu_copy.c, same semantics), sorts (the interpreter's
 * merge sort over a generated comparator), convolutions and window ops (the
 * interpreter's folds, in its order) and reverse. The helpers they call are
 * lib_text.c's. */
#include <stdio.h>
#include <string.h>
#include "aot/aot_internal.h"
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

/* A gemm step: the library's NAME_gemm_TYPE over its batch, strides made
 * explicit (backend_gemm's zeros: dense). Never an epilogue: aot_backend
 * has no gemm_epilogue. */
static hlo_status emit_gemm(emitter *E, const step *q) {
  if (q->epilogue) return aot_unsupported(q, "has a fused epilogue (internal)");
  const backend_gemm *g = &q->g;
  const char *fn = NULL;
  if (g->dtype == HLO_F32 && g->c_dtype == HLO_F32) fn = "gemm_f32";
  else if (g->dtype == HLO_F64 && g->c_dtype == HLO_F64) fn = "gemm_f64";
  else if (g->dtype == HLO_BF16 && g->c_dtype == HLO_BF16) fn = "gemm_bf16";
  else if (g->dtype == HLO_BF16 && g->c_dtype == HLO_F32) fn = "gemm_bf16_f32";
  if (!fn) return aot_unsupported(q, "is a matrix product of a type the library lacks");
  int64_t lda = g->lda ? g->lda : g->trans_a ? g->m : g->k;
  int64_t ldb = g->ldb ? g->ldb : g->trans_b ? g->k : g->n;
  int64_t ldc = g->ldc ? g->ldc : g->n;
  int64_t sa = g->batch_stride_a ? g->batch_stride_a : g->m * g->k;
  int64_t sb = g->batch_stride_b ? g->batch_stride_b : g->k * g->n;
  int64_t sc = g->batch_stride_c ? g->batch_stride_c : g->m * g->n;
  char a[96], bb[96], cc[96];
  AOT_PTR(q->in[0], a);
  AOT_PTR(q->in[1], bb);
  AOT_PTR(q->out[0], cc);
  sb_printf(E->c,
            "  %s_%s(T, %lld, %lld, %lld, %lld, %d, %d, %lld, %lld, %lld, %lld, %lld, %lld, %s, %s, %s);\n",
            E->name, fn, (long long)g->batch, (long long)g->m, (long long)g->n, (long long)g->k,
            g->trans_a, g->trans_b, (long long)lda, (long long)ldb, (long long)ldc, (long long)sa,
            (long long)sb, (long long)sc, a, bb, cc);
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
 * geometry of executable_cpu_copy.c's pad_geometry, computed here). */
static hlo_status emit_pad(emitter *E, const step *q) {
  const hlo_type *ot = q->in[0]->type, *rt = q->out[0]->type;
  uint32_t rank = ot->rank;
  size_t es = hlo_dtype_size(rt->dtype);
  arena a;
  arena_init(&a);
  int64_t *lo, *in;
  uint32_t nl, ni;
  bool ok = attr_as_ints(&a, op_attr(q->op, "edge_padding_low"), &lo, &nl) &&
            attr_as_ints(&a, op_attr(q->op, "interior_padding"), &in, &ni) && nl == rank &&
            ni == rank && rank <= 16;
  int64_t first[16] = {0}, count[16] = {0}, stride[16] = {0}, low[16] = {0};
  bool empty = type_num_elements(ot) <= 0;
  for (uint32_t d = 0; ok && d < rank; d++) {
    stride[d] = in[d] + 1;
    low[d] = lo[d];
    int64_t f = lo[d] >= 0 ? 0 : (-lo[d] + stride[d] - 1) / stride[d];
    int64_t l = rt->dims[d] - 1 - lo[d];
    l = l < 0 ? -1 : l / stride[d];
    if (l > ot->dims[d] - 1) l = ot->dims[d] - 1;
    first[d] = f;
    count[d] = l - f + 1;
    empty |= count[d] <= 0;
  }
  arena_deinit(&a);
  if (!ok) return aot_unsupported(q, "has padding attributes the library cannot read");
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
