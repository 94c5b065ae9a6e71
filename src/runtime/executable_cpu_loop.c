/* executable_cpu_loop.c — stablehlo.while on FIXED buffers: the CPU
 * backend's path for loops whose cond and body hold only native steps.
 *
 * run_while (executable_cpu_run.c) moves tensors: each iteration binds the
 * carried values, runs each step through run_step (its buffers looked up
 * by value, its outputs allocated or taken from a spare), reads the
 * predicate, and hands the results on with their references. That costs
 * ~75 ns an iteration on a scalar loop (while_collatz: 111 iterations, 8.4
 * us a run, XLA:CPU 9 us), which is all of the loop's time. Here, at the
 * loop's entry, every buffer that a step of the cond or the body reads or
 * writes is resolved ONCE to a pointer (for both parities of the
 * double-buffered state below), so an iteration is only the steps' calls
 * (a kernel through the backend's launch, a GEMM, a data-movement copy),
 * one predicate load, and the copies of results that do not land in their
 * slot by themselves. XLA:CPU's while thunk does the same with its buffer
 * assignment's fixed slices.
 *
 * Carried value i lives in a SLOT:
 *   PASS     the body returns argument i unchanged: nothing writes the
 *            slot, so it is the operand's own data when that is a tensor
 *            of the run's own (else a buffer, filled once);
 *   INPLACE  the body writes result i over argument i (HOME_CARRIED: the
 *            buffer assignment's chain, executable_cpu_buffers.c
 *            plan_carried): one buffer, written in place;
 *   DOUBLE   any other result: two buffers; an iteration reads one (cur)
 *            and makes the next state in the other (nxt). A body step
 *            whose output is result i (HOME_HEAP) writes it straight into
 *            nxt; a result that lies elsewhere (an arena temporary, an
 *            argument, a constant, an outer value) is copied there after
 *            the body.
 * A slot's (first) buffer is the while's result slot in the arena where
 * buffer assignment put the result there (as run_while uses it), else
 * memory of the loop's own: at most FIXED_OWN_MAX bytes in all, so that a
 * loop of large state, where dispatch is a small part of the time, keeps
 * run_while's path (which takes over dying operands instead of copying).
 *
 * Not taken (*ran false; run_while runs the loop): a device backend,
 * --check or --profile (they work per step), a step of another kind in
 * either region (a nested loop or case, an interpreted op, a convolution,
 * a window op, a sort), a value with no fixed buffer (a body value in a
 * heap allocation that is not a result), a result that reads an argument
 * another result writes in place, a non-static carried type, or
 * HLO_WHILE_FIXED=0 in the environment (for A/B timing and tests). */
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "ir/element.h"
#include "passes/passes.h" /* WHILE_KNOWN_TRIP_COUNT */
#include "runtime/executable_cpu_internal.h"

/* The most bytes of state the loop allocates itself (see above). */
#define FIXED_OWN_MAX ((size_t)1 << 20)
/* Alignment of each buffer of the loop's own memory. */
#define FIXED_ALIGN 64

enum { SLOT_PASS, SLOT_INPLACE, SLOT_DOUBLE };

/* One step of the cond or the body, with its buffers per parity. */
typedef struct fixed_step {
  const step *s;
  void **bufs[2]; /* its inputs, then its outputs */
} fixed_step;

/* A result copied into its slot's next buffer after the body. */
typedef struct fixed_copy {
  void *src[2], *dst[2];
  size_t bytes;
} fixed_copy;

typedef struct fixed_loop {
  cpu_exec *x;
  const step *s;
  tensor *const *in;        /* the while's operands, then its captured values */
  const hlo_block *cb, *bb; /* the cond's and the body's blocks */
  uint32_t n;               /* carried values */
  uint8_t *kind;            /* per slot: SLOT_* */
  size_t *bytes;            /* per slot */
  bool *direct;             /* per slot: PASS over the operand's own data */
  void **slot[2];           /* slot[p][i]: carried value i's buffer read in parity p */
  fixed_step *steps;        /* the cond's (ncond), then the body's */
  uint32_t nsteps, ncond;
  fixed_copy *copies;
  uint32_t ncopies;
  const void *flag[2];      /* the cond's result, per parity */
  bool flag_i1;
  bool unfit;               /* a value with no fixed buffer was met */
} fixed_loop;

/* Whether the environment turns the path off (HLO_WHILE_FIXED=0). Read
 * once a process. */
static bool fixed_disabled(void) {
  static int state; /* 0 unknown, 1 on, 2 off */
  int v = __atomic_load_n(&state, __ATOMIC_RELAXED);
  if (!v) {
    const char *e = getenv("HLO_WHILE_FIXED");
    v = e && e[0] == '0' ? 2 : 1;
    __atomic_store_n(&state, v, __ATOMIC_RELAXED);
  }
  return v == 2;
}

