/* emit_lib.c — `hlo compile --emit=lib` (aot.h): the CPU executable of a
 * module printed as one C library.
 *
 * Memory: the library's caller gives one scratch buffer of
 * NAME_scratch_bytes() bytes (64-byte aligned). Its first part is the
 * executable's arena (program 0's, with every region's arena a slice of its
 * parent's at the offset the buffer assignment chose:
 * executable_cpu_buffers.c); after it, the buffers the runtime allocates
 * apart (HOME_HEAP: a control step's results, a region's results, a kernel
 * result a loop takes over, an interpreter step's), the staging copies of
 * a loop body's results, sort index arrays and gemm / LAPACK workspaces,
 * placed by their live ranges over the whole program tree (a value used
 * inside a loop lives through the loop) with the runtime's heap simulator
 * (ba_pack), so that buffers never live at once share bytes. An entry
 * result computed in a buffer of its own is computed in the caller's
 * results[i] directly (no slot, no copy) unless an argument is donated to
 * it. Arguments are read in place, constants are static arrays (or, with
 * constants_file, NAME.bin's bytes), the other results are copied into
 * the caller's buffers at the end.
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
#include "runtime/buffer_assignment.h"
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
  if (x->consts[id] && E->cfile[id] >= 0) {
    snprintf(buf, n, "((void *)(%s_blob + %lld))", E->name, (long long)E->cfile[id]);
    return NULL;
  }
  if (x->consts[id]) {
    snprintf(buf, n, "((void *)%s_c%u)", E->name, id);
    return NULL;
  }
  if (E->same_as[id]) return ptr_of(E, E->same_as[id], buf, n, depth + 1);
  if (E->res_of[id] >= 0) {
    snprintf(buf, n, "((void *)results[%d])", E->res_of[id]);
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
            "    %s_p%u(args, results, s, T);\n"
            "    if (!*(const uint8_t *)%s) break;\n"
            "    %s_p%u(args, results, s, T);\n"
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
    sb_printf(c, "    %s_p%u(args, results, s, T);\n", E->name, q->sub[k]);
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
  sb_printf(c, "\n/* program %u: %s */\nstatic void %s_p%u(const void *const *args, void *const *results, uint8_t *s,\n"
            "                  %s_team *T) {\n",
            p, what, E->name, p, E->name);
  sb_puts(c, "  (void)args; (void)results; (void)s; (void)T;\n");
  for (uint32_t i = 0; i < pg->nsteps; i++) HLO_TRY(emit_step(E, p, &pg->steps[i]));
  if (p > 0 && E->parent_prog[p] != UINT32_MAX) {
    const step *w = step_at(E, E->parent_prog[p], E->parent_step[p]);
    if (w->kind == STEP_WHILE && w->nsub == 2 && w->sub[1] == p) HLO_TRY(emit_body_end(E, p, w));
  }
  sb_puts(c, "}\n");
  return NULL;
}

/* ------------------------------------------------------------ the plan */

/* The buffers after the arena (own slots, staging copies, sort index
 * arrays, workspaces), placed by ba_pack once every one is known: where
 * the offset goes, the size, and what its live range is made from. */
typedef enum { ITEM_VALUE, ITEM_STEP, ITEM_BODY_END } item_kind;
typedef struct slot_item {
  int64_t *where;           /* E->slot[id], E->stage[id], ... */
  int64_t bytes;
  item_kind kind;           /* VALUE: v's definition and uses; STEP: step (p, s) only;
                               BODY_END: the end-of-body copies of program p */
  const hlo_value *v;
  uint32_t p, s;
} slot_item;

typedef struct slot_list {
  slot_item *it;
  uint32_t n, cap;
  bool oom;
} slot_list;

/* Records a buffer (its offset, -1 until packed, at *where). */
static void add_item(slot_list *L, int64_t *where, int64_t bytes, item_kind kind,
                     const hlo_value *v, uint32_t p, uint32_t s) {
  if (L->n == L->cap) {
    uint32_t cap = L->cap ? 2 * L->cap : 64;
    slot_item *it = realloc(L->it, cap * sizeof *it);
    if (!it) {
      L->oom = true;
      return;
    }
    L->it = it, L->cap = cap;
  }
  *where = 0; /* taken (>= 0); placed by pack_items */
  L->it[L->n++] = (slot_item){where, bytes > 0 ? bytes : 1, kind, v, p, s};
}

/* Gives value v a slot of its own after the arena. */
static void give_slot(emitter *E, slot_list *L, const hlo_value *v) {
  if (E->slot[v->id] >= 0) return;
  add_item(L, &E->slot[v->id], cpu_value_bytes(v), ITEM_VALUE, v, 0, 0);
}

/* The value whose own slot holds v's bytes (through aliases, in-place
 * chains and loop buffers: ptr_of's walk), or NULL (an argument, a
 * constant, the arena). */
