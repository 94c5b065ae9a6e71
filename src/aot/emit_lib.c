/* emit_lib.c — `hlo compile --emit=lib` (aot.h): the CPU executable of a
 * module printed as one C library.
 *
 * Memory: the library's caller gives one scratch buffer of
 * NAME_scratch_bytes() bytes (64-byte aligned). Its first part is the
 * executable's arena (program 0's, with every region's arena a slice of its
 * parent's at the offset the buffer assignment chose:
 * executable_cpu_buffers.c); after it, one slot of its own for each value
 * the runtime would allocate separately (HOME_HEAP: a control step's
 * results, a region's results, a kernel result a loop takes over, an
 * interpreter step's), for the staging copies of a loop body's results and
 * for each sort's index arrays; these slots are not reused (a simpler plan
 * than the runtime's reference counting: scratch can be larger than the
 * runtime's peak). Arguments are read in place, constants are static
 * arrays, results are copied into the caller's buffers at the end.
 *
 * Control flow (the runtime's run_while / run_case, simplified): a while
 * keeps carried value i in ONE buffer S_i, the loop result's own (an arena
 * slot where the buffer assignment gave it one, else its own slot); the
 * init values are copied (or filled) into S_i before the first iteration
 * unless already there, the cond and body read S_i as their block
 * arguments, the body's results written in place (HOME_CARRIED) are in S_i
 * already and the others are copied in at the end of each iteration, those
 * that are another carried value staged first. A case / if copies its
 * branch's results into its results' slots. */
#include "aot/aot.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "aot/aot_internal.h"
#include "backend/cpu/cpu.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "ir/element.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "passes/passes.h"
#include "runtime/executable_cpu.h"
#include "runtime/executable_cpu_internal.h"
#include "runtime/runtime.h"
#include "support/arena.h"
#include "support/float.h"
#include "support/path.h"
#include "support/strbuf.h"

extern char **environ;

#define ALIGN 64

static hlo_status oom(void) { return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory"); }

static int64_t align_up(int64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* ------------------------------------------------------------ the emitter */

/* E->byid for the values of block b and its regions, at any depth. */
static void index_values(emitter *E, const hlo_block *b) {
  for (uint32_t i = 0; i < b->num_args; i++)
    if (b->args[i].id < E->x->nvals) E->byid[b->args[i].id] = &b->args[i];
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->num_results; i++)
      if (op->results[i].id < E->x->nvals) E->byid[op->results[i].id] = &op->results[i];
    for (uint32_t r = 0; r < op->num_regions; r++) index_values(E, &op->regions[r].block);
  }
}

/* The program whose block is `b`, or UINT32_MAX. */
static uint32_t prog_of_block(const emitter *E, const hlo_block *b) {
  for (uint32_t p = 0; p < E->x->nprogs; p++)
    if (E->x->progs[p].block == b) return p;
  return UINT32_MAX;
}

static const step *step_at(const emitter *E, uint32_t p, uint32_t s) {
  return &E->x->progs[p].steps[s];
}

static hlo_status ptr_of(const emitter *E, const hlo_value *v, char *buf, size_t n, int depth);

/* The pointer expression of the buffer of value v (a `void *`): printed
 * into buf. Errors: HLO_INTERNAL for a value without a buffer. */
static hlo_status ptr_of(const emitter *E, const hlo_value *v, char *buf, size_t n, int depth) {
  const cpu_exec *x = E->x;
  uint32_t id = v->id;
  if (id >= x->nvals || depth > 1000)
    return status_at(HLO_INTERNAL, &v->loc, "--emit=lib: a value is not numbered");
  if (x->consts[id]) {
    snprintf(buf, n, "((void *)%s_c%u)", E->name, id);
    return NULL;
  }
  if (E->slot[id] >= 0) {
    snprintf(buf, n, "(s + %lld)", (long long)E->slot[id]);
    return NULL;
  }
  switch ((value_home)x->home[id]) {
  case HOME_ARENA:
    snprintf(buf, n, "(s + %lld)", (long long)(E->base[x->prog_of[id]] + x->offset[id]));
    return NULL;
  case HOME_CARRIED:
    if ((uint32_t)x->offset[id] < x->nvals && E->byid[x->offset[id]])
      return ptr_of(E, E->byid[x->offset[id]], buf, n, depth + 1);
    break;
  case HOME_ARG: {
    if (v->def) break;
    uint32_t p = prog_of_block(E, v->block);
    if (p == 0) {
      snprintf(buf, n, "((void *)args[%u])", v->index);
      return NULL;
    }
    if (p == UINT32_MAX || E->parent_prog[p] == UINT32_MAX) break;
    const step *q = step_at(E, E->parent_prog[p], E->parent_step[p]);
    if (q->kind != STEP_WHILE || v->index >= q->nout) break;
    return ptr_of(E, q->out[v->index], buf, n, depth + 1); /* S_i */
  }
  case HOME_HEAP:
  case HOME_NONE:
  case HOME_CONST:
    break;
  }
  /* an alias (reshape) is its operand's bytes */
  if (v->def && x->prog_of[id] < x->nprogs) {
    const program *p = &x->progs[x->prog_of[id]];
    uint32_t s = x->def_step[id];
    if (s < p->nsteps && p->steps[s].kind == STEP_ALIAS && p->steps[s].nin >= 1)
      return ptr_of(E, p->steps[s].in[0], buf, n, depth + 1);
  }
  return status_at(HLO_INTERNAL, &v->loc, "--emit=lib: value %%%s has no buffer (home %d)",
                   v->name ? v->name : "?", (int)x->home[id]);
}

