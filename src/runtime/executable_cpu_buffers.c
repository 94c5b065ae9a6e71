/* executable_cpu_buffers.c — liveness and buffer assignment of the CPU
 * backend's programs (executable_cpu_internal.h): which values each step
 * frees, where each value lives (value_home), the arena offsets
 * (buffer_assignment.h's heap simulator), the memory figures, and the
 * buffer assignment report of --dump-to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/print.h"
#include "runtime/buffer_assignment.h"
#include "runtime/executable_cpu_internal.h"
#include "support/path.h"
#include "support/strbuf.h"

/* The values program p defines: its block's arguments and its steps'
 * results. */
static hlo_status list_owned(cpu_exec *x, program *p) {
  uint32_t n = p->block->num_args;
  for (uint32_t s = 0; s < p->nsteps; s++) n += p->steps[s].nout;
  p->owned = malloc((n ? n : 1) * sizeof *p->owned);
  if (!p->owned) return cpu_oom();
  for (uint32_t i = 0; i < p->block->num_args; i++) p->owned[p->nowned++] = p->block->args[i].id;
  for (uint32_t s = 0; s < p->nsteps; s++)
    for (uint32_t i = 0; i < p->steps[s].nout; i++) p->owned[p->nowned++] = p->steps[s].out[i]->id;
  for (uint32_t i = 0; i < p->nowned; i++)
    if (p->owned[i] >= x->nvals)
      return status_new(HLO_INTERNAL, "cpu executable: a value is not numbered (id %u of %u)",
                        p->owned[i], x->nvals);
  return NULL;
}

/* Per step of p, the values it owns whose last reader the step is; never
 * its results (the terminator's operands: they outlive the run) nor
 * constants, nor what `keep` marks (a while body's carried values that a
 * result is written over: held to the end of the run). A value that an
 * alias step (reshape) lends its data to lives as long as the alias is
 * read. */
static hlo_status plan_frees(cpu_exec *x, uint32_t pi, const bool *is_result,
                             const bool *keep) {
  program *p = &x->progs[pi];
  int64_t *last = x->nvals ? malloc(x->nvals * sizeof *last) : NULL;
  if (x->nvals && !last) return cpu_oom();
  for (uint32_t i = 0; i < p->nowned; i++) last[p->owned[i]] = -1;
  for (uint32_t s = 0; s < p->nsteps; s++) {
    const step *q = &p->steps[s];
    for (uint32_t i = 0; i < q->nin; i++) {
      uint32_t id = q->in[i]->id;
      if (id < x->nvals && x->prog_of[id] == pi) last[id] = s;
    }
    for (uint32_t i = 0; i < q->nout; i++) last[q->out[i]->id] = s;
  }
  for (uint32_t s = p->nsteps; s-- > 0;) {
    const step *q = &p->steps[s];
    if (q->kind != STEP_ALIAS) continue;
    uint32_t src = q->in[0]->id, out = q->out[0]->id;
    if (x->prog_of[src] != pi) continue; /* an outer value outlives this program's run */
    if (is_result[out]) last[src] = (int64_t)p->nsteps; /* results are read at the end */
    else if (last[out] > last[src]) last[src] = last[out];
  }
  hlo_status st = NULL;
  for (uint32_t s = 0; s < p->nsteps && !st; s++) {
    step *q = &p->steps[s];
    uint32_t cnt = 0;
    for (uint32_t i = 0; i < p->nowned; i++) {
      uint32_t id = p->owned[i];
      cnt += last[id] == (int64_t)s && !is_result[id] && !x->consts[id] && !keep[id];
    }
    if (!cnt) continue;
    q->free_ids = malloc(cnt * sizeof *q->free_ids);
    if (!q->free_ids) {
      st = cpu_oom();
      break;
    }
    for (uint32_t i = 0; i < p->nowned; i++) {
      uint32_t id = p->owned[i];
      if (last[id] == (int64_t)s && !is_result[id] && !x->consts[id] && !keep[id])
        q->free_ids[q->nfree++] = id;
    }
  }
  free(last);
  return st;
}

/* Whether a and b are static tensor types of the same dims. */
static bool same_dims(const hlo_type *a, const hlo_type *b) {
  if (a->kind != TYPE_TENSOR || b->kind != TYPE_TENSOR || a->rank != b->rank ||
      !type_is_static(a) || !type_is_static(b))
    return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* Whether kernel step q may write its one output over input k: k is the
 * kernel's own choice (q->inplace, executable_cpu.c's inplace_input), or
 * q is a fusion without reductions in which every op that reads input k,
 * directly or through other ops, is elementwise over the shape of that
 * input, and the output has that shape and element size. Every load of
 * the input then reads exactly the element the kernel writes (no layout
 * op re-indexes it), which is inplace_input's rule, decided on the IR for
 * the inputs after the first that qualifies (inplace_input names only
 * that one). XLA: CanShareOperandBufferWithUser for loop fusions. */
static bool kernel_may_overwrite(const step *q, uint32_t k) {
  if (q->kind != STEP_KERNEL || q->nout != 1 || k >= q->nin) return false;
  if (q->inplace == (int32_t)k) return true;
  const hlo_op *f = q->op;
  const hlo_type *to = q->out[0]->type, *ti = q->in[k]->type;
  if (!f || f->opcode != OP_FUSION || f->num_regions != 1 || f->num_results != 1 ||
      !same_dims(to, ti) ||
      hlo_dtype_size(to->dtype) != hlo_dtype_size(ti->dtype) ||
      cpu_value_bytes(q->out[0]) != cpu_value_bytes(q->in[k]))
    return false;
  const hlo_block *b = &f->regions[0].block;
  /* the body's values derived from input k (at most 64: else no) */
  const hlo_value *marks[64];
  uint32_t nm = 0;
  bool found = false;
  for (uint32_t m = 0; m < f->num_operands && m < b->num_args; m++)
    if (f->operands[m]->id == q->in[k]->id) {
      if (nm == 64) return false;
      marks[nm++] = &b->args[m];
      found = true;
    }
  if (!found) return false;
  for (const hlo_op *o = b->first; o; o = o->next) {
    if (o->opcode == OP_REDUCE || o->num_regions) return false;
    bool reads = false;
    for (uint32_t j = 0; j < o->num_operands && !reads; j++)
      for (uint32_t t = 0; t < nm && !reads; t++) reads = o->operands[j] == marks[t];
    if (!reads || o == b->last) continue;
    if (!(op_flags(o->opcode) & OPF_ELEMENTWISE)) return false;
    for (uint32_t j = 0; j < o->num_results; j++) {
      if (!same_dims(o->results[j].type, ti) || nm == 64)
        return false;
      marks[nm++] = &o->results[j];
    }
  }
  return true;
}

/* The state slots of while step s of program pi (while_state_slot) that
 * may be their init value's own slot, so that no copy is made before the
 * loop: the init is an arena value of pi, and
 *   - the body writes the slot (HOME_CARRIED): the init's buffer dies at
 *     the loop and no other slot of the loop nor a captured read uses it,
 *     except other written slots (which copy it before the first
 *     iteration; the first such slot takes the buffer);
 *   - the body passes the value through: the slot is a read-only alias of
 *     the init's buffer (its live range grows), unless a written slot took
 *     that buffer.
 * XLA: copy insertion adds a copy only where a while's init value is
 * shared or live after the loop. */
static void merge_while_state(cpu_exec *x, uint32_t pi, uint32_t s, uint32_t *root) {
  const step *q = &x->progs[pi].steps[s];
  uint32_t n = q->op->num_operands < q->nout ? q->op->num_operands : q->nout;
  const hlo_block *bb = x->progs[q->sub[1]].block;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < n; i++) {
      uint32_t in = q->in[i]->id, out = q->out[i]->id;
      if (x->home[out] != HOME_ARENA || x->prog_of[in] != pi || x->home[in] != HOME_ARENA ||
          root[out] != out)
        continue;
      bool through = bb->last->operands[i] == &bb->args[i];
      if (through != (pass == 1)) continue;
      uint32_t r = root[in];
      bool ok = cpu_value_bytes(q->in[i]) == cpu_value_bytes(q->out[i]) &&
                (through || x->last_step[r] == s);
      for (uint32_t k = 0; k < q->nin && ok; k++) {
        if (k == i) continue;
        bool k_written = k < n && x->home[q->out[k]->id] == HOME_ARENA &&
                         bb->last->operands[k] != &bb->args[k];
        if (through) /* r must not be a written slot's buffer */
          ok = !(k_written && root[q->out[k]->id] == r);
        else if (root[q->in[k]->id] == r) /* another reader of r: a written slot that copies */
          ok = k_written && root[q->out[k]->id] == q->out[k]->id;
      }
      if (!ok) continue;
      root[out] = r;
      if (x->last_step[out] > x->last_step[r]) x->last_step[r] = x->last_step[out];
    }
}

/* Elides each STEP_FILL of program pi whose value only while loops read,
 * each as the init value of carried slots that initialise their own
 * buffers from the fill's op (run_while's init_state: a state slot that
 * is not this buffer, or a result written in place in an allocation of
 * its own): the fill would be written and never read. Its buffer then
 * takes no arena space. */
static void elide_fills(cpu_exec *x, uint32_t pi, const bool *is_result, const uint32_t *root) {
  program *p = &x->progs[pi];
  for (uint32_t s = 0; s < p->nsteps; s++) {
    step *f = &p->steps[s];
    if (f->kind != STEP_FILL || f->nout != 1) continue;
    uint32_t v = f->out[0]->id;
    if (v >= x->nvals || x->home[v] != HOME_ARENA || is_result[v] || root[v] != v) continue;
    bool ok = true, read = false;
    for (uint32_t t = s + 1; t < p->nsteps && ok; t++) {
      const step *q = &p->steps[t];
      uint32_t n = q->op->num_operands < q->nout ? q->op->num_operands : q->nout;
      for (uint32_t k = 0; k < q->nin && ok; k++) {
        uint32_t id = q->in[k]->id;
        if (id >= x->nvals || x->prog_of[id] != pi || x->home[id] != HOME_ARENA || root[id] != v)
          continue;
        read = true;
        if (q->kind != STEP_WHILE || q->nsub != 2 || k >= n || id != v) {
          ok = false;
          break;
        }
        const hlo_block *bb = x->progs[q->sub[1]].block;
        const hlo_value *r = bb->last && k < bb->last->num_operands ? bb->last->operands[k] : NULL;
        uint32_t o = q->out[k]->id;
        if (x->home[o] == HOME_ARENA) ok = root[o] != v;
        else ok = r && k < bb->num_args && r->id < x->nvals && x->home[r->id] == HOME_CARRIED &&
                  x->offset[r->id] == bb->args[k].id;
      }
    }
    f->elided = ok && read;
  }
}

