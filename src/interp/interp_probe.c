/* interp_probe.c — interpreter.probe, check.expect_serialized_eq and
 * interpreter.print, as the StableHLO reference interpreter does them
 * (stablehlo/reference/InterpreterOps.cpp evalProbeOp / evalPrintOp,
 * tests/CheckOps.cpp evalExpectSerializedEqOp).
 *
 * interpreter.probe %x, probe_id = "id" writes %x to
 * PROBE_DIR/probe<N>.npy (N counts up from 1 over the run, shared by the
 * processes of run_parallel) and appends `id,TYPE,PATH` to
 * PROBE_DIR/index.csv; it returns %x. Element types numpy lacks (bf16, f8,
 * i2, i4, ...) are stored as unsigned integers of their storage width, as
 * the reference does; complex<f32> as numpy's complex64 ('<c8').
 * check.expect_serialized_eq %x, probe_id = "id"[, iter = k] finds the k-th
 * (from 0) index line of "id", reads that file, and requires it to equal %x
 * bit for bit.
 * interpreter.print %x writes `%NAME = ` then the value as tensor_print does
 * to interp_opts(it)->print_out (stdout by default) in one write, so the
 * output of parallel processes never interleaves.
 */
#include "interp/interp_probe.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/tensor_print.h"
#include "ir/element.h"
#include "support/arena.h"
#include "support/npy.h"
#include "support/strbuf.h"

#define PROBE_MAGIC 0x70726f6265u /* "probe" */

typedef struct probe_state {
  uint64_t magic;
  pthread_mutex_t mu;
  int64_t next_id;     /* last file number used */
} probe_state;

