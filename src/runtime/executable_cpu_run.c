/* executable_cpu_run.c — running the CPU backend's programs
 * (executable_cpu_internal.h): each step on its buffers (kernels and
 * library calls by pointer, interpreter thunks on tensors that borrow arena
 * slots), while/case/if by running their regions' programs, --check and the
 * per-step profile. On a device_memory backend (x->dev set) native steps go
 * through run_device_step (device pointers for kernels and library calls,
 * the host mirror for data movement) and every host access of a buffer
 * (interpreter thunks, predicates, copies of results) first downloads what
 * is stale (executable_cpu_device.c); with x->dev NULL each such hook is
 * one untaken branch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/element.h"
#include "support/arena.h"
#include "passes/passes.h" /* WHILE_KNOWN_TRIP_COUNT */
#include "runtime/executable_cpu_internal.h"

/* Reference rules of x->vals during a run: a block argument's entry
 * (HOME_ARG) is LENT, bound without a reference by whoever runs the
 * program (cpu_exec_run's caller, run_while's carried values), so it is
 * cleared, never released; every other entry holds a reference of the
 * run. A while body's result written over its carried value in place
 * (HOME_CARRIED) has no entry: its data is that block argument's. */

/* The scratch of step s (a convolution's): in its program's arena or in
 * a result's allocation (scratch_in); NULL when it has none. */
static inline void *step_scratch(const cpu_exec *x, const step *s) {
  if (s->scratch_bytes <= 0 || !s->nout) return NULL;
  if (s->scratch_in) {
    const tensor *ht = x->vals[s->scratch_in - 1];
    return ht ? ht->data + s->scratch_offset : NULL;
  }
  const program *p = &x->progs[x->prog_of[s->out[0]->id]];
  return p->arena ? p->arena + s->scratch_offset : NULL;
}

/* Whether p points into the executable's arena (program 0's, which holds
 * every region's): a tensor over it that is bound as a carried value is a
 * while loop's state slot (run_while), which the loop may write. */
static inline bool in_arena(const cpu_exec *x, const void *p) {
  const uint8_t *a = x->progs[0].arena, *b = p;
  if (a && b >= a && b < a + x->progs[0].temp_bytes) return true;
  /* the results' allocations that hold arena buffers (place_in_results) */
  for (uint32_t h = 0; h < x->nresult_homes; h++) {
    const tensor *t = x->vals[x->result_homes[h]->id];
    if (t && b >= t->data && b < t->data + t->nbytes) return true;
  }
  return false;
}

/* Drops the run's entry of value id (a lent one is only cleared). */
/* Whether t may become a spare: a small heap tensor nothing else holds. */
static inline bool spare_fits(const cpu_exec *x, uint32_t id, const tensor *t) {
  return x->spare && !x->spare[id] && !t->borrowed && !t->device && !t->num_tuple &&
         t->nbytes <= SPARE_MAX_BYTES && __atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) == 1;
}

/* A while loop's carried tensor t, replaced by the next iteration's: kept
 * as the spare of the body result `id` that makes it (the next iteration's
 * body writes there) when it fits, else released. */
static void retire_carried(cpu_exec *x, uint32_t id, tensor *t) {
  if (t && id < x->nvals && spare_fits(x, id, t)) x->spare[id] = t;
  else tensor_release(t);
}

/* Drops the run's reference to value id. A small heap tensor that nothing
 * else holds is kept as the value's spare (x->spare: taken back by the
 * next native step defining it, run_native_step) instead of freed. */
static inline void drop_val(cpu_exec *x, uint32_t id) {
  tensor *t = x->vals[id];
  if (!t) return;
  x->vals[id] = NULL;
  if (x->home[id] == HOME_ARG) return;
  if (spare_fits(x, id, t)) x->spare[id] = t;
  else tensor_release(t);
}

static hlo_status no_buffer(const hlo_op *op, const hlo_value *v) {
  return status_at(HLO_INTERNAL, &op->loc, "cpu executable: value %%%s has no buffer",
                   v->name ? v->name : "?");
}

/* v as an interpreter tensor: its own, or (arena values) a new wrapper
 * over its slot, which *wrapped says to release after use. */
static hlo_status get(cpu_exec *x, const hlo_op *op, const hlo_value *v, tensor **out,
                      bool *wrapped) {
  *wrapped = false;
  if (v->id < x->nvals && !x->vals[v->id] && !x->consts[v->id] && v->def &&
      v->def->opcode == OP_CONSTANT)
    HLO_TRY(cpu_make_constant(x, v)); /* a kernel's immediate, read by --check */
  tensor *t = v->id < x->nvals ? value_tensor(x, v->id) : NULL;
  if (!t && v->id < x->nvals && x->home[v->id] == HOME_ARENA) {
    void *data = value_data(x, v);
    t = data ? tensor_wrap(v->type, data) : NULL;
    if (!t && data) return cpu_oom();
    *wrapped = t != NULL;
  }
  if (!t) return no_buffer(op, v);
  *out = t;
  return NULL;
}

/* A new tensor of type t whose data is NOT zeroed: for a buffer that its
 * writer fills whole (a native step's output, a copy): tensor_create_uninit. */
static hlo_status new_uninit(const hlo_type *t, const hlo_loc *loc, tensor **out) {
  return tensor_create_uninit(t, loc, out);
}

/* A copy of t in memory of its own (an arena slot must not escape the step
 * that wrapped it). */
static hlo_status own_copy(cpu_exec *x, const tensor *t, const hlo_loc *loc, tensor **out) {
  tensor *c;
  HLO_TRY(new_uninit(t->type, loc, &c));
  if (t->nbytes && x->dev) {
    /* on the device when t is valid only there (executable_cpu_device.c) */
    hlo_status st = cpu_dev_copy(x, c, c->data, t->data, t->nbytes);
    if (st) {
      tensor_release(c);
      return st;
    }
  } else if (t->nbytes) {
    memcpy(c->data, t->data, t->nbytes);
  }
  *out = c;
  return NULL;
}

/* Replaces *t by a copy in its own memory when it borrows its data. */
static hlo_status unborrow(cpu_exec *x, tensor **t, const hlo_loc *loc) {
  if (!*t || !(*t)->borrowed) return NULL;
  tensor *c = NULL;
  hlo_status st = own_copy(x, *t, loc, &c);
  tensor_release(*t);
  *t = c;
  return st;
}

/* The tensors of s->in[0..nin) (wrapping arena slots: wrapped[i]). */
static hlo_status get_inputs(cpu_exec *x, const step *s, tensor **in, bool *wrapped) {
  hlo_status st = NULL;
  for (uint32_t i = 0; i < s->nin && !st; i++) st = get(x, s->op, s->in[i], &in[i], &wrapped[i]);
  return st;
}

static void put_inputs(const step *s, tensor **in, const bool *wrapped) {
  for (uint32_t i = 0; i < s->nin; i++)
    if (wrapped[i]) tensor_release(in[i]);
}