/* Merges the buffers that share bytes (root[id]: the value whose slot it
 * uses, the groups' live ranges joined in last_step[root]):
 *   - alias steps (reshape): the result is the operand's bytes, always;
 *   - in place: a dynamic_update_slice or scatter whose operand dies at it,
 *     or an elementwise kernel whose input (read only at the element being
 *     written) dies at it, writes over that operand (XLA:
 *     CanShareOperandBufferWithUser); the step is marked `aliased`.
 * Only arena values merge (the others keep their own allocations; an
 * alias of one borrows its tensor at run time). */
static void merge_buffers(cpu_exec *x, uint32_t pi, const bool *is_result, uint32_t *root) {
  program *p = &x->progs[pi];
  for (uint32_t s = 0; s < p->nsteps; s++) {
    step *q = &p->steps[s];
    if (q->kind == STEP_WHILE) {
      merge_while_state(x, pi, s, root);
      continue;
    }
    int32_t k = q->kind == STEP_DUS || q->kind == STEP_SCATTER || q->kind == STEP_ALIAS ? 0
                : q->kind == STEP_KERNEL && q->nout == 1                             ? q->inplace
                                                                                     : -1;
    /* a GEMM's epilogue kernel writing its one output over one of its
     * inputs (the product C, or another that dies here): out[1] over
     * in[2 + inplace] (executable_cpu_epilogue.c) */
    uint32_t o = 0;
    if (q->kind == STEP_GEMM && q->epilogue && q->epi_inplace >= 0 && q->epi_nout == 1)
      k = 2 + q->epi_inplace, o = 1;
    /* an elementwise kernel: its own choice first, then any other input
     * it may overwrite (kernel_may_overwrite) */
    uint32_t ncand = q->kind == STEP_KERNEL && q->nout == 1 ? q->nin + 1 : 1;
    for (uint32_t c = 0; c < ncand; c++) {
      int32_t kk = c == 0 ? k : (int32_t)(c - 1);
      if (c > 0 && (kk == k || !kernel_may_overwrite(q, (uint32_t)kk))) continue;
      if (kk < 0 || (uint32_t)kk >= q->nin) continue;
      uint32_t in = q->in[kk]->id, out = q->out[o]->id;
      if (q->kind == STEP_ALIAS && x->prog_of[in] == pi && x->home[root[in]] == HOME_ARENA &&
          x->home[out] != HOME_ARENA) {
        /* an alias that borrows an arena slot in a tensor of its own (a
         * result, or the alias of such an alias): the slot lives as long as
         * the alias is read, to the end when it is a result */
        uint32_t r = root[in];
        root[out] = r;
        int64_t end = is_result[out] ? (int64_t)p->nsteps : x->last_step[out];
        if (end > (int64_t)x->last_step[r]) x->last_step[r] = (uint32_t)end;
        break;
      }
      if (x->prog_of[in] != pi || x->home[in] != HOME_ARENA || x->home[out] != HOME_ARENA)
        continue;
      uint32_t r = root[in];
      if (q->kind != STEP_ALIAS) {
        /* overwriting: nothing else may read the group after this step */
        bool twice = false;
        for (uint32_t i = 0; i < q->nin; i++) twice |= i != (uint32_t)kk && root[q->in[i]->id] == r;
        if (twice || is_result[in] || x->last_step[r] != s ||
            cpu_value_bytes(q->in[kk]) != cpu_value_bytes(q->out[o]))
          continue;
        q->aliased = true;
        if (c > 0) q->inplace = kk;
      }
      root[out] = r;
      if (x->last_step[out] > x->last_step[r]) x->last_step[r] = x->last_step[out];
      break;
    }
  }
}

/* The most interpreter-made bytes program p holds at once: its heap
 * temporaries live at each step, plus, at a control step, what its
 * regions' programs hold: their own peak, and for a while the carried
 * values of the previous iteration, which meet the new ones at the end of
 * the body (the new ones, the step's results, are counted as such; a value
 * passed through unchanged costs nothing). */
static int64_t heap_peak(const cpu_exec *x, const program *p, const ba_buffer *heap,
                         uint32_t nh) {
  int64_t peak = 0;
  for (uint32_t s = 0; s < p->nsteps; s++) {
    int64_t live = 0, sub = 0;
    for (uint32_t i = 0; i < nh; i++)
      if (heap[i].start <= s && s <= heap[i].end) live += heap[i].bytes;
    const step *q = &p->steps[s];
    for (uint32_t k = 0; k < q->nsub; k++) {
      const program *c = &x->progs[q->sub[k]];
      int64_t res = 0;
      const hlo_op *term = c->block->last;
      for (uint32_t i = 0; term && i < term->num_operands; i++) {
        const hlo_value *r = term->operands[i];
        /* a carried value passed through (a block argument) or an outer
         * value is not new memory */
        if (r->id < x->nvals && x->prog_of[r->id] == q->sub[k] && x->home[r->id] != HOME_ARG &&
            x->home[r->id] != HOME_CARRIED)
          res += cpu_value_bytes(r);
      }
      int64_t need = c->heap_peak_bytes + (q->kind == STEP_WHILE ? res : 0);
      if (need > sub) sub = need;
    }
    if (live + sub > peak) peak = live + sub;
  }
  return peak;
}

/* Whether value v of program p is read by a step other than a native one
 * (an alias, an interpreter thunk, a control step), or twice by one step. */
static bool read_oddly(const program *p, uint32_t v) {
  for (uint32_t s = 0; s < p->nsteps; s++) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->steps[s].nin; k++) n += p->steps[s].in[k]->id == v;
    if (n > 1 || (n && !step_is_native(p->steps[s].kind))) return true;
  }
  return false;
}

/* The input of step q that it writes its one output over in place, when
 * that input is value v: a dynamic_update_slice or scatter's operand, or
 * an input kernel_may_overwrite allows; -1 when none. */
static int32_t overwrites(const step *q, uint32_t v) {
  if ((q->kind == STEP_DUS || q->kind == STEP_SCATTER) && q->nin && q->in[0]->id == v) return 0;
  for (uint32_t k = 0; q->kind == STEP_KERNEL && k < q->nin; k++)
    if (q->in[k]->id == v && kernel_may_overwrite(q, k)) return (int32_t)k;
  return -1;
}

/* The search of plan_carried for one carried argument `a` (last read at
 * step `last`) of while body p: memo[s] (for the value step s makes; 0:
 * not yet known, -1: no chain) the length of the longest chain that ends
 * with that value, via[s] the input its step writes it over (-1: none, the
 * argument being dead), result[v] the body's results. */
typedef struct chain_search {
  const cpu_exec *x;
  const program *p;
  uint32_t pi, a, arg; /* the argument's value id and its index */
  int64_t last;
  int32_t *memo, *via;
  const bool *keep, *result;
  uint32_t depth;
} chain_search;

/* Of the chains of values ending with value cur that may all be written
 * over argument a's buffer one after the other (each over the previous
 * one, which dies there; the first over the argument after or at its last
 * read), the one that starts earliest (it spans the most steps, so it
 * takes the most out of the arena): 1 + its first value's step, or 0
 * when there is none. */
static int32_t chain_from(chain_search *c, uint32_t cur, uint64_t bytes) {
  uint32_t s = c->x->def_step[cur];
  if (c->memo[s]) return c->memo[s] < 0 ? 0 : c->memo[s];
  const step *d = &c->p->steps[s];
  int32_t best = 0;
  c->via[s] = -1;
  if (c->last == (int64_t)s) { /* the argument's last read: only in place, once there */
    int32_t k = overwrites(d, c->a);
    uint32_t here = 0;
    for (uint32_t j = 0; j < d->nin; j++) here += d->in[j]->id == c->a;
    if (k >= 0 && here == 1) best = (int32_t)s + 1, c->via[s] = k;
  } else if (c->last < (int64_t)s) {
    best = (int32_t)s + 1; /* the argument is dead when cur is made */
    /* further back: over a temporary that dies here, made no earlier than
     * the argument's last read */
    for (uint32_t j = 0; j < d->nin && d->kind == STEP_KERNEL && c->depth < 256; j++) {
      const cpu_exec *x = c->x;
      uint32_t v = d->in[j]->id;
      if (v >= x->nvals || x->prog_of[v] != c->pi || x->home[v] != HOME_ARENA ||
          x->last_step[v] != s || x->consts[v] || c->keep[v] || c->result[v] || v == c->a ||
          (int64_t)x->def_step[v] < c->last)
        continue;
      const step *dv = &c->p->steps[x->def_step[v]];
      if (!step_is_native(dv->kind) || dv->nout != 1 || dv->kind == STEP_ALIAS ||
          (uint64_t)cpu_value_bytes(d->in[j]) != bytes || read_oddly(c->p, v) ||
          !type_equal(d->in[j]->type, c->p->block->args[c->arg].type) ||
          !kernel_may_overwrite(d, j))
        continue;
      c->depth++;
      int32_t l = chain_from(c, v, bytes);
      c->depth--;
      if (l > 0 && l < best) best = l, c->via[s] = (int32_t)j;
    }
  }
  c->memo[s] = best ? best : -1;
  return best;
}