static void probe_state_free(void *p) {
  probe_state *s = p;
  if (!s) return;
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static void index_path(const char *dir, strbuf *b) { sb_printf(b, "%s/index.csv", dir); }

hlo_status interp_probe_prepare(interp *it, const hlo_op *op) {
  const interp_options *o = interp_opts(it);
  if (!o || !o->probe_dir) return NULL;
  probe_state *s = interp_probe_state(it);
  if (s) {
    if (s->magic != PROBE_MAGIC)
      return interp_error(op, HLO_INTERNAL, "the interpreter's probe state is in use elsewhere");
    return NULL;
  }
  s = calloc(1, sizeof *s);
  if (!s) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  s->magic = PROBE_MAGIC;
  pthread_mutex_init(&s->mu, NULL);
  strbuf b;
  sb_init(&b);
  index_path(o->probe_dir, &b);
  FILE *f = b.oom ? NULL : fopen(sb_cstr(&b), "w");
  if (!f) {
    hlo_status st = interp_error(op, HLO_NOT_FOUND, "cannot create probe index '%s': %s",
                                 sb_cstr(&b), strerror(errno));
    sb_free(&b);
    probe_state_free(s);
    return st;
  }
  fclose(f);
  sb_free(&b);
  interp_set_probe_state(it, s, probe_state_free);
  return NULL;
}

/* The numpy-storable type holding `dt`'s storage bytes. */
static hlo_dtype storage_dtype(hlo_dtype dt) {
  if (npy_descr_of(dt)) return dt;
  switch (hlo_dtype_size(dt)) {
    case 1: return HLO_UI8;
    case 2: return HLO_UI16;
    case 4: return HLO_UI32;
    default: return HLO_UI64;
  }
}

static void print_type(strbuf *b, const hlo_type *t) {
  sb_puts(b, "tensor<");
  for (uint32_t i = 0; i < t->rank; i++) sb_printf(b, "%" PRId64 "x", t->dims[i]);
  sb_printf(b, "%s>", hlo_dtype_name(t->dtype));
}

static hlo_status attr_text(const hlo_op *op, const char *name, char *buf, size_t cap) {
  const hlo_attr *a = op_attr(op, name);
  if (!a || a->kind != ATTR_STRING)
    return interp_error(op, HLO_INVALID_ARGUMENT, "missing string attribute '%s'", name);
  if (a->u.str.len >= cap || memchr(a->u.str.s, '\n', a->u.str.len) ||
      memchr(a->u.str.s, 0, a->u.str.len))
    return interp_error(op, HLO_INVALID_ARGUMENT, "%s is too long or holds a newline", name);
  memcpy(buf, a->u.str.s, a->u.str.len);
  buf[a->u.str.len] = 0;
  return NULL;
}

static hlo_status k_probe(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  const interp_options *o = interp_opts(it);
  if (!o || !o->probe_dir)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "interpreter.probe needs a probe output directory (--probe-output-dir)");
  if (!in[0] || in[0]->type->kind != TYPE_TENSOR)
    return interp_error(op, HLO_UNIMPLEMENTED, "interpreter.probe of a non-tensor value");
  char id[512];
  HLO_TRY(attr_text(op, "probe_id", id, sizeof id));
  HLO_TRY(interp_probe_prepare(it, op));
  probe_state *s = interp_probe_state(it);
  const hlo_type *t = in[0]->type;
  int64_t dims[NPY_MAX_RANK];
  if (t->rank > NPY_MAX_RANK)
    return interp_error(op, HLO_UNIMPLEMENTED, "interpreter.probe of rank %u (max %d)", t->rank,
                        NPY_MAX_RANK);
  for (uint32_t i = 0; i < t->rank; i++) dims[i] = t->dims[i];
  strbuf path, line, idx;
  sb_init(&path);
  sb_init(&line);
  sb_init(&idx);
  index_path(o->probe_dir, &idx);
  pthread_mutex_lock(&s->mu);
  int64_t n = ++s->next_id;
  sb_printf(&path, "%s/probe%" PRId64 ".npy", o->probe_dir, n);
  hlo_status st = NULL;
  if (path.oom || idx.oom) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!st) {
    st = npy_write(sb_cstr(&path), storage_dtype(t->dtype), (int)t->rank, dims, in[0]->data);
    if (st) st = status_note(st, "while writing interpreter.probe '%s'", id);
  }
  if (!st) {
    sb_printf(&line, "%s,", id);
    print_type(&line, t);
    sb_printf(&line, ",%s\n", sb_cstr(&path));
    FILE *f = line.oom ? NULL : fopen(sb_cstr(&idx), "a");
    if (!f || fputs(sb_cstr(&line), f) < 0)
      st = interp_error(op, HLO_NOT_FOUND, "cannot append to '%s': %s", sb_cstr(&idx),
                        strerror(errno));
    if (f && fclose(f) != 0 && !st)
      st = interp_error(op, HLO_NOT_FOUND, "cannot write '%s': %s", sb_cstr(&idx),
                        strerror(errno));
  }
  pthread_mutex_unlock(&s->mu);
  sb_free(&path);
  sb_free(&line);
  sb_free(&idx);
  if (st) return st;
  out[0] = tensor_retain(in[0]);
  return NULL;
}

/* Finds the iter-th line of index.csv for `id`; writes its path to *out
 * (malloc'd). */
static hlo_status find_probe(const hlo_op *op, const char *dir, const char *id, int64_t iter,
                             char **out) {
  *out = NULL;
  strbuf ip;
  sb_init(&ip);
  index_path(dir, &ip);
  FILE *f = ip.oom ? NULL : fopen(sb_cstr(&ip), "r");
  if (!f) {
    hlo_status st = interp_error(op, HLO_NOT_FOUND, "cannot open probe index '%s': %s",
                                 sb_cstr(&ip), strerror(errno));
    sb_free(&ip);
    return st;
  }
  sb_free(&ip);
  size_t idlen = strlen(id);
  int64_t seen = 0;
  char *linebuf = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&linebuf, &cap, f)) > 0) {
    if (linebuf[len - 1] == '\n') linebuf[--len] = 0;
    if ((size_t)len <= idlen || strncmp(linebuf, id, idlen) || linebuf[idlen] != ',') continue;
    if (seen++ != iter) continue;
    char *comma = strrchr(linebuf, ',');
    *out = strdup(comma + 1);
    break;
  }
  free(linebuf);
  fclose(f);
  if (!*out)
    return interp_error(op, HLO_NOT_FOUND,
                        "no interpreter.probe '%s' iteration %" PRId64 " was recorded (found %"
                        PRId64 ")", id, iter, seen);
  return NULL;
}