/* The block argument of a loop body whose buffer v's bytes are (through
 * aliases and in-place chains), as its index in program p's block, or -1. */
static int32_t body_arg_of(const emitter *E, uint32_t p, const hlo_value *v) {
  const cpu_exec *x = E->x;
  for (int depth = 0; depth < 1000 && v && v->id < x->nvals; depth++) {
    if (!v->def) return v->block == x->progs[p].block ? (int32_t)v->index : -1;
    if (x->home[v->id] == HOME_CARRIED) {
      v = (uint32_t)x->offset[v->id] < x->nvals ? E->byid[x->offset[v->id]] : NULL;
      continue;
    }
    if (x->consts[v->id] || E->slot[v->id] >= 0 || x->home[v->id] == HOME_ARENA) return -1;
    const program *pp = &x->progs[x->prog_of[v->id]];
    uint32_t s = x->def_step[v->id];
    if (s >= pp->nsteps || pp->steps[s].kind != STEP_ALIAS) return -1;
    v = pp->steps[s].in[0];
  }
  return -1;
}

/* The C type of an integer scalar's element (start indices, gather
 * indices), or NULL. */
const char *aot_int_ctype(hlo_dtype t) {
  switch (t) {
  case HLO_I8: return "int8_t";
  case HLO_I16: return "int16_t";
  case HLO_I32: return "int32_t";
  case HLO_I64: return "int64_t";
  case HLO_UI8: return "uint8_t";
  case HLO_UI16: return "uint16_t";
  case HLO_UI32: return "uint32_t";
  default: return NULL;
  }
}

void aot_print_dims(strbuf *c, const int64_t *d, uint32_t n) {
  sb_putc(c, '{');
  if (!n) sb_puts(c, "0");
  for (uint32_t i = 0; i < n; i++) sb_printf(c, "%s%lld", i ? ", " : "", (long long)d[i]);
  sb_putc(c, '}');
}

hlo_status aot_unsupported(const step *q, const char *why) {
  const char *on = op_name(q->op->opcode);
  return status_at(HLO_UNIMPLEMENTED, &q->op->loc,
                   "--emit=lib: %s %s and cannot be embedded yet", on ? on : "this op", why);
}

hlo_status aot_ptr(const emitter *E, const hlo_value *v, char *buf, size_t n) {
  return ptr_of(E, v, buf, n, 0);
}

/* A while step: the init values into the loop buffers S_i (copied, or
 * filled for an elided splat fill), then the loop over the cond and body
 * programs (the body copies its results into S_i: emit_body_end). */
static hlo_status emit_while(emitter *E, const step *q) {
  const cpu_exec *x = E->x;
  if (q->nsub != 2) return aot_unsupported(q, "has an unexpected form");
  uint32_t n = q->op->num_operands;
  strbuf *c = E->c;
  char src[96], dst[96];
  sb_printf(c, "  /* while at line %u: carried values in their loop buffers */\n", q->op->loc.line);
  for (uint32_t i = 0; i < n; i++) {
    const hlo_value *init = q->in[i];
    AOT_PTR(q->out[i], dst);
    int64_t bytes = cpu_value_bytes(q->out[i]);
    uint32_t id = init->id;
    const program *ip = id < x->nvals && x->prog_of[id] < x->nprogs ? &x->progs[x->prog_of[id]] : NULL;
    const step *d = ip && init->def && !x->consts[id] && x->def_step[id] < ip->nsteps
                        ? &ip->steps[x->def_step[id]]
                        : NULL;
    if (d && d->kind == STEP_FILL && d->elided) {
      HLO_TRY(aot_emit_fill_to(E, d->op, q->out[i]->type, dst));
      continue;
    }
    AOT_PTR(init, src);
    if (strcmp(src, dst) && bytes > 0)
      sb_printf(c, "  memcpy(%s, %s, %lld);\n", dst, src, (long long)bytes);
  }
  const hlo_block *cb = x->progs[q->sub[0]].block;
  if (!cb->last || cb->last->num_operands != 1) return aot_unsupported(q, "has an unexpected cond");
  char pred[96];
  AOT_PTR(cb->last->operands[0], pred);
  sb_printf(c,
            "  for (;;) {\n"
            "    %s_p%u(args, s, T);\n"
            "    if (!*(const uint8_t *)%s) break;\n"
            "    %s_p%u(args, s, T);\n"
            "  }\n",
            E->name, q->sub[0], pred, E->name, q->sub[1]);
  return NULL;
}