/* The step of program pi that defines value id. */
static const step *def_of(const cpu_exec *x, uint32_t id) {
  const program *p = &x->progs[x->prog_of[id]];
  return x->def_step[id] < p->nsteps ? &p->steps[x->def_step[id]] : NULL;
}

/* The buffer of value v in parity p, or NULL (and L->unfit) when it has
 * no fixed one. */
static void *fixed_ptr(fixed_loop *L, const hlo_value *v, int p) {
  cpu_exec *x = L->x;
  void *r = NULL;
  if (v->id >= x->nvals) goto unfit;
  const hlo_block *blk = v->def ? v->def->parent : v->block;
  if (blk != L->cb && blk != L->bb) { /* an outer value: bound for the whole loop */
    for (uint32_t k = 0; k < L->s->nin; k++)
      if (L->s->in[k] == v) return L->in[k]->data;
    r = value_data(x, v);
    if (!r) goto unfit;
    return r;
  }
  if (!v->def) {
    if (v->index >= L->n) goto unfit;
    return L->slot[p][v->index];
  }
  if (x->consts[v->id]) return x->consts[v->id]->data;
  if (v->def->opcode == OP_CONSTANT && x->home[v->id] != HOME_ARENA) {
    /* a constant a region returns: made once (a large splat filled at run
     * time, STEP_FILL, lies in the arena: below) */
    hlo_status st = cpu_make_constant(x, v);
    if (st || !x->consts[v->id]) {
      hlo_status_free(st);
      goto unfit;
    }
    return x->consts[v->id]->data;
  }
  switch (x->home[v->id]) {
  case HOME_ARENA:
    r = value_data(x, v);
    break;
  case HOME_CARRIED: /* over the body argument it replaces, in place */
    for (uint32_t i = 0; i < L->n; i++)
      if (L->bb->args[i].id == x->offset[v->id] && L->kind[i] == SLOT_INPLACE)
        r = L->slot[p][i];
    break;
  case HOME_HEAP: {
    const step *d = def_of(x, v->id);
    if (d && d->kind == STEP_ALIAS) return fixed_ptr(L, d->in[0], p); /* its operand's bytes */
    const hlo_op *t = L->bb->last;
    for (uint32_t i = 0; i < L->n && !r; i++) /* a result: into its slot's next buffer */
      if (t->operands[i] == v && L->kind[i] == SLOT_DOUBLE) r = L->slot[p ^ 1][i];
    break;
  }
  default:
    break;
  }
  if (r) return r;
unfit:
  L->unfit = true;
  return NULL;
}

/* Whether step q may run on fixed buffers. */
static bool fixed_kind(const step *q) {
  switch (q->kind) {
  case STEP_KERNEL: case STEP_GEMM: case STEP_ALIAS: case STEP_DSLICE: case STEP_DUS:
  case STEP_PAD: case STEP_GATHER: case STEP_SCATTER: case STEP_FILL:
    return true;
  default:
    return false;
  }
}

/* Slot kinds and sizes; false when a carried value does not fit. */
static bool classify(fixed_loop *L) {
  const cpu_exec *x = L->x;
  const hlo_op *t = L->bb->last;
  for (uint32_t i = 0; i < L->n; i++) {
    const hlo_value *a = &L->bb->args[i], *r = t->operands[i];
    int64_t b = cpu_value_bytes(a);
    if (b <= 0 || a->type->kind != TYPE_TENSOR || cpu_value_bytes(&L->cb->args[i]) != b ||
        cpu_value_bytes(L->s->out[i]) != b || (int64_t)L->in[i]->nbytes != b)
      return false;
    L->bytes[i] = (size_t)b;
    if (r == a) L->kind[i] = SLOT_PASS;
    else if (r->id < x->nvals && x->home[r->id] == HOME_CARRIED && x->offset[r->id] == a->id)
      L->kind[i] = SLOT_INPLACE;
    else L->kind[i] = SLOT_DOUBLE;
  }
  for (uint32_t i = 0; i < L->n; i++) {
    const hlo_value *r = t->operands[i];
    /* the same in-place value twice, or one read after its slot is
     * written: their bytes are gone by the end of the body */
    for (uint32_t k = 0; k < i; k++)
      if (t->operands[k] == r && L->kind[k] == SLOT_INPLACE) return false;
    if (r->id < x->nvals && x->home[r->id] == HOME_CARRIED && L->kind[i] != SLOT_INPLACE)
      return false;
    if (!r->def && r->block == L->bb && r->index < L->n && r->index != i &&
        L->kind[r->index] == SLOT_INPLACE)
      return false;
  }
  return true;
}