/* In a while body, the results that may be written over the carried value
 * they replace (HOME_CARRIED), with the chain of values in place before
 * them: result i = c_m is made by a native step of the body over c_{m-1}
 * (in place: it is that step's last read of it), ..., c_1 over block
 * argument i or after its last read; every c_j (j < m) is a kernel
 * temporary of the body, of argument i's type, that only native steps
 * read, each once, and that dies at the step making c_{j+1}; argument i is read by no step after c_1
 * is made (nor by that step, unless it updates it in place), is lent to no
 * alias, and is not carried twice. The longest such chain is taken (a
 * search over the inputs each step may overwrite). Each c_j then lives in
 * argument i's buffer too (HOME_CARRIED): at any step one of them at most
 * is live. The in-place steps are marked `aliased` (and `inplace` names
 * the input). Marks the arguments to keep (not freed before the write).
 * XLA's while buffers: one buffer per carried value across iterations,
 * the body's updates in place. */
static void plan_carried(cpu_exec *x, uint32_t pi, bool *keep, const bool *is_result) {
  program *p = &x->progs[pi];
  const hlo_block *blk = p->block;
  const hlo_op *term = blk->last;
  if (!p->while_body || !term || term->num_operands != blk->num_args) return;
  int32_t *memo = malloc((p->nsteps + 1) * 2 * sizeof *memo);
  if (!memo) return; /* no memory: no chains (still correct) */
  for (uint32_t i = 0; i < blk->num_args; i++) {
    uint32_t a = blk->args[i].id;
    const hlo_value *r = term->operands[i];
    if (a >= x->nvals || r->id >= x->nvals || x->prog_of[r->id] != pi ||
        x->home[r->id] != HOME_HEAP || keep[a])
      continue;
    const step *q = &p->steps[x->def_step[r->id]];
    if (!step_is_native(q->kind) || q->nout != 1 ||
        cpu_value_bytes(r) != cpu_value_bytes(&blk->args[i]))
      continue;
    /* r twice, or the old value also handed on (returned in another slot) */
    bool twice = false;
    for (uint32_t j = 0; j < blk->num_args; j++)
      twice |= j != i && (term->operands[j] == r || term->operands[j]->id == a);
    int64_t last = -1;
    bool lent = false;
    for (uint32_t s = 0; s < p->nsteps; s++)
      for (uint32_t k = 0; k < p->steps[s].nin; k++)
        if (p->steps[s].in[k]->id == a) {
          last = s;
          lent |= p->steps[s].kind == STEP_ALIAS;
        }
    if (twice || lent) continue;
    memset(memo, 0, (p->nsteps + 1) * 2 * sizeof *memo);
    chain_search c = {x, p, pi, a, i, last, memo, memo + p->nsteps + 1, keep, is_result, 0};
    if (chain_from(&c, r->id, (uint64_t)cpu_value_bytes(r)) <= 0) continue;
    /* the chain, from r back: each value over the input its step names */
    for (uint32_t v = r->id, n = 0; n <= p->nsteps; n++) {
      step *d = &p->steps[x->def_step[v]];
      int32_t k = c.via[x->def_step[v]];
      x->home[v] = HOME_CARRIED;
      x->offset[v] = a;
      if (k >= 0 && d->kind == STEP_KERNEL) {
        d->inplace = k;
        d->aliased = true;
      }
      if (k < 0 || d->in[k]->id == a) break;
      v = d->in[k]->id;
    }
    keep[a] = true;
  }
  free(memo);
}

/* Whether result i of while step q (in program pi) is the loop's state
 * in pi's arena: ONE buffer for carried value i over the whole loop (XLA's
 * while buffers), kept by the executable across runs (no allocation, no
 * page faults per run). Taken where the body writes result i over its
 * carried value (HOME_CARRIED) or passes it through unchanged from an
 * init value that lies in pi's arena (the state is then that slot:
 * merge_buffers). run_while initialises the slot ONCE before the first
 * iteration when the init value does not already lie there (XLA's copy
 * insertion: a fill for a splat constant, else a copy), and the loop's
 * result is read from it by later steps without a copy. */
static bool while_state_slot(const cpu_exec *x, const step *q, uint32_t i, uint32_t pi) {
  if (q->nsub != 2 || i >= q->op->num_operands || q->out[i]->type->kind != TYPE_TENSOR ||
      !type_is_static(q->out[i]->type))
    return false;
  const hlo_block *bb = x->progs[q->sub[1]].block;
  const hlo_op *bt = bb->last;
  if (!bt || bt->num_operands != bb->num_args || i >= bb->num_args) return false;
  const hlo_value *r = bt->operands[i], *a = &bb->args[i];
  if (r->id >= x->nvals || a->id >= x->nvals) return false;
  if (x->home[r->id] == HOME_CARRIED) return x->offset[r->id] == a->id;
  uint32_t in = q->in[i]->id;
  return r == a && in < x->nvals && x->prog_of[in] == pi && x->home[in] == HOME_ARENA;
}

/* Whether init value i of while step s (program pi) is a tensor of the
 * run's own that dies at the loop: run_while then takes it over as the
 * loop's state (no copy), so it gets no state slot. */
static bool init_taken_over(const cpu_exec *x, uint32_t pi, uint32_t s, uint32_t i,
                            const bool *is_result) {
  const program *p = &x->progs[pi];
  const step *q = &p->steps[s];
  uint32_t in = q->in[i]->id;
  if (in >= x->nvals || x->prog_of[in] != pi || x->home[in] != HOME_HEAP || x->consts[in] ||
      is_result[in] || p->steps[x->def_step[in]].kind == STEP_ALIAS)
    return false;
  for (uint32_t k = 0; k < q->nin; k++)
    if (k != i && q->in[k]->id == in) return false;
  for (uint32_t t = s + 1; t < p->nsteps; t++)
    for (uint32_t k = 0; k < p->steps[t].nin; k++)
      if (p->steps[t].in[k]->id == in) return false;
  return true;
}

/* ------------------------------------------------------------- schedule */

/* The schedule's view of program p: which values it defines (`own`: its
 * block's arguments and its steps' results) and which outlive its run
 * anyway (`end`: its results, the terminator's operands). Both are scratch
 * arrays of x->nvals entries, set here and cleared by sched_clear. */
static void sched_mark(const cpu_exec *x, const program *p, bool *own, bool *end) {
  for (uint32_t i = 0; i < p->block->num_args; i++)
    if (p->block->args[i].id < x->nvals) own[p->block->args[i].id] = true;
  for (uint32_t s = 0; s < p->nsteps; s++)
    for (uint32_t i = 0; i < p->steps[s].nout; i++)
      if (p->steps[s].out[i]->id < x->nvals) own[p->steps[s].out[i]->id] = true;
  const hlo_op *term = p->block->last;
  for (uint32_t i = 0; term && i < term->num_operands; i++)
    if (term->operands[i]->id < x->nvals) end[term->operands[i]->id] = true;
}

static void sched_clear(const cpu_exec *x, const program *p, bool *own, bool *end) {
  for (uint32_t i = 0; i < p->block->num_args; i++)
    if (p->block->args[i].id < x->nvals) own[p->block->args[i].id] = false;
  for (uint32_t s = 0; s < p->nsteps; s++)
    for (uint32_t i = 0; i < p->steps[s].nout; i++)
      if (p->steps[s].out[i]->id < x->nvals) own[p->steps[s].out[i]->id] = false;
  const hlo_op *term = p->block->last;
  for (uint32_t i = 0; term && i < term->num_operands; i++)
    if (term->operands[i]->id < x->nvals) end[term->operands[i]->id] = false;
}

/* Whether step s of p reads value v. */
static bool step_reads(const step *q, uint32_t v) {
  for (uint32_t k = 0; k < q->nin; k++)
    if (q->in[k]->id == v) return true;
  return false;
}

/* Whether a step may be moved: it computes its outputs from its inputs
 * only (a native step, a reshape); interpreter thunks (custom calls,
 * host callbacks, rng state) and control steps keep their places. */
static bool sched_pure(const step *q) {
  return step_is_native(q->kind) || q->kind == STEP_ALIAS;
}

/* Moves step `from` of p to index `to` (the steps between shift by one). */
static void sched_move(program *p, uint32_t from, uint32_t to) {
  if (from == to) return;
  step tmp = p->steps[from];
  if (from < to) memmove(&p->steps[from], &p->steps[from + 1], (to - from) * sizeof tmp);
  else memmove(&p->steps[to + 1], &p->steps[to], (from - to) * sizeof tmp);
  p->steps[to] = tmp;
}

/* The last index other than `skip` of a step of p reading v, or -1. */
static int64_t sched_last_read(const program *p, uint32_t v, uint32_t skip) {
  for (uint32_t t = p->nsteps; t-- > 0;)
    if (t != skip && step_reads(&p->steps[t], v)) return t;
  return -1;
}

/* The scratch of sched_peak: per value, the step making it and its last
 * reader; per step, the change of the live bytes. */
typedef struct sched_scratch {
  int64_t *first, *last; /* x->nvals entries */
  int64_t *delta;        /* nsteps + 2 entries */
} sched_scratch;

/* The most bytes of program p's step results live at one step in its
 * current order: a value from the step making it to its last reader (a
 * reshape's result is its input's bytes, which live as long as it). The
 * program's own results are not counted: program 0's are allocations of
 * their own (counted as output, wherever they are made), a while body's
 * are written over its carried values or handed to the loop. The measure
 * no move may raise. */