/* The end of a while body: its results into the loop buffers S_i. */
static hlo_status emit_body_end(emitter *E, uint32_t p, const step *w) {
  const cpu_exec *x = E->x;
  const hlo_block *bb = x->progs[p].block;
  const hlo_op *term = bb->last;
  strbuf *c = E->c;
  char src[96], dst[96], stg[96];
  if (!term || term->num_operands != bb->num_args) return aot_unsupported(w, "has an unexpected body");
  /* pass 0: stage the results that are another carried value; 1: copy the
   * others; 2: copy the staged ones */
  for (int pass = 0; pass < 3; pass++)
    for (uint32_t i = 0; i < term->num_operands; i++) {
      const hlo_value *r = term->operands[i];
      if (r == &bb->args[i]) continue;
      if (r->id < x->nvals && x->home[r->id] == HOME_CARRIED && x->offset[r->id] == bb->args[i].id)
        continue; /* written in place */
      int32_t a = body_arg_of(E, p, r);
      bool staged = a >= 0 && (uint32_t)a != i;
      int64_t bytes = cpu_value_bytes(r);
      if (bytes <= 0) continue;
      AOT_PTR(&bb->args[i], dst);
      AOT_PTR(r, src);
      if (!strcmp(src, dst)) continue;
      if (staged && E->stage[bb->args[i].id] < 0)
        return status_at(HLO_INTERNAL, &w->op->loc, "--emit=lib: a carried value lacks its staging slot");
      snprintf(stg, sizeof stg, "(s + %lld)", (long long)E->stage[bb->args[i].id]);
      if (pass == 0 && staged) sb_printf(c, "  memcpy(%s, %s, %lld);\n", stg, src, (long long)bytes);
      if (pass == 1 && !staged) sb_printf(c, "  memcpy(%s, %s, %lld);\n", dst, src, (long long)bytes);
      if (pass == 2 && staged) sb_printf(c, "  memcpy(%s, %s, %lld);\n", dst, stg, (long long)bytes);
    }
  return NULL;
}

static hlo_status emit_case(emitter *E, const step *q) {
  const cpu_exec *x = E->x;
  strbuf *c = E->c;
  char idx[96], src[96], dst[96];
  AOT_PTR(q->in[0], idx);
  const hlo_type *it = q->in[0]->type;
  if (q->op->opcode == OP_IF) {
    sb_printf(c, "  switch (*(const uint8_t *)%s ? 0 : 1) {\n", idx);
  } else {
    const char *ct = aot_int_ctype(it->dtype);
    if (!ct) return aot_unsupported(q, "has an index of a type the library lacks");
    sb_printf(c, "  switch (%s_branch((int64_t)*(const %s *)%s, %u)) {\n", E->name, ct, idx, q->nsub);
  }
  for (uint32_t k = 0; k < q->nsub; k++) {
    if (k + 1 < q->nsub) sb_printf(c, "  case %u:\n", k);
    else sb_puts(c, "  default:\n");
    sb_printf(c, "    %s_p%u(args, s, T);\n", E->name, q->sub[k]);
    const hlo_op *term = x->progs[q->sub[k]].block->last;
    if (!term || term->num_operands != q->nout) return aot_unsupported(q, "has an unexpected branch");
    for (uint32_t i = 0; i < q->nout; i++) {
      int64_t bytes = cpu_value_bytes(q->out[i]);
      AOT_PTR(term->operands[i], src);
      AOT_PTR(q->out[i], dst);
      if (bytes > 0 && strcmp(src, dst))
        sb_printf(c, "    memcpy(%s, %s, %lld);\n", dst, src, (long long)bytes);
    }
    sb_puts(c, "    break;\n");
  }
  sb_puts(c, "  }\n");
  return NULL;
}

static hlo_status emit_step(emitter *E, uint32_t p, const step *q) {
  const char *on = op_name(q->op->opcode);
  sb_printf(E->c, "  /* %s at line %u */\n", on ? on : "?", q->op->loc.line);
  (void)p;
  if (q->kind == STEP_WHILE) return emit_while(E, q);
  if (q->kind == STEP_CASE) return emit_case(E, q);
  return aot_emit_data_step(E, q);
}

static hlo_status emit_program(emitter *E, uint32_t p) {
  const cpu_exec *x = E->x;
  const program *pg = &x->progs[p];
  strbuf *c = E->c;
  const char *what = p == 0 ? "the entry's body" : "a region";
  sb_printf(c, "\n/* program %u: %s */\nstatic void %s_p%u(const void *const *args, uint8_t *s, %s_team *T) {\n",
            p, what, E->name, p, E->name);
  sb_puts(c, "  (void)args; (void)s; (void)T;\n");
  for (uint32_t i = 0; i < pg->nsteps; i++) HLO_TRY(emit_step(E, p, &pg->steps[i]));
  if (p > 0 && E->parent_prog[p] != UINT32_MAX) {
    const step *w = step_at(E, E->parent_prog[p], E->parent_step[p]);
    if (w->kind == STEP_WHILE && w->nsub == 2 && w->sub[1] == p) HLO_TRY(emit_body_end(E, p, w));
  }
  sb_puts(c, "}\n");
  return NULL;
}

/* ------------------------------------------------------------ the plan */

/* Gives value v a slot of its own after the arena. */
static void give_slot(emitter *E, const hlo_value *v) {
  if (E->slot[v->id] >= 0) return;
  E->slot[v->id] = E->scratch;
  E->scratch = align_up(E->scratch + (cpu_value_bytes(v) > 0 ? cpu_value_bytes(v) : 1));
}