static hlo_status run_interp_step(cpu_exec *x, const step *s, tensor **in, bool *wrapped,
                                  tensor **out) {
  hlo_status st = get_inputs(x, s, in, wrapped);
  /* a device backend: the step runs on the host mirror */
  for (uint32_t i = 0; x->dev && i < s->nin && !st; i++) st = cpu_dev_tensor_host(x, in[i]);
  if (!st) st = interp_run_op(x->it, s->op, s->in, in, s->nin, out);
  for (uint32_t i = 0; i < s->nout && !st; i++) st = unborrow(x, &out[i], &s->op->loc);
  for (uint32_t i = 0; x->dev && i < s->nout && !st; i++) {
    bool same = false; /* an input handed back as is (unchanged) */
    for (uint32_t j = 0; j < s->nin && !same; j++) same = in[j] == out[i];
    if (!same) st = cpu_dev_tensor_wrote(x, out[i]);
  }
  put_inputs(s, in, wrapped);
  return st;
}

/* Whether a step kind runs on the backend (on a device backend: on device
 * pointers); the other native kinds are host steps (executable_cpu_copy.c). */
static inline bool step_on_device(step_kind k) {
  return k == STEP_KERNEL || k == STEP_GEMM || k == STEP_CONV || k == STEP_WINDOW ||
         k == STEP_SORT;
}

static hlo_status native_call(cpu_exec *x, const step *s, void **bufs, void *scratch);

/* The most operands of a copy step (dynamic_update_slice of rank 16). */
enum { COPY_MAX_IN = 18 };

/* The first operand of copy step s that it reads as a scalar on the host
 * (start indices, pad's value): dynamic_slice's from 1,
 * dynamic_update_slice's from 2, pad's 1; gather's and scatter's none
 * (s->nin). */
static inline uint32_t copy_first_scalar(const step *s) {
  if (s->kind == STEP_GATHER || s->kind == STEP_SCATTER)
    return s->nin; /* their indices stay on the device */
  return s->kind == STEP_DUS ? 2 : 1;
}

/* run_device_step for a copy step that runs on the backend's copy_box
 * (cpu_copy_on_backend): its scalar operands downloaded (a few bytes), its
 * array operands uploaded where stale and its result valid on the device
 * only, the boxes enqueued on device pointers. dynamic_update_slice in
 * place (the result in the operand's memory) stays in place: the same
 * host memory has the same device memory. */
static __attribute__((noinline)) hlo_status run_device_copy(cpu_exec *x, const step *s,
                                                            void **bufs, tensor **out) {
  hlo_status st = NULL;
  void *host[COPY_MAX_IN];
  /* start indices read on the device need no download */
  uint32_t first = cpu_copy_indices_on_device(x->be, s) ? s->nin : copy_first_scalar(s);
  for (uint32_t i = 0; i < s->nin && !st; i++) {
    size_t n = cpu_dev_value_bytes(x, s->in[i]);
    host[i] = bufs[i];
    if (i >= first) st = cpu_dev_host_in(x, bufs[i], n);
    else st = cpu_dev_in(x, value_tensor(x, s->in[i]->id), bufs[i], n, &bufs[i]);
  }
  if (!st) {
    const hlo_value *v = s->out[0];
    tensor *owner = out[0] ? out[0] : value_tensor(x, v->id);
    st = cpu_dev_out(x, owner, bufs[s->nin], cpu_dev_value_bytes(x, v), &bufs[s->nin]);
  }
  if (!st) st = cpu_run_copy_on_backend(x->be, s, host, bufs);
  return cpu_step_error(st, s);
}

/* run_native_step on a device backend (x->dev), its host buffers found
 * (bufs, out): a device step gets device pointers (inputs uploaded where
 * stale, outputs then valid on the device only); dynamic_slice,
 * dynamic_update_slice, pad, fills and the row gather / scatter run on
 * the backend's copy_box / fill_box / gather_rows / scatter_rows where it
 * has them (run_device_copy); the other data-movement
 * steps run on the host mirror (inputs downloaded where stale, outputs
 * then valid on the host only). */
static __attribute__((noinline)) hlo_status run_device_step(cpu_exec *x, const step *s,
                                                            void **bufs, tensor **out) {
  hlo_status st = NULL;
  if (s->nin <= COPY_MAX_IN && s->nout == 1 && cpu_dev_copy_on_backend(x, s))
    return run_device_copy(x, s, bufs, out);
  bool dev = step_on_device(s->kind);
  const program *p = s->nout ? &x->progs[x->prog_of[s->out[0]->id]] : NULL;
  void *scratch = s->kind == STEP_CONV && s->scratch_bytes > 0 && p && p->arena
                      ? p->arena + s->scratch_offset : NULL;
  for (uint32_t i = 0; i < s->nin && !st; i++) {
    size_t n = cpu_dev_value_bytes(x, s->in[i]);
    if (dev) st = cpu_dev_in(x, value_tensor(x, s->in[i]->id), bufs[i], n, &bufs[i]);
    else st = cpu_dev_host_in(x, bufs[i], n);
  }
  for (uint32_t i = 0; i < s->nout && !st && dev; i++) {
    const hlo_value *v = s->out[i];
    tensor *owner = out[i] ? out[i] : value_tensor(x, v->id);
    st = cpu_dev_out(x, owner, bufs[s->nin + i], cpu_dev_value_bytes(x, v), &bufs[s->nin + i]);
  }
  if (!st && dev && scratch) st = cpu_dev_out(x, NULL, scratch, (size_t)s->scratch_bytes, &scratch);
  if (!st) st = native_call(x, s, bufs, scratch);
  for (uint32_t i = 0; i < s->nout && !st && !dev; i++)
    st = cpu_dev_host_out(x, bufs[s->nin + i], cpu_dev_value_bytes(x, s->out[i]));
  return cpu_step_error(st, s);
}

/* Calls step s's kernel, library call or data movement on bufs (scratch:
 * a conv's, device-side on a device backend). */
static hlo_status native_call(cpu_exec *x, const step *s, void **bufs, void *scratch) {
  hlo_status st = NULL;
  if (s->kind == STEP_KERNEL) st = x->be->launch(x->mod, s->kernel, bufs);
  if (s->kind == STEP_GEMM) st = cpu_run_gemm(x, s, bufs);
  if (s->kind == STEP_CONV) {
    if (s->scratch_bytes > 0 && !scratch) st = no_buffer(s->op, s->out[0]);
    else st = x->be->conv(s->conv, bufs[0], bufs[1], bufs[2], scratch);
  }
  if (s->kind == STEP_WINDOW) {
    if (s->op->opcode == OP_REDUCE_WINDOW)
      st = x->be->reduce_window(s->win, bufs, bufs + s->nin);
    else
      st = x->be->select_and_scatter(s->win, bufs[0], bufs[1], bufs[2], bufs[3]);
  }
  if (s->kind == STEP_SORT) st = x->be->sort(s->sort, bufs, bufs + s->nin);
  if (s->kind >= STEP_DSLICE) st = cpu_run_copy(s, bufs);
  return st;
}

/* A kernel or library call: inputs and arena outputs by pointer; heap
 * outputs (a program's results) made here. Sets every out[0..nout) (NULL:
 * no tensor). */