static hlo_status k_expect_serialized_eq(interp *it, const hlo_op *op, tensor *const *in,
                                         const hlo_type *const *rt, tensor **out) {
  const interp_options *o = interp_opts(it);
  if (!o || !o->probe_dir)
    return interp_error(op, HLO_INVALID_ARGUMENT,
                        "check.expect_serialized_eq needs a probe directory (--probe-output-dir)");
  if (!in[0] || in[0]->type->kind != TYPE_TENSOR)
    return interp_error(op, HLO_INVALID_ARGUMENT, "check.expect_serialized_eq of a non-tensor");
  char id[512];
  HLO_TRY(attr_text(op, "probe_id", id, sizeof id));
  int64_t iter = op_attr_int(op, "iter", 0);
  char *path;
  probe_state *s = interp_probe_state(it);
  if (s) pthread_mutex_lock(&s->mu);
  hlo_status st = find_probe(op, o->probe_dir, id, iter, &path);
  if (s) pthread_mutex_unlock(&s->mu);
  if (st) return st;
  npy_array a;
  st = npy_read(path, &a);
  free(path);
  if (st) return status_note(st, "while reading probe '%s'", id);
  const hlo_type *t = in[0]->type;
  bool same = a.dtype == storage_dtype(t->dtype) && a.rank == (int)t->rank &&
              a.nbytes == in[0]->nbytes;
  for (uint32_t i = 0; same && i < t->rank; i++) same = a.dims[i] == t->dims[i];
  if (!same) {
    strbuf b;
    sb_init(&b);
    print_type(&b, t);
    st = interp_error(op, HLO_FAILED_CHECK,
                      "probe '%s' iteration %" PRId64 ": serialized value ('%s', rank %d) does "
                      "not have the type %s", id, iter, a.descr, a.rank, sb_cstr(&b));
    sb_free(&b);
  } else if (a.nbytes && memcmp(a.data, in[0]->data, a.nbytes)) {
    size_t es = hlo_dtype_size(t->dtype);
    size_t i = 0;
    while (i < a.nbytes && ((uint8_t *)a.data)[i] == in[0]->data[i]) i++;
    st = interp_error(op, HLO_FAILED_CHECK,
                      "probe '%s' iteration %" PRId64 ": element %zu differs from the serialized "
                      "value", id, iter, i / es);
  }
  npy_free(&a);
  return st;
}

static hlo_status k_print(interp *it, const hlo_op *op, tensor *const *in,
                          const hlo_type *const *rt, tensor **out) {
  const interp_options *o = interp_opts(it);
  FILE *f = o && o->print_out ? o->print_out : stdout;
  strbuf b;
  sb_init(&b);
  const hlo_value *v = op->num_operands ? op->operands[0] : NULL;
  if (v && v->name) sb_printf(&b, "%%%s = ", v->name);
  else if (v) sb_printf(&b, "%%%u = ", v->id);
  if (in[0]) tensor_print(&b, in[0]);
  if (b.oom) {
    sb_free(&b);
    return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  /* One write: stdio locks the stream per call, so parallel processes'
   * prints never interleave. */
  fwrite(b.data, 1, b.len, f);
  fflush(f);
  sb_free(&b);
  for (uint32_t i = 0; i < op->num_results; i++) out[i] = tensor_retain(in[i]);
  return NULL;
}

void interp_register_probe(interp_kernel *table) {
  if (!table[OP_INTERP_PROBE]) table[OP_INTERP_PROBE] = k_probe;
  if (!table[OP_INTERP_PRINT]) table[OP_INTERP_PRINT] = k_print;
  if (!table[OP_CHECK_EXPECT_SERIALIZED_EQ])
    table[OP_CHECK_EXPECT_SERIALIZED_EQ] = k_expect_serialized_eq;
}
