/* interp.c — the reference interpreter's core: runtime values (tensors,
 * tuples, tokens), the kernel table, and the walker that runs functions and
 * regions op by op.
 *
 * A function runs in a frame: an array of values indexed by hlo_value.id
 * (func_number_values numbers every value of a function, nested regions
 * included, so a region run by a kernel — a while body, a reduce body — uses
 * its enclosing function's frame and sees captured values). Values stay in
 * their slot until overwritten (a loop body running again) or until the
 * frame ends.
 *
 * Quantized tensors: for the ops whose spec semantics are
 * dequantize_op_quantize (the spec's "Quantization computations"), the core
 * dequantizes quantized operands, runs the kernel on expressed-type result
 * types, and quantizes the results (interp_quant.c). */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "interp/interp.h"
#include "support/arena.h"

/* ------------------------------------------------------------- tensors */

static size_t max_tensor_bytes;   /* written once, under pthread_once */
static pthread_once_t max_tensor_once = PTHREAD_ONCE_INIT;

static void init_max_tensor_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  /* half the physical memory: one tensor bigger than that leaves no room
   * for the operands and results around it */
  size_t phys = pages > 0 && psize > 0 ? (size_t)pages / 2 * (size_t)psize : HLO_MAX_TENSOR_BYTES;
  max_tensor_bytes = phys < HLO_MAX_TENSOR_BYTES ? phys : HLO_MAX_TENSOR_BYTES;
}

size_t interp_max_tensor_bytes(void) {
  pthread_once(&max_tensor_once, init_max_tensor_bytes);
  return max_tensor_bytes;
}

tensor *tensor_wrap(const hlo_type *t, void *data) {
  if (!t || t->kind != TYPE_TENSOR || !type_is_static(t)) return NULL;
  int64_t n = type_num_elements(t);
  if (n < 0) return NULL;
  tensor *v = xcalloc(1, sizeof *v);
  if (!v) return NULL;
  v->type = t;
  v->num_elems = n;
  v->nbytes = (size_t)n * hlo_dtype_size(t->dtype);
  v->data = data;
  v->borrowed = true;
  v->refcount = 1;
  return v;
}

tensor *tensor_new(const hlo_type *t) {
  if (!t) return NULL;
  if (t->kind == TYPE_TOKEN) {
    tensor *v = xcalloc(1, sizeof *v);
    if (!v) return NULL;
    v->type = t;
    v->refcount = 1;
    return v;
  }
  if (t->kind != TYPE_TENSOR || !type_is_static(t)) return NULL;
  int64_t n = type_num_elements(t);
  if (n < 0) return NULL;
  size_t es = hlo_dtype_size(t->dtype);
  if (es == 0 || (uint64_t)n > interp_max_tensor_bytes() / es) return NULL;
  size_t nbytes = (size_t)n * es;
  tensor *v = xcalloc(1, sizeof *v);
  if (!v) return NULL;
  v->data = xcalloc(nbytes ? nbytes : 1, 1);
  if (!v->data) {
    free(v);
    return NULL;
  }
  v->type = t;
  v->num_elems = n;
  v->nbytes = nbytes;
  v->refcount = 1;
  return v;
}

hlo_status tensor_create_uninit(const hlo_type *t, const hlo_loc *loc, tensor **out) {
  *out = NULL;
  if (!t || t->kind != TYPE_TENSOR || !type_is_static(t)) return tensor_create(t, loc, out);
  int64_t n = type_num_elements(t);
  size_t es = hlo_dtype_size(t->dtype);
  if (n < 0 || es == 0 || (uint64_t)n > interp_max_tensor_bytes() / es)
    return tensor_create(t, loc, out); /* its error */
  size_t nbytes = (size_t)n * es;
  tensor *v = xcalloc(1, sizeof *v);
  /* cache-line aligned from a line on: the CPU backend's kernels, oneDNN
   * and the temporaries placed in a run's result allocations (at offsets
   * that are multiples of 64) read them */
  uint8_t *d = v ? (nbytes >= 64 ? xmalloc_aligned64(nbytes) : xmalloc(nbytes ? nbytes : 1)) : NULL;
  if (!d) {
    free(v);
    return status_at(HLO_RESOURCE_EXHAUSTED, loc, "out of memory allocating a tensor of %lld "
                     "elements of %s", (long long)n, hlo_dtype_name(t->dtype));
  }
  v->type = t;
  v->num_elems = n;
  v->nbytes = nbytes;
  v->data = d;
  v->refcount = 1;
  *out = v;
  return NULL;
}