/* The slots' buffers: the while's arena result slot or the loop's own
 * memory (*own, malloc'd, NULL when none is needed); false when the own
 * memory would pass FIXED_OWN_MAX. */
static bool place_slots(fixed_loop *L, uint8_t **own) {
  cpu_exec *x = L->x;
  size_t need = 0;
  for (int pass = 0; pass < 2; pass++) {
    uint8_t *at = pass ? *own : NULL;
    for (uint32_t i = 0; i < L->n; i++) {
      const hlo_value *o = L->s->out[i];
      size_t b = (L->bytes[i] + FIXED_ALIGN - 1) / FIXED_ALIGN * FIXED_ALIGN;
      void *first = x->home[o->id] == HOME_ARENA ? value_data(x, o) : NULL;
      L->direct[i] = L->kind[i] == SLOT_PASS && !first && !L->in[i]->borrowed;
      if (L->direct[i]) first = L->in[i]->data;
      if (!first) {
        first = at;
        if (pass) at += b;
        else need += b;
      }
      void *second = first;
      if (L->kind[i] == SLOT_DOUBLE) {
        second = at;
        if (pass) at += b;
        else need += b;
      }
      if (pass) L->slot[0][i] = first, L->slot[1][i] = second;
    }
    if (!pass) {
      if (need > FIXED_OWN_MAX) return false;
      *own = need ? aligned_alloc(FIXED_ALIGN, need) : NULL;
      if (need && !*own) return false; /* no memory: run_while's path */
    }
  }
  return true;
}

/* Each region step's buffers, the predicate's and the result copies;
 * false (L->unfit) when one has no fixed buffer. bufs: room for both
 * parities of every step's buffers. */
static bool resolve(fixed_loop *L, void **bufs) {
  cpu_exec *x = L->x;
  const program *prog[2] = {&x->progs[L->s->sub[0]], &x->progs[L->s->sub[1]]};
  for (int r = 0; r < 2; r++) {
    for (uint32_t k = 0; k < prog[r]->nsteps; k++) {
      const step *q = &prog[r]->steps[k];
      if (q->elided || q->kind == STEP_ALIAS) {
        /* resolved through its readers; an arena alias shares the slot */
        continue;
      }
      fixed_step *f = &L->steps[L->nsteps++];
      f->s = q;
      for (int p = 0; p < 2; p++) {
        f->bufs[p] = bufs;
        for (uint32_t i = 0; i < q->nin; i++) *bufs++ = fixed_ptr(L, q->in[i], p);
        for (uint32_t i = 0; i < q->nout; i++) *bufs++ = fixed_ptr(L, q->out[i], p);
      }
    }
    if (r == 0) L->ncond = L->nsteps;
  }
  const hlo_value *flag = L->cb->last->operands[0];
  L->flag_i1 = flag->type->dtype == HLO_I1;
  for (int p = 0; p < 2; p++) L->flag[p] = fixed_ptr(L, flag, p);
  const hlo_op *t = L->bb->last;
  for (uint32_t i = 0; i < L->n; i++) {
    if (L->kind[i] != SLOT_DOUBLE) continue;
    fixed_copy c = {.bytes = L->bytes[i]};
    bool needed = false;
    for (int p = 0; p < 2; p++) {
      c.src[p] = fixed_ptr(L, t->operands[i], p);
      c.dst[p] = L->slot[p ^ 1][i];
      needed |= c.src[p] != c.dst[p];
    }
    if (needed) L->copies[L->ncopies++] = c;
  }
  return !L->unfit;
}

/* Runs steps f[0..n) on their buffers of parity p. */
static hlo_status run_fixed(cpu_exec *x, const fixed_step *f, uint32_t n, int p) {
  for (uint32_t k = 0; k < n; k++) {
    const step *q = f[k].s;
    void **b = f[k].bufs[p];
    hlo_status st;
    if (q->kind == STEP_KERNEL) st = x->be->launch(x->mod, q->kernel, b);
    else if (q->kind == STEP_GEMM) st = cpu_run_gemm(x, q, b);
    else st = cpu_run_copy(q, b);
    if (st) return cpu_step_error(st, q);
  }
  return NULL;
}