static const hlo_value *slot_owner(const emitter *E, const hlo_value *v) {
  const cpu_exec *x = E->x;
  for (int depth = 0; depth < 1000 && v && v->id < x->nvals; depth++) {
    uint32_t id = v->id;
    if (x->consts[id]) return NULL;
    if (E->same_as[id]) {
      v = E->same_as[id];
      continue;
    }
    if (E->slot[id] >= 0) return v;
    if (x->home[id] == HOME_ARENA) return NULL;
    if (x->home[id] == HOME_CARRIED) {
      v = (uint32_t)x->offset[id] < x->nvals ? E->byid[x->offset[id]] : NULL;
      continue;
    }
    if (!v->def) { /* a block argument: the entry's, or a loop buffer */
      uint32_t p = prog_of_block(E, v->block);
      if (p == 0 || p == UINT32_MAX || E->parent_prog[p] == UINT32_MAX) return NULL;
      const step *q = step_at(E, E->parent_prog[p], E->parent_step[p]);
      if (q->kind != STEP_WHILE || v->index >= q->nout) return NULL;
      v = q->out[v->index];
      continue;
    }
    if (x->prog_of[id] >= x->nprogs) return NULL;
    const program *pg = &x->progs[x->prog_of[id]];
    uint32_t s = x->def_step[id];
    if (s >= pg->nsteps || pg->steps[s].kind != STEP_ALIAS || pg->steps[s].nin < 1) return NULL;
    v = pg->steps[s].in[0];
  }
  return NULL;
}

/* The schedule as times: each step of program p is [ts, te] (a control
 * step spans its regions' programs, numbered inside it), each program ends
 * at pe[p] (its terminator's copies). */
typedef struct timing {
  uint32_t *sb;                /* by program: index of its first step in ts / te */
  uint32_t *ts, *te, *pe;
} timing;

static void number(const emitter *E, timing *T, uint32_t p, uint32_t *c, int depth) {
  const program *pg = &E->x->progs[p];
  for (uint32_t s = 0; s < pg->nsteps; s++) {
    uint32_t k = T->sb[p] + s;
    T->ts[k] = (*c)++;
    for (uint32_t j = 0; j < pg->steps[s].nsub && depth < 1000; j++)
      if (pg->steps[s].sub[j] < E->x->nprogs) number(E, T, pg->steps[s].sub[j], c, depth + 1);
    T->te[k] = pg->steps[s].nsub ? (*c)++ : T->ts[k];
  }
  T->pe[p] = (*c)++;
}

/* A use at time t in program pu of a value defined in program pd: the
 * time of the step of pd that holds it (a loop repeats: a value from
 * outside lives through the whole control step). */
static uint32_t lift(const emitter *E, const timing *T, uint32_t pu, uint32_t t, uint32_t pd) {
  for (int depth = 0; pu != pd && pu < E->x->nprogs && E->parent_prog[pu] != UINT32_MAX && depth < 1000;
       depth++) {
    t = T->te[T->sb[E->parent_prog[pu]] + E->parent_step[pu]];
    pu = E->parent_prog[pu];
  }
  return t;
}

static void widen(uint32_t *lo, uint32_t *hi, uint32_t t) {
  if (t < *lo) *lo = t;
  if (t > *hi) *hi = t;
}

static int64_t attr_int_in(const attr_list *l, const char *key);

/* The entry's results whose values have slots of their own are computed
 * in the caller's result buffers (results[i]: no slot in the scratch, no
 * copy at the end), as the runtime hands its results over, unless an
 * argument is donated to that result (tf.aliasing_output: its memory may
 * be results[i] while it is still read). A value returned twice is
 * computed in the first and copied. */
static void direct_results(emitter *E) {
  const cpu_exec *x = E->x;
  const hlo_func *f = x->f;
  const hlo_op *term = f->body.block.last;
  for (uint32_t i = 0; term && i < term->num_operands; i++) {
    bool donated = false;
    for (uint32_t a = 0; a < f->num_args && f->arg_attrs; a++)
      donated |= attr_int_in(&f->arg_attrs[a], "tf.aliasing_output") == (int64_t)i;
    const hlo_value *o = donated ? NULL : slot_owner(E, term->operands[i]);
    if (!o || E->res_of[o->id] >= 0 || x->prog_of[o->id] != 0 ||
        cpu_value_bytes(o) != cpu_value_bytes(term->operands[i]))
      continue;
    E->res_of[o->id] = (int32_t)i;
  }
}

/* Places the items after the arena by their live ranges (ba_pack: XLA's
 * heap simulator), so buffers that are never live at once share bytes.
 * Errors: HLO_RESOURCE_EXHAUSTED. */