static hlo_status run_native_step(cpu_exec *x, const step *s, void **bufs, tensor **out) {
  hlo_status st = NULL;
  for (uint32_t i = 0; i < s->nin && !st; i++) {
    bufs[i] = value_data(x, s->in[i]);
    if (!bufs[i]) st = no_buffer(s->op, s->in[i]);
  }
  for (uint32_t i = 0; i < s->nout; i++) {
    out[i] = NULL;
    if (st) continue;
    const hlo_value *v = s->out[i];
    tensor *carried = x->home[v->id] == HOME_CARRIED ? x->vals[x->offset[v->id]] : NULL;
    if (x->home[v->id] == HOME_ARENA) {
      bufs[s->nin + i] = value_data(x, v);
      if (!bufs[s->nin + i]) st = no_buffer(s->op, v);
    } else if (x->nresult_homes && x->vals[v->id] && x->prog_of[v->id] == 0) {
      /* a result's allocation made at the run's start (bind_result_homes):
       * the temporaries it held are dead by now */
      bufs[s->nin + i] = x->vals[v->id]->data;
    } else if (carried && (!carried->borrowed || in_arena(x, carried->data)) &&
               __atomic_load_n(&carried->refcount, __ATOMIC_ACQUIRE) ==
                   1 + (x->dev && cpu_dev_holds(x, carried))) {
      /* the loop's reference only (the body's binding is lent): write over
       * it, leaving the value no entry (value_tensor finds the argument);
       * a loop's state slot (an arena slot, run_while) is written so too */
      bufs[s->nin + i] = carried->data;
    } else if (x->spare && x->spare[v->id]) {
      /* the tensor this value had before (a loop's last iteration): the
       * step writes it whole */
      out[i] = x->spare[v->id];
      x->spare[v->id] = NULL;
      bufs[s->nin + i] = out[i]->data;
    } else {
      st = new_uninit(v->type, &s->op->loc, &out[i]); /* the step writes it whole */
      if (!st) bufs[s->nin + i] = out[i]->data;
    }
  }
  if (!st && x->dev) return run_device_step(x, s, bufs, out);
  if (!st && s->kind == STEP_KERNEL) st = x->be->launch(x->mod, s->kernel, bufs);
  if (!st && s->kind == STEP_GEMM) st = cpu_run_gemm(x, s, bufs);
  if (!st && s->kind == STEP_CONV) {
    void *scratch = step_scratch(x, s);
    if (s->scratch_bytes > 0 && !scratch) st = no_buffer(s->op, s->out[0]);
    else st = x->be->conv(s->conv, bufs[0], bufs[1], bufs[2], scratch);
  }
  if (!st && s->kind == STEP_WINDOW) {
    if (s->op->opcode == OP_REDUCE_WINDOW)
      st = x->be->reduce_window(s->win, bufs, bufs + s->nin);
    else
      st = x->be->select_and_scatter(s->win, bufs[0], bufs[1], bufs[2], bufs[3]);
  }
  if (!st && s->kind == STEP_SORT) st = x->be->sort(s->sort, bufs, bufs + s->nin);
  if (!st && s->kind >= STEP_DSLICE) st = cpu_run_copy(s, bufs);
  return cpu_step_error(st, s);
}

static void release_all(tensor **t, uint32_t n) {
  for (uint32_t i = 0; t && i < n; i++) tensor_release(t[i]);
}

/* Whether while step s may take over operand i's tensor t instead of
 * sharing it: the step is its last reader (it is freed after the step), it
 * is this run's own tensor (not a constant, not borrowed, not a lent
 * block argument), and the step reads it in no other slot (another carried
 * value, or a captured one). */
static bool steals(const cpu_exec *x, const step *s, uint32_t i, const tensor *t) {
  uint32_t id = s->in[i]->id;
  if (id >= x->nvals || x->vals[id] != t || t->borrowed || x->consts[id] ||
      x->home[id] == HOME_ARG)
    return false;
  bool dies = false;
  for (uint32_t k = 0; k < s->nfree; k++) dies |= s->free_ids[k] == id;
  for (uint32_t k = 0; k < s->nin && dies; k++) dies = k == i || s->in[k]->id != id;
  return dies;
}

static hlo_status run_steps(cpu_exec *x, uint32_t pi);
static void release_owned(cpu_exec *x, const program *p);

/* Lends args[0..num_args) to program p's block arguments (no reference:
 * the caller holds them for the run). */
static void bind_args(cpu_exec *x, const program *p, tensor *const *args) {
  for (uint32_t i = 0; i < p->block->num_args; i++)
    if (p->block->args[i].id < x->nvals) x->vals[p->block->args[i].id] = args[i];
}

/* The next value of carried value i after a body run (body program pb,
 * cur: the values it ran on): into nx[i] a new reference, or, *reused,
 * cur[i] itself with its reference (a value passed through in its slot, or
 * written over in place): no reference count moves. A result the body run
 * owns is taken over; a constant, an outer value or a borrowed one is
 * shared or copied. */
static hlo_status next_carried(cpu_exec *x, const step *s, const hlo_block *blk, uint32_t i,
                               tensor *const *cur, tensor **nx, bool *reused) {
  const hlo_op *term = blk->last;
  const hlo_value *r = term->operands[i];
  uint32_t id = r->id;
  *reused = false;
  for (uint32_t k = 0; k < i; k++)
    if (term->operands[k] == r) { /* the same value twice: share it */
      nx[i] = tensor_retain(nx[k]);
      return NULL;
    }
  if (id < x->nvals && x->home[id] == HOME_ARG && r >= blk->args &&
      r < blk->args + blk->num_args) {
    uint32_t j = (uint32_t)(r - blk->args);
    if (j == i) *reused = true, nx[i] = cur[i];
    else nx[i] = tensor_retain(cur[j]);
    return NULL;
  }
  if (id < x->nvals && x->home[id] == HOME_CARRIED && !x->vals[id] &&
      x->offset[id] == blk->args[i].id) {
    *reused = true; /* written over cur[i] */
    nx[i] = cur[i];
    return NULL;
  }
  if (id < x->nvals && x->vals[id] && x->prog_of[id] == s->sub[1] && x->home[id] != HOME_ARG &&
      !x->vals[id]->borrowed) {
    nx[i] = x->vals[id]; /* the run's reference, taken over */
    x->vals[id] = NULL;
    return NULL;
  }
  tensor *t = NULL;
  bool wrapped = false;
  HLO_TRY(get(x, term, r, &t, &wrapped));
  if (wrapped) {
    hlo_status st = own_copy(x, t, &term->loc, &nx[i]);
    tensor_release(t);
    return st;
  }
  nx[i] = tensor_retain(t);
  return unborrow(x, &nx[i], &term->loc);
}

/* The truth of a while's cond result v (a one-element tensor: checked by
 * run_while), read where it lies (the cond's arena, a tensor, a
 * constant). */
static hlo_status cond_value(cpu_exec *x, const step *s, const hlo_value *v, bool *go) {
  const void *d = value_data(x, v);
  if (!d) { /* a constant the cond returns as is: made on first use */
    tensor *t = NULL;
    bool wrapped = false;
    HLO_TRY(get(x, s->op, v, &t, &wrapped));
    hlo_status st = cpu_dev_tensor_host(x, t);
    *go = !st && elem_get_i64(v->type->dtype, t->data, 0) != 0;
    if (wrapped) tensor_release(t);
    return st;
  }
  if (x->dev) HLO_TRY(cpu_dev_host_in(x, d, (size_t)cpu_value_bytes(v))); /* one small download */
  *go = v->type->dtype == HLO_I1 ? (*(const uint8_t *)d & 1) != 0
                                 : elem_get_i64(v->type->dtype, d, 0) != 0;
  return NULL;
}