hlo_status tensor_create(const hlo_type *t, const hlo_loc *loc, tensor **out) {
  *out = NULL;
  if (!t) return status_at(HLO_INTERNAL, loc, "tensor_create: no type");
  if (t->kind == TYPE_TUPLE)
    return status_at(HLO_INTERNAL, loc, "tensor_create: a tuple type needs tensor_create_tuple");
  if (t->kind == TYPE_TENSOR && !type_is_static(t))
    return status_at(HLO_UNIMPLEMENTED, loc,
                     "the interpreter does not support dynamically shaped tensors");
  int64_t n = type_num_elements(t);
  size_t es = t->kind == TYPE_TENSOR ? hlo_dtype_size(t->dtype) : 0;
  if (t->kind == TYPE_TENSOR && n < 0)
    return status_at(HLO_RESOURCE_EXHAUSTED, loc,
                     "cannot allocate a tensor whose element count overflows 64 bits");
  if (t->kind == TYPE_TENSOR && (uint64_t)n > interp_max_tensor_bytes() / es)
    return status_at(HLO_RESOURCE_EXHAUSTED, loc,
                     "cannot allocate a tensor of %lld elements of %s (%.3g GB): over the "
                     "limit of %.3g GB (half this machine's memory)",
                     (long long)n, hlo_dtype_name(t->dtype), (double)n * (double)es / 1e9,
                     (double)interp_max_tensor_bytes() / 1e9);
  tensor *v = tensor_new(t);
  if (!v)
    return status_at(HLO_RESOURCE_EXHAUSTED, loc,
                     "out of memory allocating a tensor of %lld elements of %s (%.3g GB)",
                     (long long)n, hlo_dtype_name(t->dtype), (double)n * (double)es / 1e9);
  *out = v;
  return NULL;
}

hlo_status tensor_create_tuple(const hlo_type *t, tensor *const *elems, uint32_t n,
                               const hlo_loc *loc, tensor **out) {
  *out = NULL;
  tensor *v = xcalloc(1, sizeof *v);
  if (!v) return status_at(HLO_RESOURCE_EXHAUSTED, loc, "out of memory");
  if (n) {
    v->tuple = xcalloc(n, sizeof *v->tuple);
    if (!v->tuple) {
      free(v);
      return status_at(HLO_RESOURCE_EXHAUSTED, loc, "out of memory");
    }
  }
  for (uint32_t i = 0; i < n; i++) v->tuple[i] = tensor_retain(elems[i]);
  v->type = t;
  v->num_tuple = n;
  v->refcount = 1;
  *out = v;
  return NULL;
}

tensor *tensor_retain(tensor *v) {
  if (v) __atomic_fetch_add(&v->refcount, 1, __ATOMIC_RELAXED);
  return v;
}