static int64_t sched_peak(const cpu_exec *x, const program *p, const bool *own, const bool *end,
                          sched_scratch *w) {
  uint32_t n = p->nsteps;
  for (uint32_t s = 0; s < n; s++)
    for (uint32_t i = 0; i < p->steps[s].nout; i++) {
      uint32_t v = p->steps[s].out[i]->id;
      if (v >= x->nvals) continue;
      w->first[v] = s;
      w->last[v] = end[v] ? n : s;
    }
  for (uint32_t s = 0; s < n; s++)
    for (uint32_t k = 0; k < p->steps[s].nin; k++) {
      const hlo_value *v = p->steps[s].in[k];
      if (v->id < x->nvals && own[v->id] && v->def && w->last[v->id] < (int64_t)s)
        w->last[v->id] = s;
    }
  for (uint32_t s = n; s-- > 0;) {
    const step *q = &p->steps[s];
    if (q->kind != STEP_ALIAS || !q->nin || !q->nout) continue;
    const hlo_value *src = q->in[0];
    uint32_t o = q->out[0]->id;
    if (src->id < x->nvals && own[src->id] && src->def && o < x->nvals &&
        w->last[o] > w->last[src->id])
      w->last[src->id] = w->last[o];
  }
  memset(w->delta, 0, (n + 2) * sizeof *w->delta);
  for (uint32_t s = 0; s < n; s++) {
    const step *q = &p->steps[s];
    if (q->kind == STEP_ALIAS) continue;
    for (uint32_t i = 0; i < q->nout; i++) {
      uint32_t v = q->out[i]->id;
      if (v >= x->nvals || x->consts[v] || end[v]) continue;
      int64_t b = cpu_value_bytes(q->out[i]);
      w->delta[w->first[v]] += b;
      w->delta[w->last[v] + 1] -= b;
    }
  }
  int64_t live = 0, peak = 0;
  for (uint32_t s = 0; s <= n; s++) {
    live += w->delta[s];
    if (live > peak) peak = live;
  }
  return peak;
}

/* Moves step `from` of p to `to` unless that raises sched_peak above
 * *peak (then the step goes back); returns whether it moved. */
static bool sched_try_move(const cpu_exec *x, program *p, uint32_t from, uint32_t to,
                           const bool *own, const bool *end, sched_scratch *w, int64_t *peak) {
  sched_move(p, from, to);
  int64_t now = sched_peak(x, p, own, end, w);
  if (now > *peak) {
    sched_move(p, to, from);
    return false;
  }
  *peak = now;
  return true;
}

/* The step reading value v (made by step s of p) when it is the only one,
 * reads it once, moves (sched_pure) and makes only the program's results;
 * else -1. */
static int64_t sched_feeds_result(const cpu_exec *x, const program *p, uint32_t s, uint32_t v,
                                  const bool *end) {
  int64_t reader = -1;
  for (uint32_t t = s + 1; t < p->nsteps; t++) {
    const step *u = &p->steps[t];
    uint32_t n = 0;
    for (uint32_t k = 0; k < u->nin; k++) n += u->in[k]->id == v;
    if (!n) continue;
    if (n > 1 || reader >= 0 || !sched_pure(u)) return -1;
    reader = t;
  }
  const hlo_op *term = p->block->last;
  for (uint32_t i = 0; term && i < term->num_operands; i++)
    if (term->operands[i]->id == v) return -1;
  if (reader < 0 || !p->steps[reader].nout) return -1;
  for (uint32_t i = 0; i < p->steps[reader].nout; i++) {
    uint32_t o = p->steps[reader].out[i]->id;
    if (o >= x->nvals || !end[o]) return -1;
  }
  return reader;
}

/* Where step s of p may move up to (see schedule_program): just after
 * the last step making one of its inputs or, for an input of the program
 * it reads last, reading it; *made: the bytes of its results that are not
 * the program's results, *freed: of the inputs made by steps that it reads
 * last (arguments free nothing). */
static int64_t sched_hoist_target(const cpu_exec *x, const program *p, uint32_t s,
                                  const bool *own, const bool *end, int64_t *made,
                                  int64_t *freed) {
  const step *q = &p->steps[s];
  int64_t t = 0;
  *made = *freed = 0;
  for (uint32_t i = 0; i < q->nout; i++)
    if (q->out[i]->id < x->nvals && !end[q->out[i]->id]) *made += cpu_value_bytes(q->out[i]);
  for (uint32_t k = 0; k < q->nin; k++) {
    uint32_t v = q->in[k]->id;
    if (v >= x->nvals || !own[v] || x->consts[v]) continue;
    for (uint32_t u = 0; u < s; u++) /* where it is made */
      for (uint32_t i = 0; i < p->steps[u].nout; i++)
        if (p->steps[u].out[i]->id == v && (int64_t)u + 1 > t) t = u + 1;
    int64_t last = sched_last_read(p, v, s);
    if (last < (int64_t)s && !end[v]) { /* q reads it last: keep it so */
      if (q->in[k]->def) *freed += cpu_value_bytes(q->in[k]);
      if (last + 1 > t) t = last + 1;
    }
  }
  return t;
}

/* A memory-aware order of program p's steps (XLA's list scheduler in
 * two greedy passes; the order the program gives is JAX's, which makes
 * a scan body's slices of the residual stacks all at its first steps and
 * its gradient updates all at its last):
 *   sinking: a step moves down to just before the first step reading one
 *     of its results, so its results are made only when needed, unless
 *     that keeps inputs alive longer (inputs that are not the program's
 *     results, values of an enclosing program or constants, and are not
 *     read again at or after that point; a reshape's input lives as long
 *     as the reshape's result anyway) whose bytes are as many as the
 *     results' or more (a slice may keep its 4-byte index longer), or
 *     keeps a block argument alive longer (a while body's result may be
 *     written over it);
 *   hoisting: a step moves up to just after the last step making or (for
 *     an input it reads last) reading one of its inputs, when it is the
 *     last reader of inputs of the program and its results are all the
 *     program's results, or each is read only by one step making only
 *     results of the program and the inputs have at least their bytes:
 *     those inputs die sooner (the updates of a scan's carried
 *     accumulators with the gradients of one layer, and the kernels laying
 *     the gradients out for them, which JAX puts at the end of the body;
 *     such an update then moves up after its kernel); a reshape
 *     moves up to just after the step making its input (no live range
 *     changes: they share bytes), so that a step reading it may follow.
 * Only steps that compute their outputs from their inputs move (native
 * steps and reshapes); every step still follows the steps making its
 * inputs and precedes their readers, so results are unchanged. No move
 * may raise the most bytes of step results live at one step
 * (sched_peak: a move that would is undone), so the order never needs
 * more memory than the program's by that measure. `own` and `end` are
 * scratch (sched_mark); programs of more than 2048 steps keep their order
 * (the passes are quadratic, each move measured in linear time). */
static void schedule_program(cpu_exec *x, uint32_t pi, bool *own, bool *end) {
  program *p = &x->progs[pi];
  if (p->nsteps < 3 || p->nsteps > 2048) return;
  sched_scratch w = {malloc(x->nvals * sizeof *w.first), malloc(x->nvals * sizeof *w.last),
                     malloc((p->nsteps + 2) * sizeof *w.delta)};
  if (!w.first || !w.last || !w.delta) { /* no memory: the program's own order (correct) */
    free(w.first), free(w.last), free(w.delta);
    return;
  }
  sched_mark(x, p, own, end);
  int64_t peak = sched_peak(x, p, own, end, &w);
  /* sinking, from the last step up (a reshape moves before the slice it
   * reshapes is considered) */
  for (uint32_t s = p->nsteps; s-- > 0;) {
    const step *q = &p->steps[s];
    if (!sched_pure(q)) continue;
    uint32_t c = p->nsteps;
    for (uint32_t t = s + 1; t < c; t++)
      for (uint32_t i = 0; i < q->nout && c == p->nsteps; i++)
        if (step_reads(&p->steps[t], q->out[i]->id)) c = t;
    if (c == p->nsteps || c == s + 1) continue;
    /* what it frees against what it keeps alive longer */
    int64_t freed = 0, kept = 0;
    for (uint32_t i = 0; i < q->nout; i++)
      if (q->out[i]->id < x->nvals && !end[q->out[i]->id]) freed += cpu_value_bytes(q->out[i]);
    bool ok = true;
    for (uint32_t k = 0; k < q->nin && ok; k++) {
      uint32_t v = q->in[k]->id;
      if (v >= x->nvals || !own[v] || end[v] || x->consts[v] || q->kind == STEP_ALIAS ||
          sched_last_read(p, v, s) >= (int64_t)c)
        continue;
      if (!q->in[k]->def) ok = false; /* a carried value: its result may be written over it */
      kept += cpu_value_bytes(q->in[k]);
    }
    if (ok && (kept == 0 || kept < freed)) sched_try_move(x, p, s, c - 1, own, end, &w, &peak);
  }
  /* hoisting, from the first step down */
  for (uint32_t s = 0; s < p->nsteps; s++) {
    const step *q = &p->steps[s];
    if (q->kind == STEP_ALIAS && q->nin >= 1) {
      /* a reshape right after the step making its input: its result
       * shares that input's bytes, so this changes no live range, and a
       * step reading it may then move up too */
      for (uint32_t u = 0; u + 1 < s; u++)
        for (uint32_t i = 0; i < p->steps[u].nout; i++)
          if (p->steps[u].out[i]->id == q->in[0]->id) {
            sched_move(p, s, u + 1);
            u = s; /* done */
            break;
          }
      continue;
    }
    if (!sched_pure(q) || !q->nout) continue;
    int64_t made = 0, freed = 0, t = sched_hoist_target(x, p, s, own, end, &made, &freed);
    if (freed <= 0 || freed < made || t >= (int64_t)s) continue;
    if (made == 0) {
      sched_try_move(x, p, s, (uint32_t)t, own, end, &w, &peak);
      continue;
    }
    /* results that are not the program's: only a step laying one value out
     * for the one step that reads it and writes only the program's results
     * (a gradient transposed for its accumulator's update) moves, and that
     * step with it, right after it */
    int64_t d = q->nout == 1 ? sched_feeds_result(x, p, s, q->out[0]->id, end) : -1;
    if (d < 0) continue;
    sched_move(p, s, (uint32_t)t);
    int64_t m = 0, f = 0, t2 = sched_hoist_target(x, p, (uint32_t)d, own, end, &m, &f);
    if (t2 < d) sched_move(p, (uint32_t)d, (uint32_t)t2);
    int64_t now = sched_peak(x, p, own, end, &w);
    if (now <= peak && t2 < d) {
      peak = now;
      continue;
    }
    if (t2 < d) sched_move(p, (uint32_t)t2, (uint32_t)d); /* back */
    sched_move(p, (uint32_t)t, s);
  }
  sched_clear(x, p, own, end);
  free(w.first), free(w.last), free(w.delta);
}