/* Whether d is the data of one of the run's arguments (the caller's
 * memory, lent for the whole run: it outlives every value of the run). */
static bool caller_data(const cpu_exec *x, const void *d) {
  const hlo_block *b = x->progs[0].block;
  for (uint32_t i = 0; i < b->num_args; i++) {
    uint32_t id = b->args[i].id;
    if (id < x->nvals && x->vals[id] && x->vals[id]->data == d) return true;
  }
  return false;
}

/* The STEP_FILL that writes value v (a splat constant filled at run time),
 * or NULL. */
static const step *fill_step_of(const cpu_exec *x, const hlo_value *v) {
  if (v->id >= x->nvals || x->home[v->id] != HOME_ARENA) return NULL;
  const program *p = &x->progs[x->prog_of[v->id]];
  const step *q = x->def_step[v->id] < p->nsteps ? &p->steps[x->def_step[v->id]] : NULL;
  return q && q->kind == STEP_FILL && q->nout == 1 && q->out[0] == v ? q : NULL;
}

/* cpu_init_loop_state (executable_cpu_internal.h). */
hlo_status cpu_init_loop_state(cpu_exec *x, const hlo_value *v, const tensor *t, tensor *owner,
                                void *dst, size_t bytes) {
  const step *f = fill_step_of(x, v);
  /* a fill's value (elided: its buffer never written; or not already in
   * place): filled into the state, on the device where the backend can */
  if (f && (f->elided || !(t && t->data == dst))) {
    if (x->dev && cpu_copy_on_backend(x->be, f)) { /* filled on the device */
      void *d;
      HLO_TRY(cpu_dev_out(x, owner, dst, bytes, &d));
      return cpu_run_copy_on_backend(x->be, f, NULL, &d);
    }
    HLO_TRY(cpu_run_copy(f, &dst));
    return cpu_dev_host_out(x, dst, bytes);
  }
  if (t && t->data == dst) return NULL;
  if (!t || t->nbytes != bytes)
    return status_new(HLO_INTERNAL, "cpu executable: a loop's init value has %zu bytes, its "
                      "state %zu", t ? t->nbytes : 0, bytes);
  if (bytes && x->dev && x->be->copy_box && v->id < x->nvals && x->consts[v->id] == t) {
    /* a constant (on the device since compile time): copied there, so that
     * a loop whose body runs on the device does not upload its state */
    void *ds, *dd;
    HLO_TRY(cpu_dev_in(x, (tensor *)t, t->data, bytes, &ds));
    HLO_TRY(cpu_dev_out(x, owner, dst, bytes, &dd));
    /* bytes (a backend may move them in wider words: cuda_copy.h) */
    backend_box all = {.rank = 1, .esize = 1, .dims = {(int64_t)bytes}, .dst_strides = {1},
                       .src_strides = {1}};
    return x->be->copy_box(dd, ds, &all);
  }
  if (bytes && x->dev) return cpu_dev_copy(x, owner, dst, t->data, bytes);
  if (bytes) memcpy(dst, t->data, bytes);
  return NULL;
}

/* stablehlo.while: cond and body programs over the loop-carried values
 * (in[0..num_operands); the captured values stay bound where they are).
 * The loop holds one reference per carried value (cur) and lends them to
 * each program run; an iteration moves no reference count unless a value
 * changes tensor, and allocates nothing where the body writes its results
 * in place (HOME_CARRIED) and the cond's result lies in its arena. */
static hlo_status run_while(cpu_exec *x, const step *s, tensor **in, tensor **out) {
  uint32_t n = s->op->num_operands;
  const program *pc = &x->progs[s->sub[0]], *pb = &x->progs[s->sub[1]];
  const hlo_op *ct = pc->block->last, *bt = pb->block->last;
  if (pc->block->num_args != n || pb->block->num_args != n || !ct || ct->num_operands != 1 ||
      !bt || bt->num_operands != n)
    return status_at(HLO_INVALID_ARGUMENT, &s->op->loc, "while: the regions do not take and "
                     "return the %u carried values (cond: one tensor<i1>)", n);
  const hlo_value *flag = ct->operands[0];
  if (flag->type->kind != TYPE_TENSOR || type_num_elements(flag->type) != 1)
    return status_at(HLO_INVALID_ARGUMENT, &s->op->loc, "while: cond must return one tensor<i1>");
  bool fixed = false; /* a loop of native steps on fixed buffers (executable_cpu_loop.c) */
  hlo_status fst = cpu_run_while_fixed(x, s, in, out, &fixed);
  if (fixed || fst) return fst;
  enum { SMALL = 16 };
  tensor *cur_small[2 * SMALL];
  bool reused_small[SMALL];
  size_t nn = n ? n : 1;
  tensor **cur = n <= SMALL ? cur_small : calloc(2 * nn, sizeof *cur);
  bool *reused = n <= SMALL ? reused_small : calloc(nn, sizeof *reused);
  if (!cur || !reused) {
    if (cur != cur_small) free(cur);
    if (reused != reused_small) free(reused);
    return cpu_oom();
  }
  tensor **nx = cur + nn;
  for (uint32_t i = 0; i < n; i++) cur[i] = NULL; /* released on an error below */
  hlo_status st = NULL;
  for (uint32_t i = 0; i < n && !st; i++) {
    const hlo_value *o = s->out[i];
    if (x->home[o->id] == HOME_ARENA) {
      /* the loop's state slot: initialised once, here */
      void *dst = value_data(x, o);
      if (!dst) st = no_buffer(s->op, o);
      else st = cpu_init_loop_state(x, s->in[i], in[i], NULL, dst, in[i]->nbytes);
      if (!st) cur[i] = tensor_wrap(o->type, dst);
      if (!st && !cur[i]) st = cpu_oom();
      continue;
    }
    const hlo_value *r = pb->block->last->operands[i];
    if (x->home[r->id] == HOME_CARRIED && !steals(x, s, i, in[i]) &&
        fill_step_of(x, s->in[i])) {
      /* written in place from a splat: a fill, not a copy */
      st = new_uninit(o->type, &s->op->loc, &cur[i]);
      if (!st) st = cpu_init_loop_state(x, s->in[i], in[i], cur[i], cur[i]->data, cur[i]->nbytes);
      continue;
    }
    if (steals(x, s, i, in[i])) {
      /* the operand dies here: the loop takes this program's reference,
       * so the body may write over it from the first iteration on */
      cur[i] = in[i];
      x->vals[s->in[i]->id] = NULL;
      continue;
    }
    cur[i] = tensor_retain(in[i]);
    /* the caller's argument data (lent for the whole run, never written)
     * that the body passes through unchanged is not copied; any other
     * borrowed value (an arena slot, another tensor's bytes) is */
    if (r != &pb->block->args[i] || !caller_data(x, cur[i]->data))
      st = unborrow(x, &cur[i], &s->op->loc);
  }
  /* a known trip count (passes/while_loop_trip_count.c): the condition,
   * constants and one compare, is not evaluated (no predicate download on
   * a device backend) */
  int64_t trips = op_attr_int(s->op, WHILE_KNOWN_TRIP_COUNT, -1);
  for (int64_t iter = 0; !st; iter++) {
    bool go = false;
    if (trips >= 0) {
      go = iter < trips;
    } else {
      bind_args(x, pc, cur);
      st = run_steps(x, s->sub[0]);
      if (!st) st = cond_value(x, s, flag, &go);
      release_owned(x, pc);
    }
    if (st || !go) break;
    bind_args(x, pb, cur);
    st = run_steps(x, s->sub[1]);
    uint32_t made = 0;
    for (; made < n && !st; made++)
      st = next_carried(x, s, pb->block, made, cur, nx, &reused[made]);
    release_owned(x, pb);
    if (st) {
      for (uint32_t i = 0; i < made; i++)
        if (!reused[i]) tensor_release(nx[i]);
      break;
    }
    for (uint32_t i = 0; i < n; i++) {
      if (!reused[i]) retire_carried(x, pb->block->last->operands[i]->id, cur[i]);
      cur[i] = nx[i];
    }
  }
  for (uint32_t i = 0; i < n && !st; i++) {
    const hlo_value *o = s->out[i];
    if (x->home[o->id] == HOME_ARENA) {
      /* the result lies in the state slot (out[i] NULL: an arena value) */
      void *dst = value_data(x, o);
      if (cur[i]->data != dst && x->dev) st = cpu_dev_copy(x, NULL, dst, cur[i]->data, cur[i]->nbytes);
      else if (cur[i]->data != dst) memcpy(dst, cur[i]->data, cur[i]->nbytes);
      tensor_release(cur[i]);
      cur[i] = NULL;
    } else if (cur[i]->borrowed && in_arena(x, cur[i]->data)) {
      st = unborrow(x, &cur[i], &s->op->loc); /* another slot's state: must not escape */
    }
  }
  if (st) release_all(cur, n);
  else memcpy(out, cur, n * sizeof *out);
  if (cur != cur_small) free(cur);
  if (reused != reused_small) free(reused);
  return st;
}