static hlo_status plan(emitter *E) {
  const cpu_exec *x = E->x;
  for (uint32_t p = 0; p < x->nprogs; p++) E->parent_prog[p] = E->parent_step[p] = UINT32_MAX;
  for (uint32_t p = 0; p < x->nprogs; p++)
    for (uint32_t s = 0; s < x->progs[p].nsteps; s++) {
      const step *q = &x->progs[p].steps[s];
      for (uint32_t k = 0; k < q->nsub; k++)
        if (q->sub[k] < x->nprogs) E->parent_prog[q->sub[k]] = p, E->parent_step[q->sub[k]] = s;
    }
  E->base[0] = 0;
  for (uint32_t p = 1; p < x->nprogs; p++) {
    uint32_t par = x->progs[p].arena_parent;
    if (par >= p) return status_new(HLO_INTERNAL, "--emit=lib: a region's arena comes before its parent's");
    E->base[p] = E->base[par] + x->progs[p].arena_offset;
  }
  E->scratch = align_up(x->nprogs ? x->progs[0].temp_bytes : 0);
  for (uint32_t i = 0; i < x->nvals; i++) E->slot[i] = E->stage[i] = E->sort_tmp[i] = -1;
  for (uint32_t p = 0; p < x->nprogs; p++)
    for (uint32_t s = 0; s < x->progs[p].nsteps; s++) {
      const step *q = &x->progs[p].steps[s];
      for (uint32_t i = 0; i < q->nout; i++) {
        const hlo_value *v = q->out[i];
        if (v->type->kind != TYPE_TENSOR || !type_is_static(v->type))
          return aot_unsupported(q, "has a result that is not a tensor of static shape");
        if (x->home[v->id] != HOME_HEAP || q->kind == STEP_ALIAS || x->consts[v->id]) continue;
        give_slot(E, v);
      }
      if (q->kind == STEP_SORT && q->sort && q->nout) {
        E->sort_tmp[q->out[0]->id] = E->scratch;
        int64_t len = q->sort->dims[q->sort->dimension];
        E->scratch = align_up(E->scratch + 2 * 8 * (len > 0 ? len : 1));
      }
    }
  /* staging slots: a body result that is another carried value (through
   * aliases) is copied aside before the loop buffers are overwritten */
  for (uint32_t p = 0; p < x->nprogs; p++)
    for (uint32_t s = 0; s < x->progs[p].nsteps; s++) {
      const step *q = &x->progs[p].steps[s];
      if (q->kind != STEP_WHILE || q->nsub != 2) continue;
      uint32_t b = q->sub[1];
      const hlo_block *bb = x->progs[b].block;
      const hlo_op *term = bb->last;
      for (uint32_t i = 0; term && i < term->num_operands && i < bb->num_args; i++) {
        int32_t a = body_arg_of(E, b, term->operands[i]);
        if (a < 0 || (uint32_t)a == i) continue;
        E->stage[bb->args[i].id] = E->scratch;
        int64_t n = cpu_value_bytes(&bb->args[i]);
        E->scratch = align_up(E->scratch + (n > 0 ? n : 1));
      }
    }
  return NULL;
}

/* ------------------------------------------------------------ the files */