static hlo_status pack_items(emitter *E, slot_list *L) {
  const cpu_exec *x = E->x;
  uint32_t nsteps = 0;
  for (uint32_t p = 0; p < x->nprogs; p++) nsteps += x->progs[p].nsteps;
  timing T;
  T.sb = calloc(x->nprogs + 1, sizeof *T.sb);
  T.ts = calloc(nsteps + 1, sizeof *T.ts);
  T.te = calloc(nsteps + 1, sizeof *T.te);
  T.pe = calloc(x->nprogs + 1, sizeof *T.pe);
  uint32_t *lo = malloc((x->nvals + 1) * sizeof *lo), *hi = calloc(x->nvals + 1, sizeof *hi);
  ba_buffer *bufs = calloc(L->n + 1, sizeof *bufs);
  hlo_status st = NULL;
  if (!T.sb || !T.ts || !T.te || !T.pe || !lo || !hi || !bufs) st = oom();
  if (!st) {
    for (uint32_t p = 0, k = 0; p < x->nprogs; p++) T.sb[p] = k, k += x->progs[p].nsteps;
    uint32_t c = 0;
    if (x->nprogs) number(E, &T, 0, &c, 0);
    for (uint32_t i = 0; i < x->nvals; i++) lo[i] = UINT32_MAX;
    for (uint32_t p = 0; p < x->nprogs; p++) {
      const program *pg = &x->progs[p];
      for (uint32_t s = 0; s < pg->nsteps; s++) {
        const step *q = &pg->steps[s];
        uint32_t t0 = T.ts[T.sb[p] + s], t1 = T.te[T.sb[p] + s];
        for (uint32_t i = 0; i < q->nout; i++) {
          const hlo_value *o = slot_owner(E, q->out[i]);
          if (!o) continue;
          uint32_t t = lift(E, &T, p, t0, x->prog_of[o->id]);
          widen(&lo[o->id], &hi[o->id], t);
          widen(&lo[o->id], &hi[o->id], lift(E, &T, p, t1, x->prog_of[o->id]));
        }
        for (uint32_t i = 0; i < q->nin; i++) {
          const hlo_value *o = slot_owner(E, q->in[i]);
          if (o) widen(&lo[o->id], &hi[o->id], lift(E, &T, p, t1, x->prog_of[o->id]));
        }
      }
      const hlo_op *term = pg->block ? pg->block->last : NULL;
      for (uint32_t i = 0; term && i < term->num_operands; i++) {
        const hlo_value *o = slot_owner(E, term->operands[i]);
        if (o) widen(&lo[o->id], &hi[o->id], lift(E, &T, p, T.pe[p], x->prog_of[o->id]));
      }
    }
    for (uint32_t i = 0; i < L->n; i++) {
      const slot_item *it = &L->it[i];
      uint32_t a = 0, b = 0;
      if (it->kind == ITEM_VALUE && lo[it->v->id] <= hi[it->v->id]) {
        a = lo[it->v->id], b = hi[it->v->id];
      } else if (it->kind == ITEM_VALUE) { /* never used: from its step on */
        uint32_t pd = x->prog_of[it->v->id], sd = x->def_step[it->v->id];
        a = b = pd < x->nprogs && sd < x->progs[pd].nsteps ? T.ts[T.sb[pd] + sd] : 0;
      } else if (it->kind == ITEM_STEP) {
        a = b = T.ts[T.sb[it->p] + it->s];
      } else {
        a = b = T.pe[it->p];
      }
      bufs[i] = (ba_buffer){.bytes = it->bytes, .start = a, .end = b};
    }
    for (uint32_t i = 0; i < L->n; i++) /* a result's own buffer: the caller's */
      if (L->it[i].kind == ITEM_VALUE && E->res_of[L->it[i].v->id] >= 0) bufs[i].bytes = 0;
    int64_t bytes = 0;
    st = ba_pack(bufs, L->n, ALIGN, false, &bytes);
    if (!st) {
      for (uint32_t i = 0; i < L->n; i++) *L->it[i].where = E->scratch + bufs[i].offset;
      E->scratch = align_up(E->scratch + bytes);
    }
  }
  free(T.sb), free(T.ts), free(T.te), free(T.pe), free(lo), free(hi), free(bufs);
  return st;
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
  for (uint32_t i = 0; i < x->nvals; i++)
    E->slot[i] = E->stage[i] = E->sort_tmp[i] = E->gemm_ws[i] = E->cfile[i] = E->res_of[i] = -1;
  /* NAME.bin: the large constants after its 64-byte header */
  E->cfile_bytes = 0;
  for (uint32_t i = 0; E->constants_file && i < x->nvals; i++)
    if (x->consts[i] && x->consts[i]->data && (int64_t)x->consts[i]->nbytes >= AOT_CONSTANTS_FILE_MIN) {
      if (!E->cfile_bytes) E->cfile_bytes = ALIGN;
      E->cfile[i] = E->cfile_bytes;
      E->cfile_bytes = align_up(E->cfile_bytes + (int64_t)x->consts[i]->nbytes);
    }
  for (uint32_t p = 0; p < x->nprogs; p++)
    for (uint32_t s = 0; s < x->progs[p].nsteps; s++) {
      const step *q = &x->progs[p].steps[s];
      for (uint32_t i = 0; i < q->nout; i++)
        if (q->out[i]->type->kind != TYPE_TENSOR || !type_is_static(q->out[i]->type))
          return aot_unsupported(q, "has a result that is not a tensor of static shape");
    }
  /* a loop buffer the body passes through unchanged whose init is an
   * argument of the entry or a constant (never written): the init's own
   * bytes, no copy (the runtime lends it to the loop as well) */
  for (uint32_t p = 0; p < x->nprogs; p++)
    for (uint32_t s = 0; s < x->progs[p].nsteps; s++) {
      const step *q = &x->progs[p].steps[s];
      if (q->kind != STEP_WHILE || q->nsub != 2 || q->sub[1] >= x->nprogs) continue;
      const hlo_block *bb = x->progs[q->sub[1]].block;
      const hlo_op *term = bb->last;
      for (uint32_t i = 0; term && i < q->nout && i < term->num_operands && i < bb->num_args &&
                           i < q->nin; i++) {
        const hlo_value *init = q->in[i];
        bool entry_arg = !init->def && prog_of_block(E, init->block) == 0;
        if (term->operands[i] == &bb->args[i] && (entry_arg || x->consts[init->id]) &&
            x->home[q->out[i]->id] == HOME_HEAP)
          E->same_as[q->out[i]->id] = init;
      }
    }
  slot_list L = {0};
  for (uint32_t p = 0; p < x->nprogs; p++)
    for (uint32_t s = 0; s < x->progs[p].nsteps; s++) {
      const step *q = &x->progs[p].steps[s];
      for (uint32_t i = 0; i < q->nout; i++) {
        const hlo_value *v = q->out[i];
        if (x->home[v->id] != HOME_HEAP || q->kind == STEP_ALIAS || x->consts[v->id] ||
            E->same_as[v->id])
          continue;
        give_slot(E, &L, v);
      }
      /* the f32 workspace of a bf16 product on oneDNN (and of its chain's) */
      if (q->kind == STEP_GEMM && q->nout && aot_gemm_needs_ws(E->blas, &q->g))
        add_item(&L, &E->gemm_ws[q->out[0]->id], 4 * q->g.batch * q->g.m * q->g.n, ITEM_STEP,
                 NULL, p, s);
      if (q->kind == STEP_GEMM && q->epilogue && q->chain && q->chain->out_at < q->nout &&
          aot_gemm_needs_ws(E->blas, &q->chain->g)) {
        const backend_gemm *g2 = &q->chain->g;
        add_item(&L, &E->gemm_ws[q->out[q->chain->out_at]->id], 4 * g2->batch * g2->m * g2->n,
                 ITEM_STEP, NULL, p, s);
      }
      /* a LAPACK custom call's column-major copies */
      int64_t lw = q->nout ? aot_lapack_ws(q) : -1;
      if (lw >= 0) {
        E->lapack = true;
        add_item(&L, &E->gemm_ws[q->out[0]->id], lw, ITEM_STEP, NULL, p, s);
      }
      if (q->kind == STEP_SORT && q->sort && q->nout) {
        int64_t len = q->sort->dims[q->sort->dimension];
        add_item(&L, &E->sort_tmp[q->out[0]->id], 2 * 8 * (len > 0 ? len : 1), ITEM_STEP, NULL, p, s);
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
        add_item(&L, &E->stage[bb->args[i].id], cpu_value_bytes(&bb->args[i]), ITEM_BODY_END, NULL,
                 b, 0);
      }
    }
  direct_results(E);
  hlo_status st = L.oom ? oom() : pack_items(E, &L);
  free(L.it);
  return st;
}