/* stablehlo.case (index operand: out of range takes the last branch) and
 * stablehlo.if (true: the first region). Branches take no arguments. */
static hlo_status run_case(cpu_exec *x, const step *s, tensor **in, tensor **out) {
  const tensor *sel = in[0];
  if (sel->type->kind != TYPE_TENSOR || sel->num_elems != 1)
    return status_at(HLO_INVALID_ARGUMENT, &s->op->loc, "the selector is not a scalar");
  HLO_TRY(cpu_dev_tensor_host(x, sel)); /* a device backend: one small download */
  int64_t v = elem_get_i64(sel->type->dtype, sel->data, 0);
  uint32_t b;
  if (s->op->opcode == OP_IF) b = v ? 0 : 1;
  else b = v < 0 || v >= (int64_t)s->nsub ? s->nsub - 1 : (uint32_t)v;
  tensor **res = NULL;
  uint32_t nr = 0;
  HLO_TRY(cpu_run_program(x, s->sub[b], NULL, 0, &res, &nr));
  hlo_status st = NULL;
  if (nr != s->nout)
    st = status_at(HLO_INVALID_ARGUMENT, &s->op->loc, "branch %u returned %u values, expected %u",
                   b, nr, s->nout);
  if (st) release_all(res, nr);
  else memcpy(out, res, nr * sizeof *out);
  free(res);
  return st;
}

static hlo_status run_control_step(cpu_exec *x, const step *s, tensor **in, bool *wrapped,
                                   tensor **out) {
  hlo_status st = get_inputs(x, s, in, wrapped);
  if (!st) st = s->kind == STEP_WHILE ? run_while(x, s, in, out) : run_case(x, s, in, out);
  put_inputs(s, in, wrapped);
  return st;
}

/* A reshape or same-width bitcast: an arena result already holds the
 * bytes (it shares its operand's slot); any other result borrows the
 * operand's data in a tensor of its own type (the operand outlives it:
 * plan_frees). */
static hlo_status run_alias_step(cpu_exec *x, const step *s, tensor **out) {
  const hlo_value *v = s->out[0];
  if (x->home[v->id] == HOME_ARENA) return NULL;
  void *data = value_data(x, s->in[0]);
  if (!data) return no_buffer(s->op, s->in[0]);
  out[0] = tensor_wrap(v->type, data);
  return out[0] ? NULL : cpu_oom();
}

/* Binds the outputs out[0..nout) of step s (a NULL one: none) to their
 * values, or releases them after an error. */
static void store_outputs(cpu_exec *x, const step *s, tensor **out, hlo_status st) {
  for (uint32_t i = 0; i < s->nout; i++) {
    uint32_t id = s->out[i]->id;
    if (!st && id < x->nvals && out[i]) {
      tensor_release(x->vals[id]);
      x->vals[id] = out[i];
    } else {
      tensor_release(out[i]);
    }
  }
}

static hlo_status run_step(cpu_exec *x, const step *s) {
  enum { SMALL = 16 };
  tensor *in_small[SMALL], *out_small[SMALL];
  bool wrapped_small[SMALL];
  void *buf_small[2 * SMALL];
  hlo_status st;
  if (step_is_native(s->kind) && s->nin + s->nout <= 2 * SMALL && s->nout <= SMALL) {
    /* the common case, per iteration of a loop: nothing to clear or free */
    st = run_native_step(x, s, buf_small, out_small);
    store_outputs(x, s, out_small, st);
    return st;
  }
  tensor **in = s->nin <= SMALL ? in_small : calloc(s->nin, sizeof *in);
  bool *wrapped = s->nin <= SMALL ? wrapped_small : calloc(s->nin, sizeof *wrapped);
  tensor **out = s->nout <= SMALL ? out_small : calloc(s->nout, sizeof *out);
  void **bufs = s->nin + s->nout <= 2 * SMALL ? buf_small : calloc(s->nin + s->nout, sizeof *bufs);
  st = in && out && bufs && wrapped ? NULL : cpu_oom();
  for (uint32_t i = 0; out == out_small && i < s->nout; i++) out[i] = NULL;
  for (uint32_t i = 0; wrapped == wrapped_small && i < s->nin; i++) wrapped[i] = false;
  if (!st) {
    switch (s->kind) {
    case STEP_INTERP: st = run_interp_step(x, s, in, wrapped, out); break;
    case STEP_WHILE: case STEP_CASE: st = run_control_step(x, s, in, wrapped, out); break;
    case STEP_ALIAS: st = run_alias_step(x, s, out); break;
    default: st = run_native_step(x, s, bufs, out); break;
    }
  }
  if (out) store_outputs(x, s, out, st);
  if (in != in_small) free(in);
  if (wrapped != wrapped_small) free(wrapped);
  if (out != out_small) free(out);
  if (bufs != buf_small) free(bufs);
  return st;
}

/* ------------------------------------------------------------- --check */

/* The tolerance of element type dt for --check (cpu_exec_check). */
static double check_rtol(hlo_dtype dt) {
  switch (dt) {
  case HLO_F64: case HLO_C128: return 1e-10;
  case HLO_F32: case HLO_C64: return 1e-4;
  case HLO_BF16: case HLO_F16: return 2e-2;
  default: return dtype_class(dt) == HLO_CLASS_FLOAT ? 0.25 : 0;
  }
}