/* Whether value v of program p is read only by native steps (each once)
 * and by alias steps lending it on (reshapes, whose results obey the same
 * rule), every read through an alias before step `before`; marks v and
 * its aliases in `group`. */
static bool read_natively(const cpu_exec *x, const program *p, uint32_t pi, uint32_t v,
                          uint32_t before, bool *group) {
  group[v] = true;
  for (uint32_t s = 0; s < p->nsteps; s++) {
    const step *q = &p->steps[s];
    uint32_t n = 0;
    for (uint32_t k = 0; k < q->nin; k++) n += q->in[k]->id == v;
    if (!n) continue;
    if (q->kind == STEP_ALIAS && n == 1 && q->nout == 1) {
      uint32_t w = q->out[0]->id;
      if (w >= x->nvals || x->prog_of[w] != pi || x->home[w] != HOME_ARENA ||
          x->last_step[w] >= before || group[w] || !read_natively(x, p, pi, w, before, group))
        return false;
      continue;
    }
    if (n > 1 || !step_is_native(q->kind)) return false;
  }
  return true;
}

/* Program 0's results written over a temporary that dies at the kernel
 * making them. XLA's buffer assigner lets a temporary take a live-out
 * allocation when their live ranges do not meet, or meet where the
 * temporary's last reader writes the result over it
 * (CanShareOperandBufferWithUser): the output's memory, allocated for the
 * run anyway, holds the temporary first. Here: result R of kernel step s
 * may be written over input V when V has R's type, s may overwrite it
 * (kernel_may_overwrite: read only through elementwise ops of its shape)
 * and reads it once, V is an arena value of program 0 made by a native
 * step (not a fill), read by native steps only (or by reshapes lending it,
 * read before s), last at s, and no result itself. V then gets an
 * allocation of its own (HOME_HEAP, kept to the end of the run: it becomes
 * the result, counted as output, `in_result`) and R is written over it
 * (HOME_CARRIED, offset V, as a while body's carried values:
 * run_native_step writes over V's tensor while the run holds its only
 * reference, else makes R a tensor of its own; value_tensor finds V's for
 * R). V's reshapes borrow its tensor (HOME_HEAP). On a device backend too:
 * its mirror follows memory, not values (executable_cpu_device.c: V's
 * tensor has the device copy R is written into, in place like a carried
 * value's; the kernel's pointers lose restrict, as any aliased kernel's).
 * `group` is scratch of x->nvals entries, all false on entry and on
 * return. */
static void plan_results_over_temps(cpu_exec *x, uint32_t pi, const bool *is_result, bool *keep,
                                    bool *in_result, bool *group) {
  program *p = &x->progs[pi];
  if (pi != 0 || p->while_body) return;
  for (uint32_t s = 0; s < p->nsteps; s++) {
    step *q = &p->steps[s];
    if (q->kind != STEP_KERNEL || q->nout != 1) continue;
    const hlo_value *r = q->out[0];
    if (r->id >= x->nvals || !is_result[r->id] || x->home[r->id] != HOME_HEAP ||
        r->type->kind != TYPE_TENSOR || !type_is_static(r->type))
      continue;
    for (uint32_t k = 0; k < q->nin; k++) {
      uint32_t v = q->in[k]->id;
      if (v >= x->nvals || x->prog_of[v] != pi || x->home[v] != HOME_ARENA || x->consts[v] ||
          is_result[v] || keep[v] || x->last_step[v] != s || !q->in[k]->def ||
          !type_equal(q->in[k]->type, r->type) || !kernel_may_overwrite(q, k))
        continue;
      const step *d = &p->steps[x->def_step[v]];
      if (!step_is_native(d->kind) || d->kind == STEP_FILL || (d->kind == STEP_GEMM && d->epilogue))
        continue;
      bool ok = read_natively(x, p, pi, v, s, group);
      for (uint32_t i = 0; i < x->nvals; i++) {
        if (!group[i]) continue;
        group[i] = false;
        if (ok && i != v) x->home[i] = HOME_HEAP; /* a reshape borrowing V's tensor */
      }
      if (!ok) continue;
      x->home[v] = HOME_HEAP;
      keep[v] = true;
      in_result[v] = true;
      x->home[r->id] = HOME_CARRIED;
      x->offset[r->id] = v;
      q->inplace = (int32_t)k;
      q->aliased = true;
      break;
    }
  }
}

/* ------------------------------------------------- temporaries in results */

/* Whether program 0's results may hold temporaries before they are
 * written (place_in_results): on the CPU backend and on a device backend
 * (whose mirror tracks a result's allocation holding temporaries per
 * 64-byte granule, as its arena: executable_cpu_device.c), not with
 * --emit=lib (backend "cpu-aot", src/aot/emit_lib.c), which lays out its
 * own scratch from the arena and the heap values. */
static bool results_hold_temps(const cpu_exec *x) {
  return x->be->name && strcmp(x->be->name, "cpu-aot") != 0;
}

/* One allocation of a result of program 0 that may hold temporaries: the
 * value H whose memory it is (the result, or the dying temporary that
 * plan_results_over_temps writes it over), its bytes and the step writing
 * H (the temporaries in it die before). */
typedef struct result_home {
  const hlo_value *v;
  int64_t bytes;
  uint32_t write;
} result_home;

/* The allocations of program 0's results that may hold temporaries: a
 * result R made by a native step of program 0 (not a reshape borrowing
 * another value's bytes) in an allocation of its own (HOME_HEAP), or
 * written over such a value V (HOME_CARRIED: then V's allocation); R a
 * static tensor of at least one byte, returned once. A result that an
 * argument is donated to (tf.aliasing_output) is one too: this runtime
 * never gives a result a donated argument's memory (memory_analysis's
 * alias_bytes is 0, as in XLA's analyses of the shared models); were it
 * to, such a result would have to be left out (its allocation holds the
 * argument until its last read). Results that are arguments, constants, reshapes of
 * another value, made by interpreter thunks or control steps (whose
 * tensors the runtime does not choose) are left out. *n gets the count;
 * hs has room for the terminator's operand count. */
static void list_result_homes(const cpu_exec *x, result_home *hs, uint32_t *n) {
  const program *p = &x->progs[0];
  const hlo_op *term = p->block->last;
  *n = 0;
  for (uint32_t i = 0; term && i < term->num_operands; i++) {
    const hlo_value *r = term->operands[i];
    uint32_t id = r->id;
    if (id >= x->nvals || !r->def || x->consts[id] || x->prog_of[id] != 0 ||
        r->type->kind != TYPE_TENSOR || !type_is_static(r->type) || cpu_value_bytes(r) <= 0)
      continue;
    bool once = true;
    for (uint32_t j = 0; j < term->num_operands; j++) once &= j == i || term->operands[j] != r;
    if (!once) continue;
    uint32_t h = id;
    if (x->home[id] == HOME_CARRIED) h = (uint32_t)x->offset[id];
    else if (x->home[id] != HOME_HEAP) continue;
    if (h >= x->nvals || x->home[h] != HOME_HEAP || x->prog_of[h] != 0 || x->consts[h] ||
        x->def_step[h] >= p->nsteps)
      continue;
    const step *d = &p->steps[x->def_step[h]];
    const hlo_value *hv = NULL;
    for (uint32_t k = 0; k < d->nout; k++)
      if (d->out[k]->id == h) hv = d->out[k];
    if (!hv || !step_is_native(d->kind) || d->elided || hv->type->kind != TYPE_TENSOR ||
        !type_is_static(hv->type) || cpu_value_bytes(hv) < cpu_value_bytes(r))
      continue;
    bool dup = false;
    for (uint32_t k = 0; k < *n; k++) dup |= hs[k].v == hv;
    if (dup) continue;
    hs[(*n)++] = (result_home){hv, cpu_value_bytes(hv), x->def_step[h]};
  }
}

/* Whether buffer b fits in result home h (whose buffers placed so far are
 * those of bufs with at[i] == h + 1) at an offset where it meets none of
 * them both in bytes and in steps: the lowest such offset (a multiple of
 * ba_buffer_align's alignment) in *off. `granules` (a device backend,
 * whose validity is tracked per 64-byte granule): offsets multiples of
 * 64, and no two buffers share a granule. */
static bool fit_in_home(const ba_buffer *bufs, uint32_t nb, const uint32_t *at,
                        const int64_t *off, uint32_t h, int64_t hbytes, const ba_buffer *b,
                        bool granules, int64_t *out) {
  int64_t align = granules ? 64 : ba_buffer_align(b->bytes, 64);
  int64_t cand = 0;
  for (;;) {
    if (cand + b->bytes > hbytes) return false;
    int64_t next = -1;
    for (uint32_t i = 0; i < nb; i++) {
      if (at[i] != h + 1 || bufs[i].end < b->start || bufs[i].start > b->end) continue;
      /* on a device backend each buffer takes whole 64-byte granules */
      int64_t ib = granules ? (bufs[i].bytes + 63) / 64 * 64 : bufs[i].bytes;
      if (off[i] < cand + b->bytes && cand < off[i] + ib) {
        int64_t e = off[i] + ib;
        if (e > next) next = e;
      }
    }
    if (next < 0) {
      *out = cand;
      return true;
    }
    cand = (next + align - 1) / align * align;
  }
}

/* Sorts the homes smallest first (stable: the results' order). */
static void sort_homes(result_home *hs, uint32_t nh) {
  for (uint32_t i = 1; i < nh; i++)
    for (uint32_t j = i; j > 0 && hs[j].bytes < hs[j - 1].bytes; j--) {
      result_home t = hs[j];
      hs[j] = hs[j - 1];
      hs[j - 1] = t;
    }
}

/* The result written over its input (XLA's CanShareOperandBufferWithUser
 * for a live-out buffer: the output may take the memory of an operand
 * that dies at the fusion writing it, read only at the element written):
 * for each home hs[h] written by a kernel step q that makes it alone, an
 * arena buffer bufs[i] (a value group: ids[i] its root, i < nvalues) that
 * q reads through exactly one input k, that dies at q, has the result's
 * bytes, and that q may overwrite (kernel_may_overwrite: input k of the
 * result's dims and element size, read only elementwise, so through a
 * bitcast_convert of another element type too, which a result written
 * over a temporary, plan_results_over_temps, does not take) is placed at
 * offset 0 of the home (at[i] = h + 1, off[i] = 0): the kernel then
 * writes the result over it, in place (q->inplace = k, q->aliased). The
 * home holds nothing else yet (this runs before place_in_results). */