/* ------------------------------------------------------------ the files */

/* ------------------------------------------------------------ the BLAS */

static bool parse_blas(const char *s, aot_blas *out) {
  static const char *const names[] = {"cblas", "openblas", "dnnl", "none"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) {
      *out = (aot_blas)i;
      return true;
    }
  return false;
}

static const char *blas_name(aot_blas b) {
  switch (b) {
  case AOT_BLAS_CBLAS: return "a CBLAS, cblas_sgemm / cblas_dgemm";
  case AOT_BLAS_OPENBLAS: return "OpenBLAS, cblas_sgemm / cblas_dgemm";
  case AOT_BLAS_DNNL: return "oneDNN's dnnl_sgemm / dnnl_gemm_bf16bf16f32, a CBLAS for f64 and tiny f32";
  case AOT_BLAS_NONE: break;
  }
  return "none, the library's own loops";
}

/* " and ..." for the header's first lines. */
static const char *blas_doc(aot_blas b) {
  switch (b) {
  case AOT_BLAS_CBLAS: return " and a CBLAS (cblas_sgemm, cblas_dgemm)";
  case AOT_BLAS_OPENBLAS: return " and OpenBLAS (cblas_sgemm, cblas_dgemm)";
  case AOT_BLAS_DNNL: return " and oneDNN (dnnl_sgemm, dnnl_gemm_bf16bf16f32) and a CBLAS";
  case AOT_BLAS_NONE: break;
  }
  return " and nothing else";
}