void tensor_release(tensor *v) {
  if (!v) return;
  if (__atomic_sub_fetch(&v->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  for (uint32_t i = 0; i < v->num_tuple; i++) tensor_release(v->tuple[i]);
  free(v->tuple);
  if (!v->borrowed) free(v->data);
  if (v->device) v->device->release(v->device);
  free(v);
}

/* ------------------------------------------------------------- indices */

int64_t index_linear(const int64_t *dims, uint32_t rank, const int64_t *idx) {
  int64_t lin = 0;
  for (uint32_t d = 0; d < rank; d++) lin = lin * dims[d] + idx[d];
  return lin;
}

void index_unlinear(const int64_t *dims, uint32_t rank, int64_t lin, int64_t *idx) {
  for (uint32_t d = rank; d-- > 0;) {
    if (dims[d] > 0) {
      idx[d] = lin % dims[d];
      lin /= dims[d];
    } else {
      idx[d] = 0;
    }
  }
}

bool index_next(const int64_t *dims, uint32_t rank, int64_t *idx) {
  for (uint32_t d = rank; d-- > 0;) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/* ------------------------------------------------------- the interpreter */

/* State shared by an interpreter and its forks. */
typedef struct arena_node {
  arena a;
  struct arena_node *next;
} arena_node;

typedef struct interp_shared {
  pthread_mutex_t mu;
  int refs;
  void *probe;
  void (*probe_cleanup)(void *);
  arena_node *dead_arenas;   /* arenas of destroyed forks (types may live on) */
  char **once;               /* keys interp_first_time has seen (malloc'd) */
  uint32_t once_n;
} interp_shared;

typedef struct frame {
  const hlo_func *f;         /* NULL for a temporary frame */
  const hlo_region *body;    /* the outermost region the frame serves */
  tensor **vals;
  uint32_t n;
  struct frame *up;
} frame;

typedef struct qcache_entry {
  const hlo_type *key, *val;
} qcache_entry;

struct interp {
  const hlo_module_ir *m;
  interp_options opts;
  interp_process proc;
  arena arena;
  interp_shared *sh;
  const hlo_type *scalar[HLO_DTYPE_COUNT];
  qcache_entry *qc;
  uint32_t qc_n, qc_cap;
  frame *frame;
  int depth;
  struct block_plan **plans;  /* open addressing by block pointer */
  uint32_t plans_n, plans_cap;
  const bool *cancel;         /* interp_set_cancel's flag (NULL: none), read atomically */
  bool cancelled;             /* the last run stopped at the flag */
};

/* Deepest nesting of calls and regions before we report an error rather
 * than overflow the C stack. */
#define MAX_DEPTH 400

static interp_kernel kernel_table[OP_COUNT];
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

typedef void (*register_fn)(interp_kernel *);

static void fill_kernel_table(void) {
  static const register_fn regs[] = {
      interp_register_elementwise, interp_register_control, interp_register_check,
      interp_register_shape,       interp_register_reduce,  interp_register_linalg,
      interp_register_collective,  interp_register_custom_call,
      interp_register_sdy,         interp_register_fusion,
  };
  static interp_kernel tmp[OP_COUNT];
  for (size_t r = 0; r < sizeof regs / sizeof regs[0]; r++) {
    memcpy(tmp, kernel_table, sizeof tmp);
    regs[r](tmp);
    /* A later file may not overwrite a slot. */
    for (int i = 0; i < OP_COUNT; i++)
      if (!kernel_table[i] && tmp[i]) kernel_table[i] = tmp[i];
  }
}

/* An interpreter over `m` joined to the shared family state `sh` (the
 * caller holds a reference for it). */
static hlo_status interp_new(const hlo_module_ir *m, const interp_options *opts,
                             interp_shared *sh, interp **out) {
  *out = NULL;
  interp *it = xcalloc(1, sizeof *it);
  if (!it) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  it->m = m;
  if (opts) it->opts = *opts;
  arena_init(&it->arena);
  it->proc.num_replicas = 1;
  it->proc.num_partitions = 1;
  it->sh = sh;
  *out = it;
  return NULL;
}

/* `f` has values but func_number_values has not run on it. */
static bool func_needs_numbering(const hlo_func *f) {
  return f->num_values == 0 && (f->body.block.num_args || f->body.block.first);
}

hlo_status interp_create(const hlo_module_ir *m, const interp_options *opts, interp **out) {
  *out = NULL;
  pthread_once(&kernel_once, fill_kernel_table);
  interp_shared *sh = xcalloc(1, sizeof *sh);
  if (!sh) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (pthread_mutex_init(&sh->mu, NULL)) {
    free(sh);
    return status_new(HLO_RESOURCE_EXHAUSTED, "cannot create a mutex");
  }
  sh->refs = 1;
  /* Number the values of every function once, before any thread runs; a
   * second interpreter over the same module finds them numbered and writes
   * nothing (another may be running on them). */
  for (hlo_func *f = m ? m->funcs : NULL; f; f = f->next)
    if (func_needs_numbering(f)) func_number_values(f);
  hlo_status st = interp_new(m, opts, sh, out);
  if (st) {
    pthread_mutex_destroy(&sh->mu);
    free(sh);
  }
  return st;
}

hlo_status interp_fork(interp *parent, const interp_process *p, interp **out) {
  *out = NULL;
  pthread_mutex_lock(&parent->sh->mu);
  parent->sh->refs++;
  pthread_mutex_unlock(&parent->sh->mu);
  hlo_status st = interp_new(parent->m, &parent->opts, parent->sh, out);
  if (!st) (*out)->cancel = parent->cancel;
  if (st) {
    pthread_mutex_lock(&parent->sh->mu);
    parent->sh->refs--;
    pthread_mutex_unlock(&parent->sh->mu);
    return st;
  }
  if (p) (*out)->proc = *p;
  return NULL;
}

void interp_destroy(interp *it) {
  if (!it) return;
  interp_shared *sh = it->sh;
  free(it->qc);
  free(it->plans);
  /* Types made in this arena may still be referenced by values that
   * outlive this interpreter (results of a run_parallel thread): keep the
   * arena until the last interpreter of the family goes. */
  arena_node *node = xcalloc(1, sizeof *node);
  pthread_mutex_lock(&sh->mu);
  if (node) {
    node->a = it->arena;
    node->next = sh->dead_arenas;
    sh->dead_arenas = node;
  } else {
    arena_deinit(&it->arena);
  }
  int left = --sh->refs;
  pthread_mutex_unlock(&sh->mu);
  free(it);
  if (left) return;
  if (sh->probe_cleanup) sh->probe_cleanup(sh->probe);
  for (uint32_t i = 0; i < sh->once_n; i++) free(sh->once[i]);
  free(sh->once);
  for (arena_node *a = sh->dead_arenas, *next; a; a = next) {
    next = a->next;
    arena_deinit(&a->a);
    free(a);
  }
  pthread_mutex_destroy(&sh->mu);
  free(sh);
}

void interp_set_cancel(interp *it, const bool *flag) { it->cancel = flag; }

bool interp_was_cancelled(const interp *it) { return it->cancelled; }

const hlo_module_ir *interp_module(const interp *it) { return it->m; }
const interp_options *interp_opts(const interp *it) { return &it->opts; }
arena *interp_arena(interp *it) { return &it->arena; }
interp_process *interp_current_process(interp *it) { return &it->proc; }

const hlo_type *interp_scalar_type(interp *it, hlo_dtype t) {
  if ((unsigned)t >= HLO_DTYPE_COUNT) return NULL;
  if (!it->scalar[t]) it->scalar[t] = type_tensor(&it->arena, t, 0, NULL);
  return it->scalar[t];
}

bool interp_first_time(interp *it, const char *key) {
  interp_shared *sh = it->sh;
  bool first = true;
  pthread_mutex_lock(&sh->mu);
  for (uint32_t i = 0; i < sh->once_n && first; i++) first = strcmp(sh->once[i], key) != 0;
  char **grown = first ? xrealloc(sh->once, (sh->once_n + 1) * sizeof *grown) : NULL;
  if (grown) {
    sh->once = grown;
    size_t len = strlen(key) + 1;
    if ((sh->once[sh->once_n] = xmalloc(len)) != NULL) memcpy(sh->once[sh->once_n++], key, len);
  }
  pthread_mutex_unlock(&sh->mu);
  return first;
}

void *interp_probe_state(interp *it) {
  pthread_mutex_lock(&it->sh->mu);
  void *p = it->sh->probe;
  pthread_mutex_unlock(&it->sh->mu);
  return p;
}

void interp_set_probe_state(interp *it, void *state, void (*cleanup)(void *)) {
  pthread_mutex_lock(&it->sh->mu);
  it->sh->probe = state;
  it->sh->probe_cleanup = cleanup;
  pthread_mutex_unlock(&it->sh->mu);
}

hlo_status interp_error(const hlo_op *op, hlo_status_code code, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  const char *name = op ? op_name(op->opcode) : "interpreter";
  if (n < 0) return status_at(code, op ? &op->loc : NULL, "%s: (bad message)", name);
  if ((size_t)n < sizeof small) return status_at(code, op ? &op->loc : NULL, "%s: %s", name, small);
  char *big = xmalloc((size_t)n + 1);
  if (!big) return status_at(code, op ? &op->loc : NULL, "%s: %s", name, small);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  hlo_status st = status_at(code, op ? &op->loc : NULL, "%s: %s", name, big);
  free(big);
  return st;
}

const hlo_type *interp_expressed_type(interp *it, const hlo_type *qt) {
  if (!qt || qt->kind != TYPE_TENSOR || !qt->quant) return qt;
  for (uint32_t i = 0; i < it->qc_n; i++)
    if (it->qc[i].key == qt) return it->qc[i].val;
  if (it->qc_n == it->qc_cap) {
    uint32_t cap = it->qc_cap ? it->qc_cap * 2 : 16;
    qcache_entry *n = xrealloc(it->qc, cap * sizeof *n);
    if (!n) return NULL;
    it->qc = n;
    it->qc_cap = cap;
  }
  hlo_type *e = type_tensor(&it->arena, qt->quant->expressed, qt->rank, qt->dims);
  if (!e) return NULL;
  it->qc[it->qc_n].key = qt;
  it->qc[it->qc_n].val = e;
  it->qc_n++;
  return e;
}

/* ------------------------------------------------------------ the walker */

/* Ops whose spec semantics on quantized tensors are dequantize_op_quantize
 * (or dequantize_compare / dequantize_select_quantize / hybrid ops). */
static bool op_uses_dequantize(hlo_opcode c) {
  switch (c) {
  case OP_BITCAST_CONVERT:
  case OP_CONVERT:
  case OP_UNIFORM_QUANTIZE:
  case OP_UNIFORM_DEQUANTIZE:
    return false;
  case OP_DOT:
  case OP_DOT_GENERAL:
  case OP_CONVOLUTION:
  case OP_DYNAMIC_CONV:
  case OP_BATCH_NORM_GRAD:
  case OP_BATCH_NORM_INFERENCE:
  case OP_BATCH_NORM_TRAINING:
  case OP_CHOLESKY:
  case OP_TRIANGULAR_SOLVE:
    return true;
  default:
    return (op_flags(c) & OPF_ELEMENTWISE) != 0;
  }
}

static bool is_quant(const hlo_type *t) { return t && t->kind == TYPE_TENSOR && t->quant; }

#define SMALL 8

/* Calls the kernel of `op`, wrapping it in dequantize/quantize where the
 * spec says so. */
static hlo_status call_kernel(interp *it, interp_kernel k, const hlo_op *op, tensor *const *in,
                              tensor **out) {
  uint32_t nr = op->num_results, no = op->num_operands;
  const hlo_type *rt_small[SMALL];
  const hlo_type **rt = nr <= SMALL ? rt_small : xcalloc(nr, sizeof *rt);
  if (!rt) return interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  bool quant = false;
  for (uint32_t i = 0; i < nr; i++) {
    rt[i] = op->results[i].type;
    if (is_quant(rt[i])) quant = true;
  }
  for (uint32_t i = 0; i < no && !quant; i++)
    if (is_quant(in[i]->type)) quant = true;
  hlo_status st = NULL;
  if (!quant || !op_uses_dequantize(op->opcode)) {
    st = k(it, op, in, rt, out);
    goto done;
  }
  /* dequantize_op_quantize */
  tensor *fin_small[SMALL];
  tensor **fin = no <= SMALL ? fin_small : xcalloc(no, sizeof *fin);
  tensor *fout_small[SMALL] = {0};
  tensor **fout = nr <= SMALL ? fout_small : xcalloc(nr, sizeof *fout);
  const hlo_type *ert_small[SMALL];
  const hlo_type **ert = nr <= SMALL ? ert_small : xcalloc(nr, sizeof *ert);
  if (!fin || !fout || !ert) {
    st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    goto qdone;
  }
  memset(fin, 0, no * sizeof *fin);
  for (uint32_t i = 0; i < no && !st; i++) {
    if (is_quant(in[i]->type))
      st = interp_dequantize(it, op, in[i], &fin[i]);
    else
      fin[i] = tensor_retain(in[i]);
  }
  for (uint32_t i = 0; i < nr && !st; i++) {
    ert[i] = interp_expressed_type(it, rt[i]);
    if (!ert[i]) st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!st) st = k(it, op, fin, ert, fout);
  for (uint32_t i = 0; i < nr && !st; i++) {
    if (is_quant(rt[i])) {
      st = interp_quantize(it, op, fout[i], rt[i], &out[i]);
    } else {
      out[i] = fout[i];
      fout[i] = NULL;
    }
  }
  if (st)
    for (uint32_t i = 0; i < nr; i++) {
      tensor_release(out[i]);
      out[i] = NULL;
    }
  for (uint32_t i = 0; i < nr; i++) tensor_release(fout[i]);
qdone:
  if (fin)
    for (uint32_t i = 0; i < no; i++) tensor_release(fin[i]);
  if (fin != fin_small) free(fin);
  if (fout != fout_small) free(fout);
  if (ert != ert_small) free(ert);
done:
  if (rt != rt_small) free(rt);
  return st;
}

static void frame_set(frame *fr, uint32_t id, tensor *v) {
  tensor_release(fr->vals[id]);
  fr->vals[id] = v;
}

static hlo_status lookup(const frame *fr, const hlo_op *op, const hlo_value *v, tensor **out) {
  if (v->id >= fr->n || !fr->vals[v->id]) {
    return interp_error(op, HLO_INTERNAL, "operand %%%s has no value (used before definition?)",
                        v->name ? v->name : "?");
  }
  *out = fr->vals[v->id];
  return NULL;
}

/* Runs one op: gathers its operand values from the frame, calls its kernel
 * (through call_kernel for quantized types) and stores the results. */
static hlo_status exec_op(interp *it, frame *fr, const hlo_op *op) {
  interp_kernel k = (unsigned)op->opcode < OP_COUNT ? kernel_table[op->opcode] : NULL;
  if (!k)
    return status_at(HLO_UNIMPLEMENTED, &op->loc, "no interpreter kernel for %s",
                     op_name(op->opcode) ? op_name(op->opcode) : "?");
  uint32_t no = op->num_operands, nr = op->num_results;
  tensor *in_small[SMALL], *out_small[SMALL] = {0};
  tensor **in = no <= SMALL ? in_small : xcalloc(no, sizeof *in);
  tensor **out = nr <= SMALL ? out_small : xcalloc(nr, sizeof *out);
  hlo_status st = NULL;
  if (!in || !out) {
    st = interp_error(op, HLO_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < no && !st; i++) st = lookup(fr, op, op->operands[i], &in[i]);
  if (st) goto done;
  st = call_kernel(it, k, op, in, out);
  if (st) goto done;
  for (uint32_t i = 0; i < nr; i++) {
    if (!out[i] || op->results[i].id >= fr->n) {
      st = interp_error(op, HLO_INTERNAL, "the kernel produced no result #%u", i);
      break;
    }
  }
  if (st) {
    for (uint32_t i = 0; i < nr; i++) tensor_release(out[i]);
    goto done;
  }
  for (uint32_t i = 0; i < nr; i++) frame_set(fr, op->results[i].id, out[i]);
done:
  if (in != in_small) free(in);
  if (out != out_small) free(out);
  return st;
}

/* When to drop values: for each op of a block, the ids of the values
 * defined in the block (op results) whose last use — by the op itself or
 * by an op of its nested regions — is that op. Computed once per block per
 * interpreter; keeps a long function's memory at its live set. */
typedef struct block_plan {
  const hlo_block *b;
  uint32_t nops;
  uint32_t *start;  /* nops + 1 offsets into ids */
  uint32_t *ids;
} block_plan;

/* Records op index `j` (of the enclosing block) as the last use of every
 * value that `op` or its nested regions read. */
static void mark_uses(const hlo_op *op, uint32_t j, int64_t *last, uint32_t n) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    uint32_t id = op->operands[i]->id;
    if (id < n && last[id] != -2) last[id] = j;
  }
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (const hlo_op *o = op->regions[r].block.first; o; o = o->next) mark_uses(o, j, last, n);
}

/* The plan of block `b`: for each op, the values of `b` whose last use it
 * is, so run_block can release them early. NULL on out of memory. */
static block_plan *make_plan(interp *it, const hlo_block *b, uint32_t n) {
  uint32_t nops = 0;
  for (const hlo_op *op = b->first; op; op = op->next) nops++;
  int64_t *last = xmalloc((n ? n : 1) * sizeof *last);
  if (!last) return NULL;
  for (uint32_t i = 0; i < n; i++) last[i] = -2; /* not defined in b */
  for (const hlo_op *op = b->first; op; op = op->next)
    for (uint32_t i = 0; i < op->num_results; i++)
      if (op->results[i].id < n) last[op->results[i].id] = -1;
  uint32_t j = 0;
  for (const hlo_op *op = b->first; op; op = op->next, j++) mark_uses(op, j, last, n);
  block_plan *p = arena_alloc(&it->arena, sizeof *p);
  uint32_t *start = p ? arena_calloc(&it->arena, nops + 1, sizeof *start) : NULL;
  uint32_t total = 0;
  j = 0;
  for (const hlo_op *op = b->first; op; op = op->next, j++)
    for (uint32_t i = 0; i < op->num_results; i++) {
      uint32_t id = op->results[i].id;
      if (id < n && last[id] != -2) total++;
    }
  uint32_t *ids = start ? arena_calloc(&it->arena, total ? total : 1, sizeof *ids) : NULL;
  if (!ids) {
    free(last);
    return NULL;
  }
  /* Count per op, then fill. */
  for (uint32_t id = 0; id < n; id++)
    if (last[id] >= 0) start[last[id] + 1]++;
  j = 0;
  for (const hlo_op *op = b->first; op; op = op->next, j++)
    for (uint32_t i = 0; i < op->num_results; i++) {
      uint32_t id = op->results[i].id;
      if (id < n && last[id] == -1) start[j + 1]++;
    }
  for (uint32_t k = 0; k < nops; k++) start[k + 1] += start[k];
  uint32_t *fill = xcalloc(nops + 1, sizeof *fill);
  if (!fill) {
    free(last);
    return NULL;
  }
  j = 0;
  for (const hlo_op *op = b->first; op; op = op->next, j++)
    for (uint32_t i = 0; i < op->num_results; i++) {
      uint32_t id = op->results[i].id;
      if (id >= n || last[id] == -2) continue;
      uint32_t at = last[id] >= 0 ? (uint32_t)last[id] : j;
      ids[start[at] + fill[at]++] = id;
    }
  free(fill);
  free(last);
  p->b = b;
  p->nops = nops;
  p->start = start;
  p->ids = ids;
  return p;
}

static size_t plan_hash(const hlo_block *b, uint32_t cap) {
  return (size_t)(((uintptr_t)b >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

/* The plan of block `b` (NULL when out of memory: then nothing is dropped
 * early). */
static block_plan *get_plan(interp *it, const hlo_block *b, uint32_t n) {
  if (it->plans_cap) {
    for (size_t h = plan_hash(b, it->plans_cap);; h = (h + 1) & (it->plans_cap - 1)) {
      if (!it->plans[h]) break;
      if (it->plans[h]->b == b) return it->plans[h];
    }
  }
  if ((it->plans_n + 1) * 2 > it->plans_cap) {
    uint32_t cap = it->plans_cap ? it->plans_cap * 2 : 64;
    block_plan **np = xcalloc(cap, sizeof *np);
    if (!np) return NULL;
    for (uint32_t i = 0; i < it->plans_cap; i++) {
      block_plan *q = it->plans[i];
      if (!q) continue;
      size_t h = plan_hash(q->b, cap);
      while (np[h]) h = (h + 1) & (cap - 1);
      np[h] = q;
    }
    free(it->plans);
    it->plans = np;
    it->plans_cap = cap;
  }
  block_plan *p = make_plan(it, b, n);
  if (!p) return NULL;
  size_t h = plan_hash(b, it->plans_cap);
  while (it->plans[h]) h = (h + 1) & (it->plans_cap - 1);
  it->plans[h] = p;
  it->plans_n++;
  return p;
}

static bool is_terminator(const hlo_op *op) {
  return op->opcode == OP_RETURN || op->opcode == OP_FUNC_RETURN ||
         (op_flags(op->opcode) & OPF_TERMINATOR);
}

/* Runs block `b` in frame `fr`: binds its arguments, runs its ops, and
 * writes the terminator's operands to out[0..*out_n) as new references. */
static hlo_status run_block(interp *it, frame *fr, const hlo_block *b, tensor *const *args,
                            uint32_t nargs, tensor **out, uint32_t cap, uint32_t *out_n) {
  *out_n = 0;
  const hlo_op *where = b->parent ? b->parent->parent : NULL;
  if (nargs != b->num_args) {
    if (where)
      return interp_error(where, HLO_INTERNAL, "region expects %u arguments, got %u",
                          b->num_args, nargs);
    return status_new(HLO_INTERNAL, "block expects %u arguments, got %u", b->num_args, nargs);
  }
  for (uint32_t i = 0; i < nargs; i++) {
    if (b->args[i].id >= fr->n) return status_new(HLO_INTERNAL, "block argument out of frame");
    frame_set(fr, b->args[i].id, tensor_retain(args[i]));
  }
  if (++it->depth > MAX_DEPTH) {
    it->depth--;
    /* a function's body has no parent op: its first op (the call that
     * recursed, in a self-recursive function) locates the error */
    const hlo_loc *loc = where ? &where->loc : b->first ? &b->first->loc : NULL;
    return status_at(HLO_RESOURCE_EXHAUSTED, loc,
                     "calls and regions nest deeper than %d levels", MAX_DEPTH);
  }
  hlo_status st = NULL;
  block_plan *plan = get_plan(it, b, fr->n);
  uint32_t j = 0;
  for (const hlo_op *op = b->first; op && !st; op = op->next, j++) {
    if (is_terminator(op)) {
      if (op->num_operands > cap) {
        st = interp_error(op, HLO_INTERNAL, "returns %u values where %u are expected",
                          op->num_operands, cap);
        break;
      }
      uint32_t i = 0;
      for (; i < op->num_operands && !st; i++) {
        tensor *v = NULL;
        st = lookup(fr, op, op->operands[i], &v);
        if (!st) out[i] = tensor_retain(v);
      }
      if (st) {
        for (uint32_t q = 0; q + 1 < i; q++) {
          tensor_release(out[q]);
          out[q] = NULL;
        }
      } else {
        *out_n = op->num_operands;
      }
      break;
    }
    if (it->cancel && __atomic_load_n(it->cancel, __ATOMIC_ACQUIRE)) {
      it->cancelled = true;
      st = interp_error(op, HLO_UNAVAILABLE, "the run was cancelled (interp_set_cancel)");
      break;
    }
    st = exec_op(it, fr, op);
    if (!st && plan && j < plan->nops)
      for (uint32_t k = plan->start[j]; k < plan->start[j + 1]; k++)
        frame_set(fr, plan->ids[k], NULL);
  }
  it->depth--;
  return st;
}

static hlo_status frame_init(frame *fr, const hlo_func *f, const hlo_region *body, uint32_t n) {
  memset(fr, 0, sizeof *fr);
  fr->f = f;
  fr->body = body;
  fr->n = n;
  fr->vals = xcalloc(n ? n : 1, sizeof *fr->vals);
  if (!fr->vals) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}

static void frame_deinit(frame *fr) {
  if (!fr->vals) return;
  for (uint32_t i = 0; i < fr->n; i++) tensor_release(fr->vals[i]);
  free(fr->vals);
  fr->vals = NULL;
}

/* Raises *mx above every value id in `b` and its nested regions. */
static void max_id_block(const hlo_block *b, uint32_t *mx) {
  for (uint32_t i = 0; i < b->num_args; i++)
    if (b->args[i].id + 1 > *mx) *mx = b->args[i].id + 1;
  for (const hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->num_results; i++)
      if (op->results[i].id + 1 > *mx) *mx = op->results[i].id + 1;
    for (uint32_t r = 0; r < op->num_regions; r++) max_id_block(&op->regions[r].block, mx);
  }
}


hlo_status interp_call(interp *it, const hlo_func *f, tensor *const *args, uint32_t nargs,
                       tensor ***out_results) {
  *out_results = NULL;
  if (nargs != f->num_args)
    return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s takes %u arguments, got %u", f->name,
                     f->num_args, nargs);
  for (uint32_t i = 0; i < nargs; i++) {
    const hlo_type *want = f->body.block.args[i].type, *got = args[i] ? args[i]->type : NULL;
    if (!got) return status_at(HLO_INVALID_ARGUMENT, &f->loc, "@%s: argument %u is missing",
                               f->name, i);
    if (want->kind != got->kind ||
        (want->kind == TYPE_TENSOR &&
         (want->dtype != got->dtype || want->rank != got->rank ||
          (want->rank && memcmp(want->dims, got->dims, want->rank * sizeof *want->dims)))))
      return status_at(HLO_INVALID_ARGUMENT, &f->loc,
                       "@%s: argument %u does not have the parameter's type", f->name, i);
  }
  if (!it->frame) it->cancelled = false; /* an outermost run starts */
  if (func_needs_numbering(f)) {
    /* A function created after interp_create: number it now. */
    pthread_mutex_lock(&it->sh->mu);
    if (func_needs_numbering(f)) func_number_values((hlo_func *)f);
    pthread_mutex_unlock(&it->sh->mu);
  }
  frame fr;
  HLO_TRY(frame_init(&fr, f, &f->body, f->num_values));
  fr.up = it->frame;
  it->frame = &fr;
  tensor **res = xcalloc(f->num_results ? f->num_results : 1, sizeof *res);
  hlo_status st = NULL;
  uint32_t n = 0;
  if (!res)
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  else
    st = run_block(it, &fr, &f->body.block, args, nargs, res, f->num_results, &n);
  if (!st && n != f->num_results)
    st = status_at(HLO_INTERNAL, &f->loc, "@%s returned %u values, expected %u", f->name, n,
                   f->num_results);
  it->frame = fr.up;
  frame_deinit(&fr);
  if (st) {
    if (res)
      for (uint32_t i = 0; i < n; i++) tensor_release(res[i]);
    free(res);
    return st;
  }
  *out_results = res;
  return NULL;
}

/* The outermost region holding `r` (a function body when `r` is linked into
 * a function). */
static const hlo_region *outermost(const hlo_region *r) {
  while (r->parent && r->parent->parent && r->parent->parent->parent)
    r = r->parent->parent->parent;
  return r;
}

hlo_status interp_run_region(interp *it, const hlo_region *r, tensor *const *args,
                             uint32_t nargs, tensor **out, uint32_t cap, uint32_t *out_n) {
  *out_n = 0;
  const hlo_region *top = outermost(r);
  for (frame *fr = it->frame; fr; fr = fr->up)
    if (fr->body == top) return run_block(it, fr, &r->block, args, nargs, out, cap, out_n);
  /* Not inside a running function: a temporary frame. */
  uint32_t n = 0;
  const hlo_func *owner = NULL;
  for (const hlo_func *f = it->m ? it->m->funcs : NULL; f; f = f->next)
    if (&f->body == top) owner = f;
  if (owner && !func_needs_numbering(owner)) n = owner->num_values;
  max_id_block(&top->block, &n);
  frame fr;
  HLO_TRY(frame_init(&fr, owner, top, n));
  fr.up = it->frame;
  it->frame = &fr;
  hlo_status st = run_block(it, &fr, &r->block, args, nargs, out, cap, out_n);
  it->frame = fr.up;
  frame_deinit(&fr);
  return st;
}

hlo_status interp_run_op(interp *it, const hlo_op *op, const hlo_value *const *vals,
                         tensor *const *ins, uint32_t n, tensor **out) {
  if (!op->parent || !op->parent->parent)
    return interp_error(op, HLO_INTERNAL, "interp_run_op: the op is in no function body");
  const hlo_region *top = outermost(op->parent->parent);
  uint32_t nv = 0;
  const hlo_func *owner = NULL;
  for (const hlo_func *f = it->m ? it->m->funcs : NULL; f; f = f->next)
    if (&f->body == top) owner = f;
  if (owner && !func_needs_numbering(owner)) nv = owner->num_values; /* nested values too */
  else max_id_block(&top->block, &nv);
  frame fr;
  HLO_TRY(frame_init(&fr, owner, top, nv));
  hlo_status st = NULL;
  for (uint32_t i = 0; i < n && !st; i++) {
    if (vals[i]->id >= nv) st = interp_error(op, HLO_INTERNAL, "interp_run_op: value out of frame");
    else frame_set(&fr, vals[i]->id, tensor_retain(ins[i]));
  }
  fr.up = it->frame;
  it->frame = &fr;
  if (!st) st = exec_op(it, &fr, op);
  it->frame = fr.up;
  for (uint32_t i = 0; i < op->num_results && !st; i++) {
    out[i] = fr.vals[op->results[i].id];
    fr.vals[op->results[i].id] = NULL;
  }
  frame_deinit(&fr);
  return st;
}