static void place_over_input(cpu_exec *x, const program *p, const result_home *hs, uint32_t nh,
                             const ba_buffer *bufs, uint32_t nvalues, const uint32_t *ids,
                             const uint32_t *root, uint32_t *at, int64_t *off) {
  for (uint32_t h = 0; h < nh; h++) {
    if (hs[h].write >= p->nsteps) continue;
    step *q = &p->steps[hs[h].write];
    if (q->kind != STEP_KERNEL || q->nout != 1 || q->out[0] != hs[h].v || q->elided) continue;
    for (uint32_t k = 0; k < q->nin; k++) {
      uint32_t v = q->in[k]->id;
      if (v >= x->nvals || x->prog_of[v] != 0 || x->home[v] != HOME_ARENA ||
          cpu_value_bytes(q->in[k]) != hs[h].bytes || !kernel_may_overwrite(q, k))
        continue;
      uint32_t r = root[v], bi = nvalues;
      for (uint32_t i = 0; i < nvalues && bi == nvalues; i++)
        if (ids[i] == r) bi = i;
      if (bi == nvalues || at[bi] || bufs[bi].end != hs[h].write || bufs[bi].bytes != hs[h].bytes)
        continue;
      const step *d = &p->steps[x->def_step[r]];
      if (!step_is_native(d->kind) || d->elided) continue;
      bool once = true; /* no other input in that memory */
      for (uint32_t j = 0; j < q->nin; j++)
        once &= j == k || q->in[j]->id >= x->nvals || x->prog_of[q->in[j]->id] != 0 ||
                x->home[q->in[j]->id] != HOME_ARENA || root[q->in[j]->id] != r;
      if (!once) continue;
      at[bi] = h + 1;
      off[bi] = 0;
      q->inplace = (int32_t)k;
      q->aliased = true;
      break;
    }
  }
}

/* Temporaries in result memory (XLA's buffer assigner: a live-out
 * allocation may take any temporary whose live range ends before the
 * output is written, TryAssignToExistingAllocation / MaybeAssignBuffer in
 * buffer_assignment.cc): the buffers of program 0's arena, bufs[0..nb)
 * (values, a control step's block of its regions' arenas, a
 * convolution's scratch), may lie in the allocation of a result (hs[0..nh),
 * allocated when a run starts) when their last step is before the step
 * writing it, at an offset where they meet no other buffer placed there in
 * both bytes and steps (fit_in_home). First, repeatedly, the largest
 * buffer that fits of those live at the step where the buffers left in
 * the arena are the most bytes live at once (ba_peak_live's measure: each
 * placement lowers that peak or moves it); when none there fits, every
 * other buffer that fits, largest first (less for ba_pack to pack). A
 * home is tried smallest first (hs is sorted so: sort_homes). `granules`:
 * a device backend (fit_in_home); a buffer with barred[i] stays in the
 * arena. at[i] gets 1 + the home's index (0: the arena; on entry, the
 * buffers place_over_input placed, the others 0), off[i] the offset in
 * it; live (nsteps + 2 entries) and tried (nb) are scratch. */
static void place_in_results(result_home *hs, uint32_t nh, const ba_buffer *bufs,
                             uint32_t nb, uint32_t nsteps, bool granules, const bool *barred,
                             uint32_t *at, int64_t *off, int64_t *live, bool *tried) {
  for (uint32_t i = 0; i < nb; i++) tried[i] = barred[i] || at[i]; /* placed: place_over_input */
  /* a buffer that fits nowhere now fits nowhere later (placements only
   * take room): tried once */
  for (int round = 0; round < 2 && nh; round++)
    for (;;) {
      int64_t peak = -1;
      uint32_t at_step = 0;
      if (round == 0) {
        memset(live, 0, (nsteps + 2) * sizeof *live);
        for (uint32_t i = 0; i < nb; i++)
          if (!at[i] && bufs[i].bytes > 0 && bufs[i].start <= nsteps) {
            live[bufs[i].start] += bufs[i].bytes;
            live[(bufs[i].end < nsteps ? bufs[i].end : nsteps) + 1] -= bufs[i].bytes;
          }
        int64_t cur = 0;
        for (uint32_t s = 0; s <= nsteps; s++) {
          cur += live[s];
          if (cur > peak) peak = cur, at_step = s;
        }
      }
      bool placed = false;
      for (;;) { /* the largest untried buffer (live at the peak step: round 0) */
        int64_t best = 0;
        uint32_t bi = 0;
        for (uint32_t i = 0; i < nb; i++)
          if (!at[i] && !tried[i] && bufs[i].bytes > best &&
              (round == 1 || (bufs[i].start <= at_step && at_step <= bufs[i].end)))
            best = bufs[i].bytes, bi = i;
        if (!best) break;
        tried[bi] = true;
        bool put = false;
        for (uint32_t k = 0; k < nh && !put; k++) {
          const result_home *h = &hs[k];
          if (bufs[bi].end >= h->write || h->bytes < bufs[bi].bytes) continue;
          if (fit_in_home(bufs, nb, at, off, k, h->bytes, &bufs[bi], granules, &off[bi]))
            at[bi] = k + 1, put = true;
        }
        placed |= put;
        if (placed && round == 0) break; /* the peak moved: measured again */
      }
      if (!placed || round == 1) break;
    }
  for (uint32_t i = 0; i < nb; i++)
    if (!at[i]) off[i] = 0;
}

/* Homes and arena offsets of program pi's values (see value_home).
 * `cond`: pi is a while's cond, whose result run_while reads where it
 * lies: it may stay in the arena (live to the end of the run), so an
 * iteration allocates nothing for it. */