/* The link flags of the BLAS (space-separated; "" for none). OpenBLAS is
 * linked by path with a run path (its OpenMP build where Debian installs
 * it, else its pthread build, else -lopenblas), as hlo itself links it, so
 * that Debian's libblas.so.3 alternative does not decide what runs. */
static const char *blas_flags(aot_blas b) {
#if defined(__x86_64__)
#define AOT_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define AOT_MULTIARCH "aarch64-linux-gnu"
#else
#define AOT_MULTIARCH "unknown"
#endif
  static const char *const openblas[] = {
      "-Wl,-rpath,/usr/lib/" AOT_MULTIARCH "/openblas-openmp /usr/lib/" AOT_MULTIARCH
      "/openblas-openmp/libopenblas.so.0",
      "-Wl,-rpath,/usr/lib/" AOT_MULTIARCH "/openblas-pthread /usr/lib/" AOT_MULTIARCH
      "/openblas-pthread/libopenblas.so.0",
  };
  switch (b) {
  case AOT_BLAS_CBLAS: return "-lblas";
  case AOT_BLAS_OPENBLAS:
    for (int i = 0; i < 2; i++) {
      const char *path = strrchr(openblas[i], ' ') + 1;
      FILE *fp = fopen(path, "rb");
      if (fp) {
        fclose(fp);
        return openblas[i];
      }
    }
    return "-lopenblas";
  case AOT_BLAS_DNNL: return "-ldnnl -lblas";
  case AOT_BLAS_NONE: break;
  }
  return "";
}

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