/* Compares the compiled value (data) with the interpreter's (want); on a
 * difference beyond check_rtol, a message naming the element. */
static bool check_close(const hlo_type *t, const void *data, const tensor *want, char *why,
                        size_t nwhy) {
  hlo_dtype dt = t->dtype;
  int64_t n = want->num_elems;
  bool fl = dtype_class(dt) == HLO_CLASS_FLOAT;
  double rtol = check_rtol(dt), scale = 0;
  if (dt == HLO_C64 || dt == HLO_C128) {
    fl = true;
    dt = dt == HLO_C64 ? HLO_F32 : HLO_F64;
    n *= 2;
  }
  for (int64_t i = 0; fl && i < n; i++) {
    double b = fabs(elem_get_f64(dt, want->data, i));
    if (b > scale && !isinf(b)) scale = b;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!fl || rtol == 0) {
      if (elem_get_bits(dt, data, i) != elem_get_bits(dt, want->data, i)) {
        snprintf(why, nwhy, "element %lld: bits 0x%llx, the interpreter's 0x%llx", (long long)i,
                 (unsigned long long)elem_get_bits(dt, data, i),
                 (unsigned long long)elem_get_bits(dt, want->data, i));
        return false;
      }
      continue;
    }
    double a = elem_get_f64(dt, data, i), b = elem_get_f64(dt, want->data, i);
    if (a == b || (isnan(a) && isnan(b))) continue;
    double tol = rtol * fmax(fabs(b), 1e-2 * scale);
    if (!(fabs(a - b) <= tol)) {
      snprintf(why, nwhy, "element %lld: %.9g, the interpreter's %.9g (tolerance %.3g)",
               (long long)i, a, b, tol);
      return false;
    }
  }
  return true;
}

/* The ops inside a fusion, named: "add, exponential, reduce" (cut). */
static void fusion_ops(const hlo_op *op, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  if (op->num_regions != 1) return;
  for (const hlo_op *o = op->regions[0].block.first; o && o != op->regions[0].block.last;
       o = o->next) {
    const char *nm = op_name(o->opcode);
    if (nm && !strncmp(nm, "stablehlo.", 10)) nm += 10;
    int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", nm ? nm : "?");
    if (w < 0 || (size_t)w >= n - len) break;
    len += (size_t)w;
  }
}

/* The interpreter's results of step s's op on the step's inputs, computed
 * BEFORE the step runs (an in-place step overwrites an input): *out gets a
 * malloc'd array of the op's result count. */
static hlo_status check_reference(cpu_exec *x, const step *s, tensor ***out) {
  *out = NULL;
  uint32_t cap = s->op->num_operands + 4, n = 0;
  const hlo_value **vs = malloc(cap * sizeof *vs);
  if (!vs) return cpu_oom();
  for (uint32_t i = 0; i < s->op->num_operands; i++) vs[n++] = s->op->operands[i];
  hlo_status st = cpu_captured(s->op, &vs, &n, &cap);
  tensor **in = st ? NULL : calloc(n ? n : 1, sizeof *in);
  bool *wrapped = st ? NULL : calloc(n ? n : 1, sizeof *wrapped);
  tensor **res = st ? NULL : calloc(s->op->num_results ? s->op->num_results : 1, sizeof *res);
  if (!st && (!in || !wrapped || !res)) st = cpu_oom();
  for (uint32_t i = 0; i < n && !st; i++) st = get(x, s->op, vs[i], &in[i], &wrapped[i]);
  for (uint32_t i = 0; x->dev && i < n && !st; i++) st = cpu_dev_tensor_host(x, in[i]);
  if (!st) st = interp_run_op(x->it, s->op, vs, in, n, res);
  for (uint32_t r = 0; r < s->op->num_results && !st; r++) st = unborrow(x, &res[r], &s->op->loc);
  for (uint32_t i = 0; in && i < n; i++)
    if (wrapped[i]) tensor_release(in[i]);
  free(vs);
  free(in);
  free(wrapped);
  if (st) {
    release_all(res, s->op->num_results);
    free(res);
    return st;
  }
  *out = res;
  return NULL;
}

/* Compares what step s wrote with the interpreter's results `want` (freed
 * here). Errors: HLO_FAILED_CHECK located at the op, naming the step, the
 * kernel and the fused ops. */
static hlo_status check_step(cpu_exec *x, const step *s, uint32_t pi, uint32_t index,
                             tensor **want) {
  hlo_status st = NULL;
  for (uint32_t r = 0; r < s->op->num_results && !st; r++) {
    const hlo_value *v = &s->op->results[r];
    void *data = value_data(x, v);
    char why[256];
    if (!data || !want[r] || want[r]->type->kind != TYPE_TENSOR) continue;
    if (x->dev && (st = cpu_dev_host_in(x, data, want[r]->nbytes))) break;
    if (check_close(v->type, data, want[r], why, sizeof why)) continue;
    char ops[160];
    fusion_ops(s->op, ops, sizeof ops);
    const hlo_attr *kind = op_attr(s->op, "kind");
    bool has_kind = kind && kind->kind == ATTR_STRING;
    const char *nm = op_name(s->op->opcode);
    st = status_at(HLO_FAILED_CHECK, &s->op->loc,
                   "--check: step %u of program %u (%s%s%s%s) differs from the interpreter: "
                   "result %u %s", index, pi, s->kind == STEP_GEMM ? "BLAS gemm, " : "",
                   nm ? nm : "?", has_kind ? " kind=" : "", has_kind ? kind->u.str.s : "", r, why);
    if (s->kind == STEP_KERNEL && x->dump_dir)
      status_note(st, "compiled as kernel k%u: `void k%u(` in %s/*.c; the fused module: the last "
                  "%s/*.fusion.after.mlir", s->kernel, s->kernel, x->dump_dir, x->dump_dir);
    else if (s->kind == STEP_KERNEL)
      status_note(st, "compiled as kernel k%u (run with --dump-to DIR to see its C and the fused "
                  "module)", s->kernel);
    if (ops[0]) status_note(st, "the fused ops: %s", ops);
  }
  release_all(want, s->op->num_results);
  free(want);
  return st;
}

/* The test hook of --check (tests/suite_cli.sh proves --check catches a
 * wrong kernel): with HLO_CHECK_CORRUPT=K in the environment, the first
 * element of kernel K's first output is negated (or incremented, when it
 * is 0 or not a float) after the kernel runs. Read only in --check runs. */
static void corrupt_for_test(cpu_exec *x, const step *s) {
  const char *e = getenv("HLO_CHECK_CORRUPT");
  if (!e || s->kind != STEP_KERNEL || strtol(e, NULL, 10) != (long)s->kernel || !s->nout) return;
  void *d = value_data(x, s->out[0]);
  hlo_dtype dt = s->out[0]->type->dtype;
  if (!d || s->out[0]->type->kind != TYPE_TENSOR || type_num_elements(s->out[0]->type) <= 0) return;
  size_t nb = (size_t)cpu_value_bytes(s->out[0]);
  if (x->dev && cpu_dev_host_in(x, d, nb)) return;
  if (dt == HLO_F32) {
    float v = *(float *)d;
    *(float *)d = v != 0 ? -v : 1.0f;
  } else if (dt == HLO_F64) {
    double v = *(double *)d;
    *(double *)d = v != 0 ? -v : 1.0;
  } else {
    ((uint8_t *)d)[0] ^= 1;
  }
  if (x->dev && cpu_dev_host_out(x, d, nb)) return;
}