/* "f32[2, 3] (24 bytes)" */
static void type_doc(strbuf *b, const hlo_type *t) {
  sb_printf(b, "%s[", hlo_dtype_name(t->dtype));
  for (uint32_t d = 0; d < t->rank; d++) sb_printf(b, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
  sb_printf(b, "] (%lld bytes)", (long long)(type_num_elements(t) * (int64_t)hlo_dtype_size(t->dtype)));
}

/* The int value of attribute `key` of list l (-1 when absent). */
static int64_t attr_int_in(const attr_list *l, const char *key) {
  for (uint32_t i = 0; l && i < l->n; i++)
    if (!strcmp(l->items[i].name, key) && l->items[i].value &&
        l->items[i].value->kind == ATTR_INT)
      return l->items[i].value->u.i.v;
  return -1;
}

static bool attr_present(const attr_list *l, const char *key) {
  for (uint32_t i = 0; l && i < l->n; i++)
    if (!strcmp(l->items[i].name, key)) return true;
  return false;
}

static void sig_table(strbuf *c, const char *name, const char *which, const hlo_type *const *ts,
                      uint32_t n, const int64_t *alias) {
  for (uint32_t i = 0; i < n; i++) {
    sb_printf(c, "static const int64_t %s_%s_dims%u[] = ", name, which, i);
    aot_print_dims(c, ts[i]->dims, ts[i]->rank);
    sb_puts(c, ";\n");
  }
  sb_printf(c, "const %s_tensor_info %s_%s[%u] = {\n", name, name, which, n ? n : 1);
  for (uint32_t i = 0; i < n; i++)
    sb_printf(c, "  {\"%s\", %zu, %u, %s_%s_dims%u, %lld, %lld},\n", hlo_dtype_name(ts[i]->dtype),
              hlo_dtype_size(ts[i]->dtype), ts[i]->rank, name, which, i,
              (long long)(type_num_elements(ts[i]) * (int64_t)hlo_dtype_size(ts[i]->dtype)),
              (long long)(alias ? alias[i] : -1));
  if (!n) sb_puts(c, "  {\"\", 0, 0, 0, 0, -1},\n");
  sb_puts(c, "};\n");
}

static hlo_status emit_files(emitter *E, const char *src_name, strbuf *h) {
  const cpu_exec *x = E->x;
  const hlo_func *f = x->f;
  const char *N = E->name;
  strbuf *c = E->c;
  const hlo_op *term = f->body.block.last;
  uint32_t nres = term ? term->num_operands : 0;
  const hlo_type **at = calloc(f->num_args + 1, sizeof *at), **rt = calloc(nres + 1, sizeof *rt);
  int64_t *donor = calloc(f->num_args + 1, sizeof *donor);
  if (!at || !rt || !donor) {
    free(at), free(rt), free(donor);
    return oom();
  }
  hlo_status st = NULL;
  for (uint32_t i = 0; i < f->num_args && !st; i++) {
    at[i] = f->body.block.args[i].type;
    if (at[i]->kind != TYPE_TENSOR || !type_is_static(at[i]) || at[i]->quant)
      st = status_at(HLO_UNIMPLEMENTED, &f->loc,
                     "--emit=lib: argument %u of @%s is not a tensor of static shape", i, f->name);
    const attr_list *l = f->arg_attrs ? &f->arg_attrs[i] : NULL;
    donor[i] = attr_int_in(l, "tf.aliasing_output");
    if (donor[i] < 0 && attr_present(l, "jax.buffer_donor")) donor[i] = -2;
  }
  for (uint32_t i = 0; i < nres && !st; i++) {
    rt[i] = term->operands[i]->type;
    if (rt[i]->kind != TYPE_TENSOR || !type_is_static(rt[i]) || rt[i]->quant)
      st = status_at(HLO_UNIMPLEMENTED, &f->loc,
                     "--emit=lib: result %u of @%s is not a tensor of static shape", i, f->name);
  }
  if (st) {
    free(at), free(rt), free(donor);
    return st;
  }
  /* ---- the header */
  sb_printf(h, "/* %s.h: @%s of %s compiled by hlo (`hlo compile --emit=lib`).\n", N, f->name, src_name);
  sb_printf(h,
            " *\n"
            " * Self-contained: %s.c needs libc, libm, pthreads%s; no hlo at run time.\n"
            " *\n"
            " * Arguments (args[i]: dense row-major, the element type's storage layout;\n"
            " * bf16 / f16 as their 16 bits):\n",
            N, E->no_blas ? " and nothing else" : " and a CBLAS (cblas_sgemm, cblas_dgemm)");
  for (uint32_t i = 0; i < f->num_args; i++) {
    sb_printf(h, " *   args[%u]: ", i);
    type_doc(h, at[i]);
    if (donor[i] >= 0) sb_printf(h, ", donated: may be the memory of results[%lld]", (long long)donor[i]);
    else if (donor[i] == -2) sb_puts(h, ", donated (jax.buffer_donor)");
    sb_puts(h, "\n");
  }
  sb_puts(h, " * Results (results[i], written whole):\n");
  for (uint32_t i = 0; i < nres; i++) {
    sb_printf(h, " *   results[%u]: ", i);
    type_doc(h, rt[i]);
    sb_puts(h, "\n");
  }
  sb_printf(h,
            " */\n#ifndef %s_H\n#define %s_H\n#include <stddef.h>\n#include <stdint.h>\n"
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
            N, N);
  sb_printf(h,
            "#define %s_NUM_ARGS %u\n#define %s_NUM_RESULTS %u\n"
            "/* The alignment NAME_run needs of its scratch buffer (bytes). */\n"
            "#define %s_SCRATCH_ALIGN 64\n\n",
            N, f->num_args, N, nres, N);
  sb_printf(h,
            "/* Error codes of %s_run (0: success). */\n"
            "enum { %s_OK = 0, %s_ERR_NULL = 1, %s_ERR_ALIGN = 2 };\n\n",
            N, N, N, N);
  sb_printf(h,
            "/* One argument or result: element type (MLIR's spelling: \"f32\", \"bf16\",\n"
            " * \"i32\", \"i1\" (one byte each)...), bytes per element, rank, dims[0..rank),\n"
            " * bytes in all, and for an argument the result it may share memory with\n"
            " * (tf.aliasing_output; -2: donated with jax.buffer_donor, -1: not donated). */\n"
            "typedef struct %s_tensor_info {\n"
            "  const char *dtype;\n  size_t elem_bytes;\n  uint32_t rank;\n  const int64_t *dims;\n"
            "  int64_t bytes;\n  int64_t alias;\n} %s_tensor_info;\n\n",
            N, N);
  sb_printf(h, "/* The signature as data: %s_NUM_ARGS entries, %s_NUM_RESULTS entries. */\n", N, N);
  sb_printf(h, "extern const %s_tensor_info %s_args[];\nextern const %s_tensor_info %s_results[];\n\n",
            N, N, N, N);
  sb_printf(h,
            "/* Bytes of the scratch buffer %s_run needs: %lld. */\nsize_t %s_scratch_bytes(void);\n\n",
            N, (long long)E->scratch, N);
  sb_printf(h,
            "/* Runs @%s: reads args[0..%s_NUM_ARGS) (not written), writes\n"
            " * results[0..%s_NUM_RESULTS), using scratch (%s_scratch_bytes() bytes,\n"
            " * %s_SCRATCH_ALIGN-byte aligned; NULL when that is 0) for every temporary.\n"
            " * Buffers are the sizes above; results must not overlap arguments or each\n"
            " * other, except a donated argument's memory given as the result it aliases.\n"
            " * num_threads > 1: the larger kernels run on up to that many threads (a team\n"
            " * of pthreads made for the call and joined before it returns; matrix\n"
            " * products stay on the calling thread, though a CBLAS may use its own);\n"
            " * results are the same bits whatever the count.\n"
            " * Deterministic; thread-safe for calls with separate scratch buffers (and\n"
            " * results); allocates nothing itself. Returns 0, or %s_ERR_NULL (a NULL args /\n"
            " * results / scratch pointer that is needed), %s_ERR_ALIGN (scratch misaligned). */\n"
            "int %s_run(const void *const *args, void *const *results, void *scratch, int num_threads);\n\n",
            f->name, N, N, N, N, N, N, N);
  sb_printf(h, "/* A static description of an error code of %s_run. */\nconst char *%s_strerror(int code);\n\n", N, N);
  sb_puts(h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");

  /* ---- NAME.c */
  sb_printf(c,
            "/* %s.c: @%s of %s compiled by hlo (`hlo compile --emit=lib`); API in %s.h.\n"
            " * Generated: the kernels of the fused program, its constants, the buffer\n"
            " * plan (offsets into the caller's scratch buffer) and the call sequence of\n"
            " * @%s, control flow included. */\n",
            N, f->name, src_name, N, f->name);
  sb_printf(c, "#define _POSIX_C_SOURCE 200809L\n#include \"%s.h\"\n#include <pthread.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
               "#include <string.h>\n#include <math.h>\n#ifdef memcpy\n#undef memcpy\n#endif\n"
               "#ifdef __clang__\n#pragma STDC FP_CONTRACT OFF\n#endif\n", N);
  sb_puts(c, "\n/* ---- the kernels' helpers (hlo's C dialect; those the kernels below do not\n"
             "   call stay unused: clang's unused-function warning is off for them) */\n");
  sb_puts(c, "#ifdef __clang__\n#pragma clang diagnostic push\n"
             "#pragma clang diagnostic ignored \"-Wunused-function\"\n#endif\n");
  aot_put_preamble(c, cpu_c_dialect()->preamble);
  sb_puts(c, "\n/* ---- data movement and matrix products */\n");
  aot_put_helpers(c, N, E->no_blas);
  sb_puts(c, "#ifdef __clang__\n#pragma clang diagnostic pop\n#endif\n");
  sb_puts(c, "\n/* ---- constants */\n");
  for (uint32_t i = 0; i < x->nvals; i++) {
    const tensor *t = x->consts[i];
    if (!t) continue;
    if (t->type->kind != TYPE_TENSOR || !t->data)
      return status_new(HLO_UNIMPLEMENTED, "--emit=lib: a constant that is not a tensor");
    sb_printf(c, "static const uint8_t %s_c%u[%zu] __attribute__((aligned(64))) = {", N, i,
              t->nbytes ? t->nbytes : 1);
    if (!t->nbytes) sb_puts(c, "0");
    for (size_t k = 0; k < t->nbytes; k++) {
      if (k % 24 == 0) sb_puts(c, "\n  ");
      sb_printf(c, "%u,", t->data[k]);
    }
    sb_puts(c, "};\n");
  }
  sb_puts(c, "\n/* ---- the kernels */\n");
  if (x->mod && x->mod->source) sb_puts(c, x->mod->source);
  sb_puts(c, "\n/* ---- the programs (scratch: s) */\n");
  for (uint32_t p = 0; p < x->nprogs; p++)
    sb_printf(c, "static void %s_p%u(const void *const *args, uint8_t *s, %s_team *T);\n", N, p, N);
  /* the programs go to their own text, after the functions they call */
  strbuf progs;
  sb_init(&progs);
  E->c = &progs;
  for (uint32_t p = 0; p < x->nprogs && !st; p++) st = emit_program(E, p);
  E->c = c;
  if (!st) {
    sb_puts(c, sb_cstr(E->fns));
    sb_puts(c, sb_cstr(&progs));
  }
  sb_free(&progs);
  if (st) {
    free(at), free(rt), free(donor);
    return st;
  }
  sb_puts(c, "\n/* ---- the API */\n");
  sig_table(c, N, "args", at, f->num_args, donor);
  sig_table(c, N, "results", rt, nres, NULL);
  sb_printf(c, "\nsize_t %s_scratch_bytes(void) { return %lld; }\n", N, (long long)E->scratch);
  sb_printf(c,
            "\nconst char *%s_strerror(int code) {\n"
            "  switch (code) {\n"
            "  case %s_OK: return \"success\";\n"
            "  case %s_ERR_NULL: return \"a NULL args, results or scratch pointer\";\n"
            "  case %s_ERR_ALIGN: return \"the scratch buffer is not %s_SCRATCH_ALIGN-byte aligned\";\n"
            "  default: return \"unknown error code\";\n  }\n}\n",
            N, N, N, N, N);
  sb_printf(c,
            "\nint %s_run(const void *const *args, void *const *results, void *scratch, int num_threads) {\n"
            "  uint8_t *s = (uint8_t *)scratch;\n"
            "  if ((uintptr_t)s %% %s_SCRATCH_ALIGN) return %s_ERR_ALIGN;\n",
            N, N, N);
  if (f->num_args) sb_printf(c, "  if (!args) return %s_ERR_NULL;\n", N);
  if (nres) sb_printf(c, "  if (!results) return %s_ERR_NULL;\n", N);
  if (E->scratch) sb_printf(c, "  if (!s) return %s_ERR_NULL;\n", N);
  for (uint32_t i = 0; i < f->num_args; i++)
    if (cpu_value_bytes(&f->body.block.args[i]) > 0)
      sb_printf(c, "  if (!args[%u]) return %s_ERR_NULL;\n", i, N);
  for (uint32_t i = 0; i < nres; i++)
    if (cpu_value_bytes(term->operands[i]) > 0)
      sb_printf(c, "  if (!results[%u]) return %s_ERR_NULL;\n", i, N);
  if (x->nprogs)
    sb_printf(c,
              "  %s_team team, *T = NULL;\n"
              "  if (num_threads > 1) {\n"
              "    %s_team_start(&team, num_threads);\n"
              "    T = &team;\n"
              "  }\n"
              "  %s_p0(args, s, T);\n"
              "  if (T) %s_team_stop(T);\n",
              N, N, N, N);
  /* results: those read from arguments first (a donated argument's memory
   * may be the result's) */
  char src[96];
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < nres; i++) {
      const hlo_value *r = term->operands[i];
      HLO_TRY(ptr_of(E, r, src, sizeof src, 0));
      bool from_arg = !strncmp(src, "((void *)args[", 14);
      if (from_arg != (pass == 0)) continue;
      int64_t bytes = cpu_value_bytes(r);
      if (bytes > 0)
        sb_printf(c, "  if (results[%u] != (const void *)%s) memmove(results[%u], %s, %lld);\n", i,
                  src, i, src, (long long)bytes);
    }
  sb_puts(c, "  return 0;\n}\n");
  free(at), free(rt), free(donor);
  return NULL;
}

/* ------------------------------------------------------------ building */

/* Runs argv (argv[0] looked up in PATH), its output appended to `log`;
 * Errors: HLO_UNAVAILABLE (cannot start), HLO_INTERNAL (a non-zero exit,
 * the log's first lines in the message). */
static hlo_status run_cmd(char *const *argv, const char *log) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa)) return oom();
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) return status_new(HLO_UNAVAILABLE, "--emit=lib: cannot start '%s': %s", argv[0], strerror(rc));
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return status_new(HLO_INTERNAL, "--emit=lib: waitpid: %s", strerror(errno));
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) return NULL;
  char msg[1024] = "";
  FILE *fp = fopen(log, "r");
  if (fp) {
    size_t n = fread(msg, 1, sizeof msg - 1, fp);
    msg[n] = 0;
    fclose(fp);
  }
  return status_new(HLO_INTERNAL, "--emit=lib: '%s' failed (log: %s):\n%s", argv[0], log, msg);
}