static hlo_status plan_program(cpu_exec *x, uint32_t pi, bool *is_result, uint32_t *root,
                               bool *keep, bool *in_result, bool *group, bool *group2,
                               bool cond) {
  program *p = &x->progs[pi];
  schedule_program(x, pi, group, group2);
  const hlo_op *term = p->block->last;
  for (uint32_t i = 0; term && i < term->num_operands; i++)
    if (term->operands[i]->id < x->nvals) is_result[term->operands[i]->id] = true;
  for (uint32_t i = 0; i < p->block->num_args; i++) {
    uint32_t id = p->block->args[i].id;
    if (id < x->nvals) x->home[id] = HOME_ARG, x->prog_of[id] = pi;
  }
  for (uint32_t s = 0; s < p->nsteps; s++) {
    const step *q = &p->steps[s];
    for (uint32_t i = 0; i < q->nout; i++) {
      uint32_t id = q->out[i]->id;
      x->prog_of[id] = pi;
      x->def_step[id] = x->last_step[id] = s;
      root[id] = id;
      /* an alias is in the arena when its operand is (merge_buffers) */
      bool in_arena = step_is_native(q->kind) ||
                   (q->kind == STEP_ALIAS && x->home[q->in[0]->id] == HOME_ARENA &&
                    x->prog_of[q->in[0]->id] == pi) ||
                   (q->kind == STEP_WHILE && while_state_slot(x, q, i, pi) &&
                    !init_taken_over(x, pi, s, i, is_result));
      x->home[id] = in_arena && (!is_result[id] || cond) ? HOME_ARENA : HOME_HEAP;
    }
  }
  for (uint32_t s = 0; s < p->nsteps; s++)
    for (uint32_t i = 0; i < p->steps[s].nin; i++) {
      uint32_t id = p->steps[s].in[i]->id;
      if (id < x->nvals && x->prog_of[id] == pi && x->home[id] != HOME_ARG) x->last_step[id] = s;
    }
  for (uint32_t i = 0; cond && term && i < term->num_operands; i++) {
    uint32_t id = term->operands[i]->id; /* read after the last step */
    if (id < x->nvals && x->prog_of[id] == pi && x->home[id] == HOME_ARENA)
      x->last_step[id] = p->nsteps;
  }
  /* a kernel result that a while takes as a carried value and that dies
   * there gets its own allocation, so that the loop can take it over and
   * its body write over it (run_while's `steals`) */
  for (uint32_t s = 0; s < p->nsteps; s++) {
    const step *q = &p->steps[s];
    if (q->kind != STEP_WHILE || q->nsub != 2) continue;
    const hlo_op *bt = x->progs[q->sub[1]].block->last;
    for (uint32_t i = 0; i < q->op->num_operands && bt && i < bt->num_operands; i++) {
      uint32_t in = q->in[i]->id, r = bt->operands[i]->id;
      bool once = true;
      for (uint32_t k = 0; k < q->nin; k++) once &= k == i || q->in[k]->id != in;
      if (once && x->prog_of[in] == pi && x->home[in] == HOME_ARENA && x->last_step[in] == s &&
          r < x->nvals && x->home[r] == HOME_CARRIED && x->home[q->out[i]->id] != HOME_ARENA)
        x->home[in] = HOME_HEAP;
    }
  }
  plan_results_over_temps(x, pi, is_result, keep, in_result, group);
  HLO_TRY(list_owned(x, p));
  plan_carried(x, pi, keep, is_result);
  HLO_TRY(plan_frees(x, pi, is_result, keep));
  merge_buffers(x, pi, is_result, root);
  elide_fills(x, pi, is_result, root);
  /* the buffers: arena values (roots), plus one scratch buffer per step
   * that needs one, live at that step only: a control step's holds the
   * arenas of its regions' programs (planned already: children come after
   * their parent and are planned first), a convolution's the library's
   * scratch */
  uint32_t n = p->nowned + p->nsteps + 1;
  ba_buffer *bufs = malloc(n * sizeof *bufs), *heap = malloc(n * sizeof *heap);
  uint32_t *ids = malloc(n * sizeof *ids);
  if (!bufs || !heap || !ids) {
    free(bufs), free(heap), free(ids);
    return cpu_oom();
  }
  /* a while's carried result that its body writes over a heap operand
   * dying at the while (run_while takes that tensor over) is the operand's
   * memory: the operand's live range grows instead */
  int64_t *grow = malloc((x->nvals ? x->nvals : 1) * sizeof *grow);
  if (!grow) {
    free(bufs), free(heap), free(ids);
    return cpu_oom();
  }
  for (uint32_t i = 0; i < p->nowned; i++) grow[p->owned[i]] = -1;
  for (uint32_t s = 0; s < p->nsteps; s++) {
    const step *q = &p->steps[s];
    if (q->kind != STEP_WHILE || q->nsub != 2) continue;
    const hlo_block *bb = x->progs[q->sub[1]].block;
    const hlo_op *bt = bb->last;
    for (uint32_t i = 0; i < q->op->num_operands && bt && i < bt->num_operands && i < q->nout; i++) {
      uint32_t in = q->in[i]->id, out = q->out[i]->id, r = bt->operands[i]->id;
      if (x->home[out] == HOME_ARENA) continue; /* the loop's state: an arena slot */
      bool own_tensor = x->consts[in] ||
                        (x->prog_of[in] == pi &&
                         (x->home[in] == HOME_ARG ||
                          (x->home[in] == HOME_HEAP && p->steps[x->def_step[in]].kind != STEP_ALIAS)));
      if (i < bb->num_args && r == bb->args[i].id && !is_result[out] && own_tensor) {
        /* passed through unchanged: the result is the operand's tensor (an
         * arena slot or a borrowed one would be copied: counted) */
        grow[out] = -2;
        if (x->prog_of[in] == pi && x->home[in] == HOME_HEAP &&
            (int64_t)x->last_step[out] > grow[in])
          grow[in] = x->last_step[out];
        continue;
      }
      bool once = true;
      for (uint32_t k = 0; k < q->nin; k++) once &= k == i || q->in[k]->id != in;
      if (!once || x->prog_of[in] != pi || x->home[in] != HOME_HEAP || x->consts[in] ||
          x->last_step[in] != s || r >= x->nvals || x->home[r] != HOME_CARRIED || is_result[out])
        continue;
      grow[out] = -2; /* not counted */
      if ((int64_t)x->last_step[out] > grow[in]) grow[in] = x->last_step[out];
    }
  }
  uint32_t nb = 0, nh = 0;
  for (uint32_t i = 0; i < p->nowned; i++) {
    uint32_t id = p->owned[i];
    if (x->home[id] == HOME_ARG || x->home[id] == HOME_CARRIED || x->consts[id] ||
        (x->home[id] == HOME_ARENA && root[id] != id) || grow[id] == -2 || in_result[id])
      continue;
    const step *q = &p->steps[x->def_step[id]];
    if (q->elided) continue;
    ba_buffer b = {0, x->def_step[id], x->last_step[id], 0};
    if (grow[id] > (int64_t)b.end) b.end = (uint32_t)grow[id];
    for (uint32_t k = 0; k < q->nout; k++)
      if (q->out[k]->id == id) b.bytes = cpu_value_bytes(q->out[k]);
    if (x->home[id] == HOME_ARENA) ids[nb] = id, bufs[nb++] = b;
    else if (!is_result[id] && q->kind != STEP_ALIAS) heap[nh++] = b;
  }
  uint32_t first_scratch = nb;
  for (uint32_t s = 0; s < p->nsteps; s++) {
    const step *q = &p->steps[s];
    int64_t need = 0;
    for (uint32_t k = 0; k < q->nsub; k++)
      if (x->progs[q->sub[k]].temp_bytes > need) need = x->progs[q->sub[k]].temp_bytes;
    if (q->kind == STEP_CONV) need = q->scratch_bytes;
    if (need > 0) ids[nb] = s, bufs[nb++] = (ba_buffer){need, s, s, 0};
  }
  /* program 0: buffers in the allocations of results written after they
   * die (place_in_results); they take no arena space (ba_pack: 0 bytes) */
  hlo_status st = NULL;
  const hlo_op *t0 = p->block->last;
  uint32_t nhs = 0, *at = NULL;
  result_home *hs = NULL;
  int64_t *hoff = NULL;
  if (pi == 0 && nb && t0 && t0->num_operands && results_hold_temps(x)) {
    hs = malloc(t0->num_operands * sizeof *hs);
    at = malloc(nb * sizeof *at);
    hoff = malloc(nb * sizeof *hoff);
    int64_t *live = malloc((p->nsteps + 2) * sizeof *live);
    bool *tried = malloc(nb * sizeof *tried), *barred = malloc(nb * sizeof *barred);
    if (!hs || !at || !hoff || !live || !tried || !barred) st = cpu_oom();
    /* a convolution's scratch stays in the arena on a device backend (its
     * run finds the scratch there: run_device_step) */
    for (uint32_t i = 0; !st && i < nb; i++)
      barred[i] = i >= first_scratch && x->be->device_memory &&
                  p->steps[ids[i]].kind == STEP_CONV;
    if (!st) list_result_homes(x, hs, &nhs);
    for (uint32_t i = 0; !st && i < nb; i++) at[i] = 0, hoff[i] = 0;
    if (!st && nhs) {
      sort_homes(hs, nhs);
      place_over_input(x, p, hs, nhs, bufs, first_scratch, ids, root, at, hoff);
      place_in_results(hs, nhs, bufs, nb, p->nsteps, x->be->device_memory, barred, at, hoff,
                       live, tried);
    }
    for (uint32_t i = 0; !st && i < nb; i++)
      if (at[i]) bufs[i].bytes = 0;
    free(live), free(tried), free(barred);
  }
  /* small buffers packed below 64 bytes, except on a device backend (its
   * validity is tracked per 64-byte granule of the arena) */
  if (!st) st = ba_pack(bufs, nb, 64, !x->be->device_memory, &p->temp_bytes);
  for (uint32_t i = 0; !st && i < first_scratch; i++) {
    x->offset[ids[i]] = at && at[i] ? hoff[i] : bufs[i].offset;
    x->in_result_of[ids[i]] = at && at[i] ? hs[at[i] - 1].v->id + 1 : 0;
  }
  for (uint32_t i = first_scratch; !st && i < nb; i++) {
    step *q = &p->steps[ids[i]];
    q->scratch_offset = at && at[i] ? hoff[i] : bufs[i].offset;
    q->scratch_in = at && at[i] ? hs[at[i] - 1].v->id + 1 : 0;
    for (uint32_t k = 0; k < q->nsub; k++) {
      x->progs[q->sub[k]].arena_parent = pi;
      x->progs[q->sub[k]].arena_offset = q->scratch_offset;
      x->progs[q->sub[k]].arena_in = q->scratch_in;
    }
  }
  for (uint32_t i = 0; !st && i < p->nowned; i++) {
    uint32_t id = p->owned[i];
    if (x->home[id] == HOME_ARENA && root[id] != id) {
      x->offset[id] = x->offset[root[id]];
      x->in_result_of[id] = x->in_result_of[root[id]];
    }
  }
  /* the homes that hold a buffer: allocated at each run's start */
  for (uint32_t h = 0; !st && h < nhs; h++) {
    bool used = false;
    for (uint32_t i = 0; i < nb; i++) used |= at[i] == h + 1;
    if (!used) continue;
    if (!x->result_homes) {
      x->result_homes = malloc(nhs * sizeof *x->result_homes);
      if (!x->result_homes) {
        st = cpu_oom();
        break;
      }
    }
    x->result_homes[x->nresult_homes++] = hs[h].v;
  }
  free(hs), free(at), free(hoff);
  p->arena_buffers = first_scratch;
  p->heap_peak_bytes = heap_peak(x, p, heap, nh);
  free(bufs), free(heap), free(ids), free(grow);
  return st;
}

/* The values and region arenas of program 0 that lie in a result's
 * allocation (place_in_results), by result, then by offset. */
static void dump_result_homes(const cpu_exec *x, FILE *fp) {
  const program *p = &x->progs[0];
  for (uint32_t h = 0; h < x->nresult_homes; h++) {
    const hlo_value *hv = x->result_homes[h];
    uint32_t hid = hv->id;
    strbuf tb;
    sb_init(&tb);
    print_type(&tb, hv->type);
    fprintf(fp, "  in the allocation of result %%%s : %s (%lld bytes, written at step %u):\n",
            hv->name ? hv->name : "?", sb_cstr(&tb), (long long)cpu_value_bytes(hv),
            x->def_step[hid]);
    sb_free(&tb);
    fprintf(fp, "    %-10s %12s %12s  %-11s %-6s %s\n", "offset", "bytes", "end", "live steps",
            "line", "value : type");
    int64_t last_off = -1;
    uint32_t last_key = 0;
    for (;;) { /* keys: value ids, then nvals + step index for scratch blocks */
      int64_t best = INT64_MAX;
      uint32_t best_key = 0;
      for (uint32_t i = 0; i < p->nowned + p->nsteps; i++) {
        uint32_t key = i < p->nowned ? p->owned[i] : x->nvals + (i - p->nowned);
        int64_t o;
        if (i < p->nowned) {
          if (x->home[key] != HOME_ARENA || x->in_result_of[key] != hid + 1) continue;
          o = x->offset[key];
        } else {
          if (p->steps[i - p->nowned].scratch_in != hid + 1) continue;
          o = p->steps[i - p->nowned].scratch_offset;
        }
        bool after = o > last_off || (o == last_off && key > last_key);
        if (after && (o < best || (o == best && key < best_key))) best = o, best_key = key;
      }
      if (best == INT64_MAX) break;
      last_off = best;
      last_key = best_key;
      if (best_key >= x->nvals) {
        uint32_t si = best_key - x->nvals;
        const step *q = &p->steps[si];
        int64_t need = q->kind == STEP_CONV ? q->scratch_bytes : 0;
        for (uint32_t k = 0; k < q->nsub; k++)
          if (x->progs[q->sub[k]].temp_bytes > need) need = x->progs[q->sub[k]].temp_bytes;
        const char *on = op_name(q->op->opcode);
        char live[32];
        snprintf(live, sizeof live, "%u-%u", si, si);
        fprintf(fp, "    %-10lld %12lld %12lld  %-11s %-6u (%s of %s)\n", (long long)best,
                (long long)need, (long long)(best + need), live, q->op->loc.line,
                q->nsub ? "the arenas of the regions" : "the scratch", on ? on : "?");
        continue;
      }
      const step *q = &p->steps[x->def_step[best_key]];
      const hlo_value *v = NULL;
      for (uint32_t i = 0; i < q->nout; i++)
        if (q->out[i]->id == best_key) v = q->out[i];
      if (!v || q->elided) continue;
      strbuf vb;
      sb_init(&vb);
      print_type(&vb, v->type);
      char live[32];
      snprintf(live, sizeof live, "%u-%u", x->def_step[best_key], x->last_step[best_key]);
      fprintf(fp, "    %-10lld %12lld %12lld  %-11s %-6u %%%s : %s\n", (long long)best,
              (long long)cpu_value_bytes(v), (long long)(best + cpu_value_bytes(v)), live,
              v->loc.line, v->name ? v->name : "?", sb_cstr(&vb));
      sb_free(&vb);
    }
  }
  if (x->nresult_homes) fprintf(fp, "  the arena:\n");
}