/* -------------------------------------------------------------- programs */

/* Makes program 0's arena, and points every region's program at its
 * slice of it (the scratch buffer of its control step). */
static hlo_status make_arenas(cpu_exec *x) {
  program *p0 = &x->progs[0];
  if (p0->arena) return NULL;
  if ((uint64_t)p0->temp_bytes > interp_max_tensor_bytes())
    return status_at(HLO_RESOURCE_EXHAUSTED, &x->f->loc,
                     "the temporaries of @%s need %lld bytes (%.1f GB): over the limit of %.1f GB "
                     "(half this machine's memory)", x->f->name, (long long)p0->temp_bytes,
                     (double)p0->temp_bytes / 1e9, (double)interp_max_tensor_bytes() / 1e9);
  /* never empty: zero-sized values (tensor<3x0xf32>) still need a pointer */
  size_t bytes = p0->temp_bytes > 0 ? ((size_t)p0->temp_bytes + 63) & ~(size_t)63 : 64;
  p0->arena = aligned_alloc(64, bytes);
  if (!p0->arena)
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory for %lld bytes of temporaries",
                      (long long)p0->temp_bytes);
  for (uint32_t pi = 1; pi < x->nprogs; pi++) {
    program *p = &x->progs[pi];
    const program *parent = &x->progs[p->arena_parent];
    p->arena = parent->arena ? parent->arena + p->arena_offset : NULL;
  }
  return x->dev ? cpu_dev_arena(x) : NULL;
}

/* At the start of a run: the allocations of program 0's results that
 * hold temporaries before they are written (x->result_homes,
 * place_in_results), each a new tensor of its value's type bound as that
 * value (the step writing it writes there: run_native_step), and the
 * arenas of the regions whose block lies in one of them pointed there.
 * Errors: out of memory. */
static hlo_status bind_result_homes(cpu_exec *x) {
  if (!x->nresult_homes) return NULL;
  for (uint32_t h = 0; h < x->nresult_homes; h++) {
    const hlo_value *v = x->result_homes[h];
    tensor *t = NULL;
    /* on an error, those bound so far are released with the run's other
     * values (release_owned: they are values of program 0) */
    HLO_TRY(new_uninit(v->type, &v->loc, &t));
    tensor_release(x->vals[v->id]);
    x->vals[v->id] = t;
  }
  for (uint32_t pi = 1; pi < x->nprogs; pi++) {
    program *p = &x->progs[pi];
    const program *parent = &x->progs[p->arena_parent];
    const tensor *ht = p->arena_in ? x->vals[p->arena_in - 1] : NULL;
    if (p->arena_in) p->arena = ht ? ht->data + p->arena_offset : NULL;
    else p->arena = parent->arena ? parent->arena + p->arena_offset : NULL;
  }
  return NULL;
}

/* Releases the values program p owns (its run is over). */
static void release_owned(cpu_exec *x, const program *p) {
  for (uint32_t i = 0; i < p->nowned; i++) drop_val(x, p->owned[i]);
}

/* Runs the steps of program pi (its arguments bound), each followed by
 * the frees after it; --check and the profile per step. On an error the
 * values made so far stay bound (release_owned drops them). */
static hlo_status run_steps(cpu_exec *x, uint32_t pi) {
  program *p = &x->progs[pi];
  hlo_status st = NULL;
  for (uint32_t s = 0; s < p->nsteps && !st; s++) {
    step *q = &p->steps[s];
    if (q->elided) continue; /* a fill its readers do themselves */
    if (!x->profile && !x->check) {
      st = run_step(x, q);
      for (uint32_t i = 0; i < q->nfree && !st; i++) drop_val(x, q->free_ids[i]);
      if (x->dev) cpu_dev_sweep(x);
      continue;
    }
    double t0 = x->profile ? cpu_now_ms() : 0;
    tensor **want = NULL;
    if (x->check && step_is_native(q->kind)) st = check_reference(x, q, &want);
    if (!st) st = run_step(x, q);
    if (want && !st) {
      corrupt_for_test(x, q);
      st = check_step(x, q, pi, s, want);
    } else if (want) {
      release_all(want, q->op->num_results);
      free(want);
    }
    if (x->profile) {
      /* a device backend's launches return before they finish: the
       * step's time is until the device is done with it */
      if (x->dev && !st) st = x->be->synchronize();
      q->prof_ms += cpu_now_ms() - t0;
      q->prof_runs++;
    }
    for (uint32_t i = 0; i < q->nfree && !st; i++) drop_val(x, q->free_ids[i]);
    if (x->dev) cpu_dev_sweep(x);
  }
  return st;
}

hlo_status cpu_run_program(cpu_exec *x, uint32_t pi, tensor *const *args, uint32_t nargs,
                           tensor ***out, uint32_t *nout) {
  *out = NULL;
  *nout = 0;
  program *p = &x->progs[pi];
  const hlo_block *blk = p->block;
  if (nargs != blk->num_args)
    return status_new(HLO_INTERNAL, "cpu executable: program %u takes %u arguments, got %u", pi,
                      blk->num_args, nargs);
  if (pi == 0) HLO_TRY(make_arenas(x));
  bind_args(x, p, args);
  hlo_status st = pi == 0 ? bind_result_homes(x) : NULL;
  if (!st) st = run_steps(x, pi);
  const hlo_op *term = blk->last;
  uint32_t nr = term ? term->num_operands : 0;
  tensor **res = NULL;
  if (!st) {
    res = calloc(nr ? nr : 1, sizeof *res);
    if (!res) st = cpu_oom();
  }
  for (uint32_t i = 0; i < nr && !st; i++) {
    tensor *t = NULL;
    bool wrapped = false;
    st = get(x, term, term->operands[i], &t, &wrapped);
    if (!st && wrapped) {
      st = own_copy(x, t, &term->loc, &res[i]);
      tensor_release(t);
    } else if (!st) {
      res[i] = tensor_retain(t);
      st = unborrow(x, &res[i], &term->loc);
    }
  }
  release_owned(x, p);
  if (st) {
    release_all(res, nr);
    free(res);
    return st;
  }
  *out = res;
  *nout = nr;
  return NULL;
}

void cpu_clear_vals(cpu_exec *x) {
  for (uint32_t i = 0; x->vals && i < x->nvals; i++) {
    if (!x->home || x->home[i] != HOME_ARG) tensor_release(x->vals[i]);
    x->vals[i] = NULL;
  }
}

/* The results of a run cpu_dev_replay replayed (its steps not run): a
 * new tensor of each result type of program 0 (host memory not zeroed: a
 * mirror), handed its device buffer by cpu_dev_replay_result. */