static hlo_status build(const char *dir, const char *N, const aot_options *o) {
  const char *cc = o->cc ? o->cc : getenv("HLO_CC");
  if (!cc || !*cc) cc = "cc";
  char *ccw = strdup(cc);
  if (!ccw) return oom();
  char *words[16];
  int nw = 0;
  for (char *t = strtok(ccw, " "); t && nw < 8; t = strtok(NULL, " ")) words[nw++] = t;
  if (!nw) {
    free(ccw);
    return status_new(HLO_INVALID_ARGUMENT, "the C compiler command is empty (HLO_CC)");
  }
  size_t L = strlen(dir) + strlen(N) + 32;
  char *csrc = malloc(L), *obj = malloc(L), *lib = malloc(L), *so = malloc(L), *log = malloc(L);
  hlo_status st = csrc && obj && lib && so && log ? NULL : oom();
  if (!st) {
    snprintf(csrc, L, "%s/%s.c", dir, N);
    snprintf(obj, L, "%s/%s.o", dir, N);
    snprintf(lib, L, "%s/lib%s.a", dir, N);
    snprintf(so, L, "%s/lib%s.so", dir, N);
    snprintf(log, L, "%s/%s.build.log", dir, N);
    remove(log);
    remove(lib);
  }
  char *argv[32];
  int n = 0;
  if (!st) {
    for (int i = 0; i < nw; i++) argv[n++] = words[i];
    const char *fl[] = {"-O2", "-std=c11", "-fPIC", "-c", csrc, "-o", obj};
    for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) argv[n++] = (char *)fl[i];
    argv[n] = NULL;
    st = run_cmd(argv, log);
  }
  if (!st) {
    char *ar[] = {"ar", "rcs", lib, obj, NULL};
    st = run_cmd(ar, log);
  }
  if (!st) {
    n = 0;
    for (int i = 0; i < nw; i++) argv[n++] = words[i];
    const char *fl[] = {"-O2", "-std=c11", "-fPIC", "-shared", "-o", so, obj, "-lm", "-lpthread"};
    for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) argv[n++] = (char *)fl[i];
    if (!o->no_blas) argv[n++] = "-lblas";
    argv[n] = NULL;
    st = run_cmd(argv, log);
  }
  if (obj) remove(obj);
  free(ccw), free(csrc), free(obj), free(lib), free(so), free(log);
  return st;
}

