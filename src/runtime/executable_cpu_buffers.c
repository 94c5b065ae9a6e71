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
 * constants. */
static hlo_status plan_frees(cpu_exec *x, uint32_t pi, const bool *is_result) {
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
  hlo_status st = NULL;
  for (uint32_t s = 0; s < p->nsteps && !st; s++) {
    step *q = &p->steps[s];
    uint32_t cnt = 0;
    for (uint32_t i = 0; i < p->nowned; i++) {
      uint32_t id = p->owned[i];
      cnt += last[id] == (int64_t)s && !is_result[id] && !x->consts[id];
    }
    if (!cnt) continue;
    q->free_ids = malloc(cnt * sizeof *q->free_ids);
    if (!q->free_ids) {
      st = cpu_oom();
      break;
    }
    for (uint32_t i = 0; i < p->nowned; i++) {
      uint32_t id = p->owned[i];
      if (last[id] == (int64_t)s && !is_result[id] && !x->consts[id]) q->free_ids[q->nfree++] = id;
    }
  }
  free(last);
  return st;
}

/* Homes and arena offsets of program pi's values (see value_home). */
static hlo_status plan_program(cpu_exec *x, uint32_t pi, bool *is_result) {
  program *p = &x->progs[pi];
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
      bool native = step_is_native(q->kind);
      x->home[id] = native && !is_result[id] ? HOME_ARENA : HOME_HEAP;
    }
  }
  for (uint32_t s = 0; s < p->nsteps; s++)
    for (uint32_t i = 0; i < p->steps[s].nin; i++) {
      uint32_t id = p->steps[s].in[i]->id;
      if (id < x->nvals && x->prog_of[id] == pi && x->home[id] != HOME_ARG) x->last_step[id] = s;
    }
  HLO_TRY(list_owned(x, p));
  HLO_TRY(plan_frees(x, pi, is_result));
  /* in place: a dynamic_update_slice or scatter whose operand dies at it,
   * or an elementwise kernel whose input (read only at the element being
   * written) dies at it, writes into that operand's slot: the two become
   * one buffer (XLA: CanShareOperandBufferWithUser) */
  uint32_t *alias = malloc((p->nowned ? p->nowned : 1) * sizeof *alias);
  if (!alias) return cpu_oom();
  uint32_t nalias = 0;
  for (uint32_t s = 0; s < p->nsteps; s++) {
    step *q = &p->steps[s];
    int32_t k = q->kind == STEP_DUS || q->kind == STEP_SCATTER ? 0
                : q->kind == STEP_KERNEL && q->nout == 1 ? q->inplace
                                                         : -1;
    if (k < 0 || (uint32_t)k >= q->nin) continue;
    uint32_t in = q->in[k]->id, out = q->out[0]->id;
    if (x->prog_of[in] != pi || x->consts[in] || is_result[in] || x->last_step[in] != s ||
        x->home[out] != HOME_ARENA)
      continue;
    /* a step result of HOME_NONE here is an alias already: its root */
    uint32_t root = x->home[in] == HOME_NONE ? (uint32_t)x->offset[in] : in;
    if (x->home[root] != HOME_ARENA || cpu_value_bytes(q->in[0]) != cpu_value_bytes(q->out[0]))
      continue;
    /* read by this step as another input too: it would change under the
     * kernel's feet */
    bool twice = false;
    for (uint32_t i = 0; i < q->nin; i++) twice |= i != (uint32_t)k && q->in[i]->id == in;
    if (twice) continue;
    q->aliased = true;
    x->last_step[in] = x->last_step[root] = x->last_step[out];
    x->home[out] = HOME_NONE; /* placed with its root below */
    alias[nalias++] = out;
    x->offset[out] = root; /* the root's id, until offsets are known */
  }
  uint32_t n = p->nowned ? p->nowned : 1;
  ba_buffer *bufs = malloc(n * sizeof *bufs), *heap = malloc(n * sizeof *heap);
  uint32_t *ids = malloc(n * sizeof *ids);
  if (!bufs || !heap || !ids) {
    free(bufs), free(heap), free(ids), free(alias);
    return cpu_oom();
  }
  uint32_t nb = 0, nh = 0;
  for (uint32_t i = 0; i < p->nowned; i++) {
    uint32_t id = p->owned[i];
    if (x->home[id] == HOME_ARG || x->home[id] == HOME_NONE || x->consts[id]) continue;
    const step *q = &p->steps[x->def_step[id]];
    ba_buffer b = {0, x->def_step[id], x->last_step[id], 0};
    for (uint32_t k = 0; k < q->nout; k++)
      if (q->out[k]->id == id) b.bytes = cpu_value_bytes(q->out[k]);
    if (x->home[id] == HOME_ARENA) ids[nb] = id, bufs[nb++] = b;
    else if (!is_result[id]) heap[nh++] = b;
  }
  hlo_status st = ba_pack(bufs, nb, 64, &p->temp_bytes);
  for (uint32_t i = 0; !st && i < nb; i++) x->offset[ids[i]] = bufs[i].offset;
  /* aliases in step order: a chain of in-place updates ends at its root */
  for (uint32_t i = 0; !st && i < nalias; i++) {
    uint32_t out = alias[i], root = (uint32_t)x->offset[out];
    x->offset[out] = x->offset[root];
    x->home[out] = HOME_ARENA;
  }
  free(alias);
  p->arena_buffers = nb;
  p->heap_peak_bytes = ba_peak_live(heap, nh);
  free(bufs), free(heap), free(ids);
  return st;
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
  if (!p->arena_buffers) return;
  fprintf(fp, "  %-12s %12s %12s  %-11s %-6s %s\n", "offset", "bytes", "end", "live steps",
          "line", "value : type");
  int64_t last_off = -1;
  uint32_t last_id = 0;
  for (;;) {
    int64_t best = INT64_MAX;
    uint32_t best_id = 0;
    for (uint32_t i = 0; i < p->nowned; i++) {
      uint32_t id = p->owned[i];
      if (x->home[id] != HOME_ARENA) continue;
      bool after = x->offset[id] > last_off || (x->offset[id] == last_off && id > last_id);
      if (after && (x->offset[id] < best || (x->offset[id] == best && id < best_id)))
        best = x->offset[id], best_id = id;
    }
    if (best == INT64_MAX) break;
    last_off = best;
    last_id = best_id;
    const step *q = &p->steps[x->def_step[best_id]];
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
  bool *is_result = calloc(nv, sizeof *is_result);
  if (!x->home || !x->prog_of || !x->offset || !x->def_step || !x->last_step || !is_result) {
    free(is_result);
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
  for (uint32_t pi = 0; pi < x->nprogs && !st; pi++) {
    st = plan_program(x, pi, is_result);
    if (st) break;
    ms->temp_bytes += x->progs[pi].temp_bytes;
    ms->arena_buffers += x->progs[pi].arena_buffers;
    ms->heap_peak_bytes += x->progs[pi].heap_peak_bytes;
  }
  free(is_result);
  ms->peak_bytes = ms->arg_bytes + ms->out_bytes + ms->temp_bytes + ms->heap_peak_bytes;
  if (!st && dump_dir) st = dump_buffers(x, dump_dir);
  return st;
}