static hlo_status replayed_results(cpu_exec *x, tensor ***out, uint32_t *nout) {
  const hlo_op *term = x->progs[0].block->last;
  uint32_t nr = term ? term->num_operands : 0;
  tensor **res = calloc(nr ? nr : 1, sizeof *res);
  if (!res) return cpu_oom();
  hlo_status st = NULL;
  for (uint32_t i = 0; i < nr && !st; i++) {
    st = new_uninit(term->operands[i]->type, &term->loc, &res[i]);
    if (!st) st = cpu_dev_replay_result(x, res[i]);
  }
  if (st) {
    release_all(res, nr);
    free(res);
    return st;
  }
  *out = res;
  *nout = nr;
  return NULL;
}

hlo_status cpu_exec_run(cpu_exec *x, tensor *const *args, uint32_t n, tensor ***out) {
  *out = NULL;
  const hlo_func *f = x->f;
  if (n != f->num_args)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s takes %u arguments, got %u", f->name,
                     f->num_args, n);
  tensor **res = NULL;
  uint32_t nr = 0;
  bool replayed = false;
  hlo_status st = cpu_dev_begin_run(x, args, n);
  /* a device backend's graph of an earlier run of the same key: launched,
   * the steps skipped (executable_cpu_device.c) */
  if (!st && x->dev) st = cpu_dev_replay(x, &replayed);
  if (!st && replayed) st = replayed_results(x, &res, &nr);
  else if (!st) st = cpu_run_program(x, 0, args, n, &res, &nr);
  if (!st && nr != f->num_results)
    st = status_at(HLO_INTERNAL, &f->loc, "@%s: no return of %u values", f->name, f->num_results);
  if (x->dev) {
    /* the results: left on the device in buffers of their own where they
     * are there (downloaded where not); then the run's other device
     * buffers go */
    for (uint32_t i = 0; i < nr && !st && !replayed; i++) st = cpu_dev_result(x, res[i]);
    if (!st && !replayed) cpu_dev_results_done(x, nr);
    hlo_status sy = x->be->synchronize();
    if (!st) st = sy;
    else hlo_status_free(sy);
  }
  if (!replayed) cpu_clear_vals(x); /* a replay bound none */
  cpu_dev_end_run(x);
  if (st) {
    release_all(res, nr);
    free(res);
    if (hlo_status_code_of(st) == HLO_RESOURCE_EXHAUSTED && !status_loc(st))
      status_note(st, "while running @%s", f->name);
    return st;
  }
  *out = res;
  return NULL;
}

void cpu_exec_check(cpu_exec *x, bool on) { x->check = on; }

/* --------------------------------------------------------------- profile */

void cpu_exec_profile(cpu_exec *x, bool on) {
  x->profile = on;
  for (uint32_t pi = 0; pi < x->nprogs; pi++)
    for (uint32_t s = 0; s < x->progs[pi].nsteps; s++) {
      x->progs[pi].steps[s].prof_ms = 0;
      x->progs[pi].steps[s].prof_runs = 0;
    }
}

static const char *step_kind_name(const step *p) {
  switch (p->kind) {
  case STEP_KERNEL: return "kernel";
  case STEP_GEMM: return "gemm";
  case STEP_CONV: return "conv";
  case STEP_WINDOW: return "window";
  case STEP_SORT: return "sort";
  case STEP_WHILE: return "while";
  case STEP_CASE: return "case";
  case STEP_ALIAS: return "alias";
  case STEP_FILL: return "fill";
  case STEP_DSLICE: case STEP_DUS: case STEP_PAD: case STEP_GATHER: case STEP_SCATTER:
    return "copy";
  default: return "interp";
  }
}

static int by_time_desc(const void *a, const void *b) {
  const step *x = *(const step *const *)a, *y = *(const step *const *)b;
  return x->prof_ms < y->prof_ms ? 1 : x->prof_ms > y->prof_ms ? -1 : 0;
}

void cpu_exec_profile_print(const cpu_exec *x, FILE *out, uint32_t max_rows) {
  uint32_t total_steps = 0;
  for (uint32_t pi = 0; pi < x->nprogs; pi++) total_steps += x->progs[pi].nsteps;
  const program *p0 = &x->progs[0];
  double total = 0;
  uint64_t runs = 0;
  for (uint32_t s = 0; s < p0->nsteps; s++) {
    total += p0->steps[s].prof_ms;
    if (p0->steps[s].prof_runs > runs) runs = p0->steps[s].prof_runs;
  }
  if (!runs) {
    fprintf(out, "profile: no profiled runs\n");
    return;
  }
  const step **order = malloc((total_steps ? total_steps : 1) * sizeof *order);
  uint32_t *prog = malloc((total_steps ? total_steps : 1) * sizeof *prog);
  if (!order || !prog) {
    free(order);
    free(prog);
    return;
  }
  uint32_t k = 0;
  for (uint32_t pi = 0; pi < x->nprogs; pi++)
    for (uint32_t s = 0; s < x->progs[pi].nsteps; s++) order[k++] = &x->progs[pi].steps[s];
  qsort(order, k, sizeof *order, by_time_desc);
  fprintf(out, "profile: %u thunks in %u programs, %.3f ms per run over %llu runs (by time spent; "
          "a while/case row includes the steps of its regions, listed too)\n",
          total_steps, x->nprogs, total / (double)runs, (unsigned long long)runs);
  fprintf(out, "  %-9s %-7s %10s %6s %9s  %-30s %s\n", "step", "kind", "ms/run", "%", "calls/run",
          "op", "where");
  for (uint32_t i = 0; i < k && i < max_rows; i++) {
    const step *q = order[i];
    uint32_t pi = 0;
    while (pi + 1 < x->nprogs && !(q >= x->progs[pi].steps &&
                                   q < x->progs[pi].steps + x->progs[pi].nsteps))
      pi++;
    const char *n = op_name(q->op->opcode);
    if (n && !strncmp(n, "stablehlo.", 10)) n += 10;
    char what[96], where[24];
    if (q->kind == STEP_KERNEL) snprintf(what, sizeof what, "%s (k%u)", n ? n : "?", q->kernel);
    else if (q->kind == STEP_GEMM)
      snprintf(what, sizeof what, "%s %lldx%lldx%lld%s", n ? n : "?", (long long)q->g.m,
               (long long)q->g.n, (long long)q->g.k, q->g.batch > 1 ? " batched" : "");
    else snprintf(what, sizeof what, "%s", n ? n : "?");
    if (q->kind == STEP_GEMM && q->g.batch > 1) {
      size_t len = strlen(what);
      snprintf(what + len, sizeof what - len, " x%lld", (long long)q->g.batch);
    }
    if (q->kind == STEP_GEMM && q->epilogue) { /* what runs on its rows too */
      size_t len = strlen(what);
      snprintf(what + len, sizeof what - len, " +k%u", q->epi_kernel);
      if (q->chain) {
        len = strlen(what);
        snprintf(what + len, sizeof what - len, " +%lldx%lldx%lld", (long long)q->chain->g.m,
                 (long long)q->chain->g.n, (long long)q->chain->g.k);
      }
    }
    snprintf(where, sizeof where, "%u:%u", pi, (unsigned)(q - x->progs[pi].steps));
    fprintf(out, "  %-9s %-7s %10.4f %6.1f %9.4g  %-30s line %u\n", where, step_kind_name(q),
            q->prof_ms / (double)runs, total > 0 ? 100.0 * q->prof_ms / total : 0.0,
            (double)q->prof_runs / (double)runs, what, q->op->loc.line);
  }
  free(order);
  free(prog);
}