/* ------------------------------------------------------------ the driver */

static hlo_status write_file(const char *dir, const char *N, const char *ext, strbuf *b) {
  size_t L = strlen(dir) + strlen(N) + 16;
  char *path = malloc(L);
  if (!path) return oom();
  snprintf(path, L, "%s/%s%s", dir, N, ext);
  FILE *fp = fopen(path, "w");
  hlo_status st = NULL;
  if (!fp) st = status_new(HLO_UNAVAILABLE, "cannot write '%s': %s", path, strerror(errno));
  else {
    const char *s = sb_cstr(b);
    size_t len = strlen(s);
    bool bad = fwrite(s, 1, len, fp) != len;
    if (fclose(fp) != 0 || bad) st = status_new(HLO_UNAVAILABLE, "cannot write '%s'", path);
  }
  free(path);
  return st;
}

/* The default name of file `path`: its base name to the first '.', made a
 * C identifier. */
static char *default_name(const char *path) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  if (!strcmp(path, "-")) b = "model";
  size_t n = strcspn(b, ".");
  char *s = malloc(n + 2);
  if (!s) return NULL;
  size_t k = 0;
  if (!n || isdigit((unsigned char)b[0])) s[k++] = 'm';
  for (size_t i = 0; i < n; i++) s[k++] = isalnum((unsigned char)b[i]) ? b[i] : '_';
  s[k] = 0;
  return s;
}