/* The loop itself: *last gets the parity of the final state. */
static hlo_status iterate(fixed_loop *L, int *last) {
  cpu_exec *x = L->x;
  int64_t trips = op_attr_int(L->s->op, WHILE_KNOWN_TRIP_COUNT, -1);
  int p = 0;
  hlo_status st = NULL;
  for (int64_t iter = 0;; iter++) {
    if (trips >= 0) {
      if (iter >= trips) break;
    } else {
      st = run_fixed(x, L->steps, L->ncond, p);
      if (st) break;
      const uint8_t *f = L->flag[p];
      bool go = L->flag_i1 ? (f[0] & 1) != 0
                           : elem_get_i64(L->cb->last->operands[0]->type->dtype, f, 0) != 0;
      if (!go) break;
    }
    st = run_fixed(x, L->steps + L->ncond, L->nsteps - L->ncond, p);
    if (st) break;
    for (uint32_t c = 0; c < L->ncopies; c++)
      memcpy(L->copies[c].dst[p], L->copies[c].src[p], L->copies[c].bytes);
    p ^= 1;
  }
  *last = p;
  return st;
}

/* The loop's results from the final state (parity p). */
static hlo_status finish(fixed_loop *L, int p, tensor **out) {
  cpu_exec *x = L->x;
  hlo_status st = NULL;
  for (uint32_t i = 0; i < L->n; i++) out[i] = NULL;
  for (uint32_t i = 0; i < L->n && !st; i++) {
    const hlo_value *o = L->s->out[i];
    void *f = L->slot[p][i];
    if (x->home[o->id] == HOME_ARENA) { /* the result's slot (out[i] NULL) */
      void *dst = value_data(x, o);
      if (!dst) st = status_at(HLO_INTERNAL, &L->s->op->loc, "while: result %u has no buffer", i);
      else if (dst != f) memcpy(dst, f, L->bytes[i]);
    } else if (L->direct[i]) {
      out[i] = tensor_retain(L->in[i]);
    } else {
      st = tensor_create_uninit(o->type, &L->s->op->loc, &out[i]);
      if (!st) memcpy(out[i]->data, f, L->bytes[i]);
    }
  }
  if (st)
    for (uint32_t i = 0; i < L->n; i++) {
      tensor_release(out[i]);
      out[i] = NULL;
    }
  return st;
}

hlo_status cpu_run_while_fixed(cpu_exec *x, const step *s, tensor *const *in, tensor **out,
                               bool *ran) {
  *ran = false;
  if (x->dev || x->check || x->profile || s->nsub != 2 || fixed_disabled()) return NULL;
  const program *pc = &x->progs[s->sub[0]], *pb = &x->progs[s->sub[1]];
  uint32_t n = s->op->num_operands, nbufs = 0;
  if (!n || s->nout != n || s->nin < n) return NULL;
  for (int r = 0; r < 2; r++) {
    const program *p = r ? pb : pc;
    for (uint32_t k = 0; k < p->nsteps; k++) {
      if (!fixed_kind(&p->steps[k])) return NULL;
      nbufs += 2 * (p->steps[k].nin + p->steps[k].nout);
    }
  }
  uint32_t nsteps = pc->nsteps + pb->nsteps;
  /* one allocation for the plan: slots, steps, copies, buffers */
  size_t sz = n * (sizeof(uint8_t) + sizeof(size_t) + sizeof(bool) + 2 * sizeof(void *)) +
              nsteps * sizeof(fixed_step) + n * sizeof(fixed_copy) + nbufs * sizeof(void *);
  void **mem = malloc(sz + 64);
  if (!mem) return NULL; /* no memory for the plan: run_while's path */
  fixed_loop L = {.x = x, .s = s, .in = in, .cb = pc->block, .bb = pb->block, .n = n};
  uint8_t *at = (uint8_t *)mem;
  L.slot[0] = (void **)at, at += n * sizeof(void *);
  L.slot[1] = (void **)at, at += n * sizeof(void *);
  L.bytes = (size_t *)at, at += n * sizeof(size_t);
  L.steps = (fixed_step *)at, at += nsteps * sizeof(fixed_step);
  L.copies = (fixed_copy *)at, at += n * sizeof(fixed_copy);
  void **bufs = (void **)at;
  at += nbufs * sizeof(void *);
  L.kind = at, at += n;
  L.direct = (bool *)at;
  uint8_t *own = NULL;
  hlo_status st = NULL;
  if (classify(&L) && place_slots(&L, &own) && resolve(&L, bufs)) {
    *ran = true;
    __atomic_fetch_add(&x->stats.fixed_loop_runs, 1, __ATOMIC_RELAXED);
    /* the state's first buffers from the operands (a fill, a copy) */
    for (uint32_t i = 0; i < n && !st; i++)
      if (!L.direct[i]) st = cpu_init_loop_state(x, s->in[i], in[i], NULL, L.slot[0][i], L.bytes[i]);
    int last = 0;
    if (!st) st = iterate(&L, &last);
    if (!st) st = finish(&L, last, out);
  }
  free(own);
  free(mem);
  return st;
}