/* The report of one program's arena, by offset (what shares bytes stands
 * together). */
static void dump_program(const cpu_exec *x, uint32_t pi, FILE *fp) {
  const program *p = &x->progs[pi];
  const hlo_op *owner = p->block->parent ? p->block->parent->parent : NULL;
  const char *on = owner ? op_name(owner->opcode) : NULL;
  char what[96];
  if (owner) snprintf(what, sizeof what, "a region of %s at line %u", on ? on : "?", owner->loc.line);
  else snprintf(what, sizeof what, "the function body");
  fprintf(fp, "\nprogram %u (%s): %u arena buffers in %lld bytes; interpreter temporaries at most "
          "%lld live\n", pi, what, p->arena_buffers, (long long)p->temp_bytes,
          (long long)p->heap_peak_bytes);
  const hlo_op *term = p->block->last;
  if (p->while_body && term) {
    uint32_t carried = 0;
    for (uint32_t i = 0; i < term->num_operands; i++)
      carried += term->operands[i]->id < x->nvals && x->home[term->operands[i]->id] == HOME_CARRIED;
    fprintf(fp, "  carried values written in place: %u of %u\n", carried, term->num_operands);
  } else if (term) {
    uint32_t over = 0; /* plan_results_over_temps */
    for (uint32_t i = 0; i < term->num_operands; i++)
      over += term->operands[i]->id < x->nvals && x->home[term->operands[i]->id] == HOME_CARRIED;
    if (over)
      fprintf(fp, "  results written over a temporary that dies there: %u of %u\n", over,
              term->num_operands);
  }
  if (!p->arena_buffers) return;
  if (pi == 0) dump_result_homes(x, fp);
  fprintf(fp, "  %-12s %12s %12s  %-11s %-6s %s\n", "offset", "bytes", "end", "live steps",
          "line", "value : type");
  int64_t last_off = -1;
  uint32_t last_id = 0;
  for (;;) {
    int64_t best = INT64_MAX;
    uint32_t best_id = 0;
    for (uint32_t i = 0; i < p->nowned; i++) {
      uint32_t id = p->owned[i];
      if (x->home[id] != HOME_ARENA || x->in_result_of[id]) continue;
      bool after = x->offset[id] > last_off || (x->offset[id] == last_off && id > last_id);
      if (after && (x->offset[id] < best || (x->offset[id] == best && id < best_id)))
        best = x->offset[id], best_id = id;
    }
    if (best == INT64_MAX) break;
    last_off = best;
    last_id = best_id;
    const step *q = &p->steps[x->def_step[best_id]];
    if (q->elided) continue; /* no buffer */
    const hlo_value *v = NULL;
    for (uint32_t i = 0; i < q->nout; i++)
      if (q->out[i]->id == best_id) v = q->out[i];
    if (!v) continue;
    strbuf tb;
    sb_init(&tb);
    print_type(&tb, v->type);
    int64_t bytes = cpu_value_bytes(v);
    char live[32];
    snprintf(live, sizeof live, "%u-%u", x->def_step[best_id], x->last_step[best_id]);
    fprintf(fp, "  %-12lld %12lld %12lld  %-11s %-6u %%%s : %s\n", (long long)best,
            (long long)bytes, (long long)(best + bytes), live, v->loc.line,
            v->name ? v->name : "?", sb_cstr(&tb));
    sb_free(&tb);
  }
  /* the steps' blocks in the arena: a convolution's scratch, a control
   * step's regions' arenas (live at that step only), by step */
  for (uint32_t si = 0; si < p->nsteps; si++) {
    const step *q = &p->steps[si];
    int64_t need = q->kind == STEP_CONV ? q->scratch_bytes : 0;
    for (uint32_t k = 0; k < q->nsub; k++)
      if (x->progs[q->sub[k]].temp_bytes > need) need = x->progs[q->sub[k]].temp_bytes;
    if (need <= 0 || q->scratch_in) continue;
    const char *qn = op_name(q->op->opcode);
    char live[32];
    snprintf(live, sizeof live, "%u-%u", si, si);
    fprintf(fp, "  %-12lld %12lld %12lld  %-11s %-6u (%s of %s)\n", (long long)q->scratch_offset,
            (long long)need, (long long)(q->scratch_offset + need), live, q->op->loc.line,
            q->nsub ? "the arenas of the regions" : "the scratch", qn ? qn : "?");
  }
}

/* DIR/buffer_assignment.txt: the totals, then each program's arena. */
static hlo_status dump_buffers(const cpu_exec *x, const char *dir) {
  char path[4096];
  HLO_TRY(path_make_dirs(dir, 0777));
  snprintf(path, sizeof path, "%s/buffer_assignment.txt", dir);
  FILE *fp = fopen(path, "w");
  if (!fp) return status_new(HLO_UNAVAILABLE, "cannot write '%s'", path);
  const runtime_cpu_stats *ms = &x->stats;
  fprintf(fp, "# buffer assignment of @%s: arguments %lld bytes, results %lld, constants %lld, "
          "arenas %lld (%u buffers), interpreter temporaries at most %lld live; peak %lld\n",
          x->f->name, (long long)ms->arg_bytes, (long long)ms->out_bytes,
          (long long)ms->const_bytes, (long long)ms->temp_bytes, ms->arena_buffers,
          (long long)ms->heap_peak_bytes, (long long)ms->peak_bytes);
  for (uint32_t pi = 0; pi < x->nprogs; pi++) dump_program(x, pi, fp);
  int err = ferror(fp);
  if (fclose(fp) != 0 || err) return status_new(HLO_UNAVAILABLE, "cannot write '%s'", path);
  return NULL;
}

hlo_status cpu_plan_buffers(cpu_exec *x, const char *dump_dir) {
  uint32_t nv = x->nvals ? x->nvals : 1;
  x->home = calloc(nv, sizeof *x->home);
  x->prog_of = calloc(nv, sizeof *x->prog_of);
  x->offset = calloc(nv, sizeof *x->offset);
  x->def_step = calloc(nv, sizeof *x->def_step);
  x->last_step = calloc(nv, sizeof *x->last_step);
  x->in_result_of = calloc(nv, sizeof *x->in_result_of);
  bool *is_result = calloc(nv, sizeof *is_result), *keep = calloc(nv, sizeof *keep);
  bool *in_result = calloc(nv, sizeof *in_result), *group = calloc(nv, sizeof *group);
  bool *group2 = calloc(nv, sizeof *group2);
  uint32_t *root = calloc(nv, sizeof *root);
  if (!x->home || !x->prog_of || !x->offset || !x->def_step || !x->last_step || !is_result ||
      !x->in_result_of ||
      !root || !keep || !in_result || !group || !group2) {
    free(is_result);
    free(keep);
    free(in_result);
    free(group);
    free(group2);
    free(root);
    return cpu_oom();
  }
  runtime_cpu_stats *ms = &x->stats;
  for (uint32_t i = 0; i < x->nvals; i++)
    if (x->consts[i]) {
      x->home[i] = HOME_CONST;
      ms->const_bytes += (int64_t)x->consts[i]->nbytes;
    }
  for (uint32_t i = 0; i < x->f->num_args; i++) ms->arg_bytes += cpu_value_bytes(&x->f->body.block.args[i]);
  const hlo_op *term = x->f->body.block.last;
  for (uint32_t i = 0; term && i < term->num_operands; i++) ms->out_bytes += cpu_value_bytes(term->operands[i]);
  hlo_status st = NULL;
  /* the while conds (their results may lie in their arenas) */
  bool *cond = calloc(x->nprogs ? x->nprogs : 1, sizeof *cond);
  if (!cond) st = cpu_oom();
  for (uint32_t pi = 0; cond && pi < x->nprogs; pi++)
    for (uint32_t s = 0; s < x->progs[pi].nsteps; s++) {
      const step *q = &x->progs[pi].steps[s];
      if (q->kind == STEP_WHILE && q->nsub == 2 && q->sub[0] < x->nprogs) cond[q->sub[0]] = true;
    }
  /* children first: a control step's scratch holds its regions' arenas */
  for (uint32_t pi = x->nprogs; pi-- > 0 && !st;) {
    st = plan_program(x, pi, is_result, root, keep, in_result, group, group2, cond[pi]);
    if (!st) ms->arena_buffers += x->progs[pi].arena_buffers;
  }
  if (!st && x->nprogs) {
    ms->temp_bytes = x->progs[0].temp_bytes;
    ms->heap_peak_bytes = x->progs[0].heap_peak_bytes;
  }
  free(is_result);
  free(keep);
  free(in_result);
  free(group);
  free(group2);
  free(root);
  free(cond);
  ms->peak_bytes = ms->arg_bytes + ms->out_bytes + ms->temp_bytes + ms->heap_peak_bytes;
  if (!st && dump_dir) st = dump_buffers(x, dump_dir);
  return st;
}