static bool c_ident(const char *s) {
  if (!s || !*s || isdigit((unsigned char)*s)) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

hlo_status aot_emit_lib(const char *path, const char *out_dir, const aot_options *o) {
  aot_options none = {0};
  if (!o) o = &none;
  if (!path || !out_dir) return status_new(HLO_INVALID_ARGUMENT, "--emit=lib: no file or no output folder");
  char *name = o->name ? strdup(o->name) : default_name(path);
  if (!name) return oom();
  if (!c_ident(name)) {
    hlo_status st = status_new(HLO_INVALID_ARGUMENT,
                               "--emit=lib: the library name '%s' is not a C identifier", name);
    free(name);
    return st;
  }
  hlo_module *m = NULL;
  interp *it = NULL;
  cpu_exec *x = NULL;
  emitter E;
  memset(&E, 0, sizeof E);
  strbuf c, h, fns;
  sb_init(&c);
  sb_init(&h);
  sb_init(&fns);
  hlo_status st = hlo_module_load(path, &m);
  hlo_module_ir *ir = st ? NULL : runtime_module_ir(m);
  const hlo_func *f = NULL;
  if (!st) {
    f = module_entry(ir, o->entry);
    if (!f) st = status_new(HLO_INVALID_ARGUMENT, "--emit=lib: no function @%s", o->entry ? o->entry : "main");
  }
  if (!st && module_needs_refinement(ir, f->name))
    st = status_at(HLO_UNIMPLEMENTED, &f->loc,
                   "--emit=lib: @%s has dynamic shapes; the library needs static ones", f->name);
  if (!st) {
    pass_pipeline_options po = {0};
    po.pipeline = PASS_PIPELINE_CPU;
    po.verify_each = true;
    st = pass_pipeline_run(ir, &po, NULL);
  }
  if (!st) st = pass_chlo_legalize(ir);
  if (!st) {
    for (hlo_func *g = ir->funcs; g; g = g->next) func_number_values(g);
    f = module_entry(ir, o->entry);
    if (!f) st = status_new(HLO_INTERNAL, "--emit=lib: the entry vanished in the passes");
  }
  if (!st) st = interp_create(ir, NULL, &it);
  if (!st) {
    cpu_exec_options co = {.cache_root = "off", .backend = aot_backend()};
    st = cpu_exec_create(it, f, &co, &x);
  }
  if (!st) {
    E.x = x;
    E.name = name;
    E.no_blas = o->no_blas;
    E.c = &c;
    E.fns = &fns;
    uint32_t nv = x->nvals ? x->nvals : 1, np = x->nprogs ? x->nprogs : 1;
    E.byid = calloc(nv, sizeof *E.byid);
    E.slot = calloc(nv, sizeof *E.slot);
    E.stage = calloc(nv, sizeof *E.stage);
    E.sort_tmp = calloc(nv, sizeof *E.sort_tmp);
    E.base = calloc(np, sizeof *E.base);
    E.parent_prog = calloc(np, sizeof *E.parent_prog);
    E.parent_step = calloc(np, sizeof *E.parent_step);
    if (!E.byid || !E.slot || !E.stage || !E.sort_tmp || !E.base || !E.parent_prog || !E.parent_step) st = oom();
  }
  if (!st) {
    index_values(&E, &f->body.block);
    st = plan(&E);
  }
  if (!st) st = emit_files(&E, !strcmp(path, "-") ? "<stdin>" : path, &h);
  if (!st) st = path_make_dirs(out_dir, 0777);
  if (!st) st = write_file(out_dir, name, ".h", &h);
  if (!st) st = write_file(out_dir, name, ".c", &c);
  if (!st && !o->no_build) st = build(out_dir, name, o);
  free(E.byid), free(E.slot), free(E.stage), free(E.sort_tmp), free(E.base), free(E.parent_prog), free(E.parent_step);
  sb_free(&c);
  sb_free(&h);
  sb_free(&fns);
  cpu_exec_destroy(x);
  interp_destroy(it);
  hlo_module_destroy(m);
  free(name);
  return st;
}