/* The -march NAME.c is built for (aot_options.march's rule). */
static const char *march_of(const aot_options *o) {
  const char *ma = o->march ? o->march : getenv("HLO_AOT_MARCH");
  return ma ? ma : "native";
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
            " * Link a program with lib%s.a and %s_LINK_FLAGS (below). lib%s.a and .so\n"
            " * are built for -march=%s ($HLO_AOT_MARCH when made; \"native\": the build\n"
            " * machine's CPU, whose instructions another CPU may lack: build %s.c\n"
            " * again, e.g. with the compiler's default target, to run elsewhere).\n"
            " *\n"
            " * Arguments (args[i]: dense row-major, the element type's storage layout;\n"
            " * bf16 / f16 as their 16 bits):\n",
            N, blas_doc(E->blas), N, N, N, E->march, N);
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
            "#define %s_SCRATCH_ALIGN 64\n"
            "/* What a program using lib%s.a links with besides it (the matrix products'\n"
            " * library: %s). */\n"
            "#define %s_LINK_FLAGS \"%s%s%s-lm -lpthread\"\n"
            "/* 1: results are the same bits whatever num_threads; 0: the same bits for\n"
            " * the same num_threads (a BLAS may round a block of a product's rows apart\n"
            " * from the whole: OpenBLAS's small-matrix kernels; the blocks depend on the\n"
            " * count and the shape only). */\n"
            "#define %s_THREAD_INVARIANT %d\n\n",
            N, f->num_args, N, nres, N, N, blas_name(E->blas), N, E->lapack ? "-llapack " : "",
            blas_flags(E->blas), *blas_flags(E->blas) ? " " : "", N, E->blas == AOT_BLAS_NONE);
  sb_printf(h,
            "/* Error codes of %s_run (0: success). */\n"
            "enum { %s_OK = 0, %s_ERR_NULL = 1, %s_ERR_ALIGN = 2, %s_ERR_CONSTANTS = 3 };\n\n",
            N, N, N, N, N);
  sb_printf(h,
            "/* Bytes of %s.bin, the large constants kept out of %s.c (`--constants=file`);\n"
            " * 0: none, every constant is in %s.c and the two functions below do nothing\n"
            " * but return 0. */\n"
            "#define %s_CONSTANTS_BYTES %lld\n"
            "/* Gives the library %s.bin's contents: `data` (%s_CONSTANTS_BYTES bytes,\n"
            " * 64-byte aligned: an mmap of the file, or memory the program embeds) is\n"
            " * used in place, not copied, and must stay valid while the library is\n"
            " * used. Call before the first %s_run, not while one runs. Returns 0, or\n"
            " * %s_ERR_NULL, %s_ERR_ALIGN, %s_ERR_CONSTANTS (not this library's file:\n"
            " * its size, magic or checksum differ). */\n"
            "int %s_set_constants(const void *data, size_t bytes);\n"
            "/* Reads %s.bin from `path` into the library's own static storage (no\n"
            " * allocation), then as %s_set_constants. Returns 0, %s_ERR_NULL, or\n"
            " * %s_ERR_CONSTANTS (cannot read it, or not this library's file). */\n"
            "int %s_load_constants(const char *path);\n\n",
            N, N, N, N, (long long)E->cfile_bytes, N, N, N, N, N, N, N, N, N, N, N, N);
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
            " * num_threads > 1: the larger kernels and matrix products run on up to that\n"
            " * many threads (a team of pthreads made for the call and joined before it\n"
            " * returns); a BLAS is called single-threaded on each (OpenMP's thread count\n"
            " * of the calling thread set to 1 for the call and restored after; a BLAS\n"
            " * without OpenMP: openblas_set_num_threads(1) when it has it), with\n"
            " * denormals flushed to zero in the call (FTZ/DAZ, as hlo's CPU backend).\n"
            " * Deterministic (and see %s_THREAD_INVARIANT); thread-safe for calls with separate scratch buffers (and\n"
            " * results); allocates nothing itself. Returns 0, or %s_ERR_NULL (a NULL args /\n"
            " * results / scratch pointer that is needed), %s_ERR_ALIGN (scratch misaligned),\n"
            " * %s_ERR_CONSTANTS (%s.bin not given yet). */\n"
            "int %s_run(const void *const *args, void *const *results, void *scratch, int num_threads);\n\n",
            f->name, N, N, N, N, N, N, N, N, N, N);
  sb_printf(h, "/* A static description of an error code of %s_run. */\nconst char *%s_strerror(int code);\n\n", N, N);
  sb_puts(h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");

  /* ---- NAME.c */
  sb_printf(c,
            "/* %s.c: @%s of %s compiled by hlo (`hlo compile --emit=lib`); API in %s.h.\n"
            " * Generated: the kernels of the fused program, its constants, the buffer\n"
            " * plan (offsets into the caller's scratch buffer) and the call sequence of\n"
            " * @%s, control flow included. */\n",
            N, f->name, src_name, N, f->name);
  sb_printf(c, "#define _POSIX_C_SOURCE 200809L\n#include \"%s.h\"\n#include <pthread.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n"
               "#include <string.h>\n#include <math.h>\n#ifdef memcpy\n#undef memcpy\n#endif\n"
               "#ifdef __clang__\n#pragma STDC FP_CONTRACT OFF\n#endif\n", N);
  sb_puts(c, "\n/* ---- the kernels' helpers (hlo's C dialect; those the kernels below do not\n"
             "   call stay unused: clang's unused-function warning is off for them) */\n");
  sb_puts(c, "#ifdef __clang__\n#pragma clang diagnostic push\n"
             "#pragma clang diagnostic ignored \"-Wunused-function\"\n#endif\n");
  aot_put_preamble(c, cpu_c_dialect()->preamble);
  sb_puts(c, "\n/* ---- data movement and matrix products */\n");
  aot_put_helpers(c, N, E->blas);
  if (E->lapack) aot_put_lapack(c, N);
  sb_puts(c, "#ifdef __clang__\n#pragma clang diagnostic pop\n#endif\n");
  sb_puts(c, "\n/* ---- constants */\n");
  if (E->cfile_bytes)
    sb_printf(c,
              "/* the large constants: NAME.bin's bytes (%s_set_constants, %s_load_constants) */\n"
              "static const uint8_t *%s_blob;\n",
              N, N, N);
  for (uint32_t i = 0; i < x->nvals; i++) {
    const tensor *t = x->consts[i];
    if (!t || E->cfile[i] >= 0) continue;
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
  sb_puts(c, "\n/* ---- the kernels (a kernel may compute a value it does not use) */\n");
  sb_puts(c, "#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wunused-variable\"\n");
  if (x->mod && x->mod->source) sb_puts(c, x->mod->source);
  sb_puts(c, "#pragma GCC diagnostic pop\n");
  sb_puts(c, "\n/* ---- the programs (scratch: s) */\n");
  for (uint32_t p = 0; p < x->nprogs; p++)
    sb_printf(c, "static void %s_p%u(const void *const *args, void *const *results, uint8_t *s, %s_team *T);\n",
              N, p, N);
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
  if (!E->cfile_bytes) {
    sb_printf(c,
              "int %s_set_constants(const void *data, size_t bytes) { (void)data, (void)bytes; return 0; }\n"
              "int %s_load_constants(const char *path) { (void)path; return 0; }\n",
              N, N);
  } else {
    sb_printf(c,
              "static uint8_t %s_blob_store[%lld] __attribute__((aligned(64)));\n"
              "int %s_set_constants(const void *data, size_t bytes) {\n"
              "  const uint8_t *d = (const uint8_t *)data;\n"
              "  if (!d) return %s_ERR_NULL;\n"
              "  if ((uintptr_t)d %% 64) return %s_ERR_ALIGN;\n"
              "  if (bytes != (size_t)%lld || memcmp(d, \"HLOAOTC1\", 8)) return %s_ERR_CONSTANTS;\n"
              "  uint64_t size = 0, sum = 0, h = 14695981039346656037ull;\n"
              "  for (int k = 0; k < 8; k++) size |= (uint64_t)d[8 + k] << (8 * k), sum |= (uint64_t)d[16 + k] << (8 * k);\n"
              "  for (size_t i = 64; i < bytes; i++) h = (h ^ d[i]) * 1099511628211ull;\n"
              "  if (size != bytes || sum != h) return %s_ERR_CONSTANTS;\n"
              "  %s_blob = d;\n"
              "  return 0;\n"
              "}\n"
              "int %s_load_constants(const char *path) {\n"
              "  if (!path) return %s_ERR_NULL;\n"
              "  FILE *fp = fopen(path, \"rb\");\n"
              "  if (!fp) return %s_ERR_CONSTANTS;\n"
              "  size_t n = fread(%s_blob_store, 1, sizeof %s_blob_store, fp);\n"
              "  int more = fgetc(fp) != EOF;\n"
              "  fclose(fp);\n"
              "  if (n != sizeof %s_blob_store || more) return %s_ERR_CONSTANTS;\n"
              "  return %s_set_constants(%s_blob_store, n);\n"
              "}\n",
              N, (long long)E->cfile_bytes, N, N, N, (long long)E->cfile_bytes, N, N, N, N, N, N, N,
              N, N, N, N, N);
  }
  sig_table(c, N, "args", at, f->num_args, donor);
  sig_table(c, N, "results", rt, nres, NULL);
  sb_printf(c, "\nsize_t %s_scratch_bytes(void) { return %lld; }\n", N, (long long)E->scratch);
  sb_printf(c,
            "\nconst char *%s_strerror(int code) {\n"
            "  switch (code) {\n"
            "  case %s_OK: return \"success\";\n"
            "  case %s_ERR_NULL: return \"a NULL pointer that is needed (args, results, scratch, constants)\";\n"
            "  case %s_ERR_ALIGN: return \"a buffer is not %s_SCRATCH_ALIGN-byte aligned\";\n"
            "  case %s_ERR_CONSTANTS: return \"the constants file is not loaded, or not this library's\";\n"
            "  default: return \"unknown error code\";\n  }\n}\n",
            N, N, N, N, N, N);
  sb_printf(c,
            "\nint %s_run(const void *const *args, void *const *results, void *scratch, int num_threads) {\n"
            "  uint8_t *s = (uint8_t *)scratch;\n"
            "  if ((uintptr_t)s %% %s_SCRATCH_ALIGN) return %s_ERR_ALIGN;\n",
            N, N, N);
  if (E->cfile_bytes) sb_printf(c, "  if (!%s_blob) return %s_ERR_CONSTANTS;\n", N, N);
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
              "  %s_p0(args, results, s, T);\n"
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

static hlo_status build(const char *dir, const char *N, const aot_options *o, aot_blas blas) {
  const char *cc = o->cc ? o->cc : getenv("HLO_CC");
  if (!cc || !*cc) cc = "cc";
  char *ccw = strdup(cc), *bfl = strdup(blas_flags(blas));
  if (!ccw || !bfl) {
    free(ccw), free(bfl);
    return oom();
  }
  char *words[16];
  int nw = 0;
  for (char *t = strtok(ccw, " "); t && nw < 8; t = strtok(NULL, " ")) words[nw++] = t;
  if (!nw) {
    free(ccw);
    return status_new(HLO_INVALID_ARGUMENT, "the C compiler command is empty (HLO_CC)");
  }
  /* hlo's own kernels' flags (backend/cpu/jit.c): -march, for this CPU
   * unless told otherwise; gcc's -O3 vectorizer cost model (not given to a
   * compiler named clang: clang 14 rejects it); -fno-math-errno lets sqrt
   * inline; -fno-trapping-math lets exp/tanh loops vectorise on AVX2 (jit.c);
   * -ffp-contract=off keeps a * b + c two roundings (the bits of
   * the CPU backend and the interpreter) */
  const char *ma = march_of(o);
  char march[96] = "";
  if (*ma && strcmp(ma, "none")) {
    if (strlen(ma) > 64 || strspn(ma, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != strlen(ma)) {
      free(ccw), free(bfl);
      return status_new(HLO_INVALID_ARGUMENT, "--emit=lib: a bad -march value '%s'", ma);
    }
    snprintf(march, sizeof march, "-march=%s", ma);
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
    const char *fl[] = {"-O2",
                        "-std=c11",
                        "-fPIC",
                        "-fno-math-errno",
                        "-fno-trapping-math",
                        "-ffp-contract=off",
                        "-c",
                        csrc,
                        "-o",
                        obj};
    for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) argv[n++] = (char *)fl[i];
    if (!strstr(words[0], "clang")) /* clang 14 rejects it */
      argv[n++] = "-fvect-cost-model=dynamic";
    if (march[0]) argv[n++] = march;
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
    const char *fl[] = {"-O2", "-std=c11", "-fPIC", "-shared", "-o", so, obj};
    for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) argv[n++] = (char *)fl[i];
    for (char *t = strtok(bfl, " "); t && n < 28; t = strtok(NULL, " ")) argv[n++] = t;
    argv[n++] = "-lm";
    argv[n++] = "-lpthread";
    argv[n] = NULL;
    st = run_cmd(argv, log);
  }
  if (obj) remove(obj);
  free(ccw), free(bfl), free(csrc), free(obj), free(lib), free(so), free(log);
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

/* FNV-1a, 64 bits (NAME.bin's checksum; the library computes it too). */
static uint64_t fnv1a(const uint8_t *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* DIR/NAME.bin: the header (magic, size, checksum of the rest, all
 * little-endian), then the large constants at their offsets (zeros
 * between). Errors: HLO_UNAVAILABLE (cannot write), out of memory. */
static hlo_status write_constants(const emitter *E, const char *dir) {
  const cpu_exec *x = E->x;
  uint8_t *b = calloc(1, (size_t)E->cfile_bytes);
  size_t L = strlen(dir) + strlen(E->name) + 16;
  char *path = malloc(L);
  if (!b || !path) {
    free(b), free(path);
    return oom();
  }
  for (uint32_t i = 0; i < x->nvals; i++)
    if (E->cfile[i] >= 0) memcpy(b + E->cfile[i], x->consts[i]->data, x->consts[i]->nbytes);
  uint64_t size = (uint64_t)E->cfile_bytes;
  uint64_t h = fnv1a(b + ALIGN, (size_t)(size - ALIGN), 14695981039346656037ull);
  memcpy(b, "HLOAOTC1", 8);
  for (int k = 0; k < 8; k++) b[8 + k] = (uint8_t)(size >> (8 * k)), b[16 + k] = (uint8_t)(h >> (8 * k));
  snprintf(path, L, "%s/%s.bin", dir, E->name);
  hlo_status st = NULL;
  FILE *fp = fopen(path, "wb");
  if (!fp) st = status_new(HLO_UNAVAILABLE, "cannot write '%s': %s", path, strerror(errno));
  else {
    bool bad = fwrite(b, 1, (size_t)size, fp) != (size_t)size;
    if (fclose(fp) != 0 || bad) st = status_new(HLO_UNAVAILABLE, "cannot write '%s'", path);
  }
  free(b), free(path);
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
  aot_blas blas = AOT_BLAS_CBLAS;
  const char *bn = o->blas ? o->blas : o->no_blas ? "none" : getenv("HLO_AOT_BLAS");
  if (bn && *bn && !parse_blas(bn, &blas)) {
    hlo_status st = status_new(HLO_INVALID_ARGUMENT,
                               "--emit=lib: unknown BLAS '%s' (cblas, openblas, dnnl or none)", bn);
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
    E.blas = blas;
    E.c = &c;
    E.fns = &fns;
    uint32_t nv = x->nvals ? x->nvals : 1, np = x->nprogs ? x->nprogs : 1;
    E.byid = calloc(nv, sizeof *E.byid);
    E.slot = calloc(nv, sizeof *E.slot);
    E.stage = calloc(nv, sizeof *E.stage);
    E.sort_tmp = calloc(nv, sizeof *E.sort_tmp);
    E.gemm_ws = calloc(nv, sizeof *E.gemm_ws);
    E.cfile = calloc(nv, sizeof *E.cfile);
    E.res_of = calloc(nv, sizeof *E.res_of);
    E.same_as = calloc(nv, sizeof *E.same_as);
    E.constants_file = o->constants_file || (getenv("HLO_AOT_CONSTANTS") &&
                                             !strcmp(getenv("HLO_AOT_CONSTANTS"), "file"));
    E.base = calloc(np, sizeof *E.base);
    E.parent_prog = calloc(np, sizeof *E.parent_prog);
    E.parent_step = calloc(np, sizeof *E.parent_step);
    if (!E.byid || !E.slot || !E.stage || !E.sort_tmp || !E.gemm_ws || !E.cfile || !E.res_of || !E.same_as || !E.base || !E.parent_prog || !E.parent_step) st = oom();
  }
  if (!st) {
    index_values(&E, &f->body.block);
    st = plan(&E);
  }
  if (!st) {
    E.march = march_of(o);
    st = emit_files(&E, !strcmp(path, "-") ? "<stdin>" : path, &h);
  }
  if (!st) st = path_make_dirs(out_dir, 0777);
  if (!st) st = write_file(out_dir, name, ".h", &h);
  if (!st) st = write_file(out_dir, name, ".c", &c);
  if (!st && E.cfile_bytes) st = write_constants(&E, out_dir);
  if (!st && !o->no_build) st = build(out_dir, name, o, E.blas);
  free(E.byid), free(E.slot), free(E.stage), free(E.sort_tmp), free(E.gemm_ws), free(E.cfile), free(E.res_of), free(E.same_as), free(E.base), free(E.parent_prog), free(E.parent_step);
  sb_free(&c);
  sb_free(&h);
  sb_free(&fns);
  cpu_exec_destroy(x);
  interp_destroy(it);
  hlo_module_destroy(m);
  free(name);
  return st;
}
