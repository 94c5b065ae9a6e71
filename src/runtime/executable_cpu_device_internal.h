/* executable_cpu_device_internal.h — the device executable's private
 * types, shared by executable_cpu_device.c (the host mirror),
 * executable_cpu_graph.c (graph recording and replay),
 * executable_cpu_graph_dag.c (a capture as a DAG) and
 * executable_cpu_cond_graph.c (conditional graph nodes: a while without a
 * known trip count, a case / if); the design is the header comments of
 * executable_cpu_device.c (device memory) and executable_cpu_graph.c
 * (graphs). Not for other files. */
#ifndef HLO_RUNTIME_EXECUTABLE_CPU_DEVICE_INTERNAL_H
#define HLO_RUNTIME_EXECUTABLE_CPU_DEVICE_INTERNAL_H
#include "runtime/executable_cpu_internal.h"
#include "support/runmap.h"

enum { ON_HOST = 1, ON_DEV = 2 };

typedef struct dev_entry {
  uint8_t *host;        /* the host mirror (key): a tensor's data */
  size_t bytes;
  uint8_t *dev;         /* its device buffer (backend alloc) */
  uint8_t state;        /* ON_HOST | ON_DEV */
  bool pinned;          /* a constant's: kept for the executable's life */
  bool lent;            /* dev is not the entry's to free: an argument's device copy (the
                           caller's), a graph buffer, a result's (handed over) */
  bool gbuf;            /* dev is graph buffer gbi (handed to the tensor when a result) */
  uint32_t gbi;
  tensor *owner;        /* a reference: keeps `host` allocated */
  /* the allocation of a result of program 0 that holds temporaries before
   * it is written (x->result_homes; executable_cpu_buffers.c's
   * place_in_results): its validity per 64-byte granule, as the arena's
   * (then `state` is unused: entry_state); NULL: one state for the whole
   * entry */
  runmap *gran;
} dev_entry;

/* ---- graph replay (the design: executable_cpu_graph.c's header comment) ---- */

enum {
  GRAPH_SLOTS = 4,          /* captured graphs kept per executable */
  GRAPH_MAX_CAPTURES = 8,   /* captures per executable, failed ones included */
  GRAPH_MAX_CALLS = 4096,   /* calls one graph records at most (loops unrolled) */
};

/* The kinds of a recorded call: the backend's work slots, and a device to
 * device copy (issued as copy_box). */
typedef enum gcall_kind {
  GC_LAUNCH, GC_GEMM, GC_CONV, GC_REDUCE_WINDOW, GC_SELECT_SCATTER, GC_SORT, GC_COPY_BOX,
  GC_FILL_BOX, GC_GATHER, GC_SCATTER, GC_COPY,
  /* a conditional WHILE node (cpu_dev_host_in: the loop's predicate): the
   * setting of its condition from p[0] (bytes: its size, nin: bit 0 only)
   * and the node; then the body's calls; GC_COND_SET, the setting of the
   * condition in the body; GC_COND_END, the body's end. index: the END's
   * position (BEGIN; COND_OPEN while the body is being recorded), the
   * BEGIN's (END) */
  GC_COND_BEGIN, GC_COND_SET, GC_COND_END,
  /* an IF or SWITCH node (a case / if): GC_COND_BEGIN (u.cond: its kind,
   * branches, a signed selector), branch 0's calls, GC_COND_NEXT (index:
   * the END's position) and the next branch's calls ..., GC_COND_END */
  GC_COND_NEXT,
} gcall_kind;

/* One recorded call. Zeroed before it is filled field by field, so that
 * two records of the same call compare equal byte for byte (memcmp). */
typedef struct gcall {
  uint32_t kind;            /* gcall_kind */
  uint32_t index;           /* GC_LAUNCH: the kernel */
  uint32_t ptr0, nptr;      /* its pointers: glist.p[ptr0 .. ptr0 + nptr) */
  uint32_t nin;             /* GC_SORT: inputs (then as many outputs) */
  uint32_t grp;             /* its range group (graph_state.grp: what it reads and writes,
                               for the graph's DAG); 0: unknown (a barrier) */
  backend_module *mod;      /* GC_LAUNCH: the module */
  const void *desc;         /* the conv, window or sort descriptor (the step's) */
  uint64_t bytes;           /* GC_COPY */
  union {
    backend_gemm g;
    backend_box box;
    backend_rows rows;
    struct {
      uint32_t kind, nbranches; /* GC_COND_BEGIN, GC_COND_SET: BACKEND_COND_* */
      bool is_signed;
    } cond;
  } u;
  uint8_t value[16];        /* GC_FILL_BOX: the element */
} gcall;

typedef struct glist {
  gcall *c;
  uint32_t n, cap;
  void **p;
  uint32_t np, capp;
} glist;

/* What a run's calls depend on (cpu_dev_graph_key): per argument its device
 * pointer and what the runtime's decisions read of it, the pointer of
 * every graph buffer, the arena's validity. Two runs of an eligible program with the same key
 * make the same calls (the program reads nothing on the host: its steps,
 * allocations and frees follow from these alone). */
typedef struct gkey {
  uint64_t *w;
  uint32_t n, cap;
  bool ok;                  /* made (no tuple argument, no out of memory) */
} gkey;

/* How a replay without the steps makes the results (graph_result):
 * result i is handed graph buffer res[i] (NONE: none, a zero-byte
 * result), its host mirror valid when hv[i]. */
typedef struct grecipe {
  uint32_t *res;
  bool *hv;
  uint32_t n, cap;
  bool ok;
} grecipe;

typedef struct gslot {
  void *exec;               /* the backend's graph (NULL: empty slot) */
  glist calls;              /* what it recorded */
  uint64_t used;            /* the run that last launched it (replacement: the oldest) */
  gkey key;                 /* the key of the last run that launched it, with ... */
  grecipe recipe;           /* ... its results (ok: a later run of that key skips its steps) */
} gslot;

/* A graph buffer: device memory kept across runs for the allocations of
 * deferred runs (cpu_dev_graph_buffer). p NULL: handed to a result (its pointer
 * may come back through the pool when the result is released). */
typedef struct gbuffer {
  void *p;
  size_t bytes;
  bool busy;                /* holds a live tensor of this run */
} gbuffer;

/* Where released results give their graph buffers back (shared by the
 * executable and its results' tensor_device, which may outlive it or be
 * released from another thread: a mutex and a reference count). ret[k]:
 * the pointer of graph buffer k given back, or NULL. */
typedef struct gpool {
  pthread_mutex_t mu;
  uint32_t refs;            /* the executable's, one per result holding a buffer */
  bool dead;                /* the executable is gone: buffers given back are freed */
  const backend *be;
  void **ret;
  uint32_t n;
} gpool;

/* A result's device copy that is a graph buffer (tensor_device first). */
typedef struct gresult {
  tensor_device d;
  gpool *pool;
  uint32_t k;
} gresult;

/* A while loop without a known trip count that a deferred run records as
 * a conditional WHILE node (program_eligible; the design: the header
 * comment). */
typedef struct cwhile {
  const step *s;
  uint32_t cond, body;      /* its programs */
  const hlo_value *flag;    /* the cond's result (in the cond's arena) */
  uint32_t pred_size;       /* its bytes */
  bool pred_bit;            /* an i1: bit 0 */
  /* the tensors its cond's arguments were bound to at the calls recorded
   * since its predicate was last read (cond_snap): the carried values the
   * cond just ran on (an argument is unbound after its last reader) */
  const tensor **snap;
  uint32_t n;
} cwhile;

/* Carried value i of the loop whose body a deferred run is recording:
 * where it lies at the start of an iteration on the host's walk (a), where
 * the body leaves it (b), the slot the node's iterations carry it in (s: a,
 * or a loop-owned buffer when a is not the loop's alone). */
typedef struct cslot {
  uint8_t *a, *b, *s;
  size_t bytes;
} cslot;

/* A loop-owned buffer (cond_temp): kept across runs, so that a run making
 * the same calls gets the same pointers. */
typedef struct ctemp {
  void *p;
  size_t bytes;
  bool busy;                /* taken by this run */
} ctemp;

enum { COND_OPEN = 0xffffffffu };

/* A case / if that a deferred run records as an IF or SWITCH node
 * (cond_case_eligible; the design: the header comment). */
typedef struct ccase {
  const step *s;
  const hlo_value *sel;     /* its selector (in the arena) */
  uint32_t kind;            /* BACKEND_COND_IF, BACKEND_COND_SWITCH */
  uint32_t pred_size;
  bool pred_bit, pred_signed;
} ccase;

/* A device range [lo, hi) a recorded call reads (w false) or writes. */
typedef struct grange {
  uintptr_t lo, hi;
  bool w;
} grange;

/* A range group: the ranges of a step's operands and results (cpu_dev_in /
 * cpu_dev_out), shared by the calls the step makes, or a device copy's
 * exact ones: rg[r0 .. r0 + nr). */
typedef struct ggroup {
  uint32_t r0, nr;
} ggroup;

typedef struct graph_state {
  bool enabled;             /* the backend has graphs, HLO_CUDA_GRAPHS is not 0 */
  bool cond_on;             /* the backend has conditional nodes, HLO_CUDA_COND_GRAPHS is
                               not 0 */
  bool walk_in_cond;        /* program_eligible: inside a conditional loop's programs */
  cwhile *cw;               /* the loops a deferred run records as conditional nodes */
  uint32_t ncw, capcw;
  int32_t open;             /* cw index of the loop whose body is being recorded, or -1 */
  uint32_t open_at;         /* its GC_COND_BEGIN in calls */
  void *open_flag;          /* the device pointer of its predicate */
  cslot *cs;                /* its carried values */
  uint32_t ncs, capcs;
  ctemp *tmp;               /* loop-owned buffers */
  uint32_t ntmp;
  ccase *cc;                /* the cases / ifs a deferred run records as conditional nodes */
  uint32_t ncc, capcc;
  int32_t copen;            /* cc index of the case whose branch 0 the host is walking, or -1 */
  uint32_t copen_at;        /* where branch 0's calls begin in calls */
  void *copen_sel;          /* the device pointer of its selector */
  bool prerun;              /* its other branches are being recorded (case_open) */
  glist *cbody;             /* their calls: branch b in cbody[b - 1] */
  uint32_t ncbody;
  tensor **cres;            /* their results: branch b's i-th in cres[(b - 1) * nout + i] */
  uint32_t ncres, capcres;
  uint32_t nresults;        /* cpu_dev_result calls of this run */
  uint64_t cond_nodes;      /* conditional nodes recorded (deferred runs) */
  uint64_t cond_captured;   /* conditional nodes in captured graphs */
  bool verbose;             /* HLO_CUDA_GRAPHS=verbose: each capture told on stderr */
  bool checked, eligible;   /* program 0 is device work only (graph_eligible) */
  bool deferring;           /* this run's work calls are being recorded */
  bool warm;                /* a deferred run was issued (the libraries are set up) */
  bool told;                /* verbose: why program 0 is not deferred, told once */
  bool told_recipe;         /* verbose: why a graph is replayed with its steps, told once */
  const char *why;          /* why it is not (graph_eligible), or NULL */
  uint32_t *knbufs;         /* buffers of each kernel (inputs + outputs), by index */
  uint32_t nk;
  glist calls;              /* the run's recorded calls */
  gkey key;                 /* the run's key (cpu_dev_graph_key) */
  grecipe recipe;           /* its results so far (cpu_dev_result) */
  gslot *launched;          /* the slot this run launched, or NULL */
  gslot *replay;            /* the slot replayed without the steps (cpu_dev_replay) */
  uint32_t nreplayed;       /* results made by cpu_dev_replay_result so far */
  gslot slot[GRAPH_SLOTS];
  gbuffer *gb;              /* graph buffers (cpu_dev_graph_buffer) */
  uint32_t ngb;
  gpool *pool;              /* results' graph buffers given back (NULL: out of memory) */
  void **dfree;             /* frees deferred to the issue */
  uint32_t ndfree, capdfree;
  uint64_t runs, captures, launches, failures, replays;
  /* the DAG (the design: the header comment): HLO_CUDA_GRAPH_DAG not 0 and
   * the backend's graph_deps slots; the run's range groups (group k is
   * grp[k - 1]); grp_open: the last step group takes more ranges (no call
   * since); grp_cur: the step group calls are recorded in (0: none);
   * grp_bad: out of memory (every call a barrier) */
  bool dag;
  bool grp_open, grp_bad;
  uint32_t grp_cur;
  ggroup *grp;
  uint32_t ngrp, capgrp;
  grange *rg;
  uint32_t nrg, caprg;
  /* the last DAG capture's calls (outside conditional bodies), edges
   * between them, the longest path (in calls), barriers */
  uint64_t dag_calls, dag_edges, dag_depth, dag_barriers;
  backend shadow;           /* x->be while deferring */
} graph_state;

struct cpu_dev {
  uint8_t *arena;       /* the device arena (progs[0].temp_bytes, rounded up) */
  uint8_t *host_arena;  /* progs[0].arena when the device arena was made */
  size_t arena_bytes;
  /* the state (ON_HOST | ON_DEV) of each 64-byte granule of the arena, as
   * runs (support/runmap.h): a step's bookkeeping costs O(runs), not
   * O(bytes / 64) (a 128 MiB buffer is 2M granules, one run) */
  runmap granules;
  dev_entry *e;         /* e[0..npinned): the constants', then e[npinned..nfixed) the
                           run's arguments' (cpu_dev_begin_run: they live as long as the
                           run), each part sorted by host address; then the others */
  uint32_t n, cap, npinned, nfixed;
  size_t *vbytes;       /* cpu_value_bytes by value id (SIZE_MAX: not yet known) */
  uint8_t **onb;        /* per program, per step: cpu_copy_on_backend + 1 (0: not yet known) */
  void *empty;          /* a device pointer for zero-byte buffers */
  const backend *real;  /* the backend (x->be but while a run is deferred) */
  graph_state g;
};

#define GRANULE 64

/* executable_cpu_device.c, for the graph files (each documented at its
 * definition): where value v lies in the arena or in a result's
 * allocation (-1: not an arena value) and the host address of such a
 * value in this run; the entry whose host range holds p (-1: none);
 * whether p lies in the host arena; whether host[p, p + bytes) is valid
 * on the device; a copy of n bytes between device buffers on be's stream
 * (copy_box, else be's copy). */
int64_t cpu_dev_arena_at(const cpu_exec *x, const hlo_value *v, uint32_t *in);
uint8_t *cpu_dev_temp_host(const cpu_exec *x, const hlo_value *v);
int64_t cpu_dev_find(const cpu_dev *d, const uint8_t *p);
bool cpu_dev_in_arena(const cpu_dev *d, const uint8_t *p);
bool cpu_dev_valid_on_dev(const cpu_dev *d, const uint8_t *p, size_t bytes);
HLO_MUST_USE hlo_status cpu_dev_copy_d2d(const backend *be, void *dst, const void *src, size_t n);

/* executable_cpu_graph.c, for the conditional nodes (each documented at
 * its definition): issues a deferred run's calls (one graph launch, a
 * capture, or one by one); appending a call to a list, and freeing a
 * list. */
HLO_MUST_USE hlo_status cpu_dev_graph_flush(cpu_exec *x, bool allow_graph);
HLO_MUST_USE hlo_status cpu_dev_glist_add(glist *l, const gcall *c, const void *const *p,
                                          uint32_t np);
void cpu_dev_glist_free(glist *l);

/* executable_cpu_graph.c, for the device memory side (each documented at
 * its definition): the graph state's start (cpu_dev_create) and end
 * (cpu_dev_destroy); before a run, whether it may be deferred (the state
 * reset for it), its key, and its deferral; a deferred run's graph buffer
 * for an allocation, a device buffer's free (after the deferred calls), a
 * copy between device buffers (recorded in a deferred run); a graph
 * buffer handed to a result, and how a result was made noted in a recipe
 * (RECIPE_NONE: no bytes; RECIPE_BAD: not a graph buffer of its own). */
enum { RECIPE_NONE = 0xffffffffu, RECIPE_BAD = 0xfffffffeu };
void cpu_dev_graph_init(cpu_dev *d);
void cpu_dev_graph_free(cpu_dev *d);
bool cpu_dev_graph_may_defer(cpu_exec *x);
void cpu_dev_graph_key(cpu_exec *x, tensor *const *args, uint32_t n);
void cpu_dev_graph_defer(cpu_exec *x);
HLO_MUST_USE hlo_status cpu_dev_graph_buffer(cpu_exec *x, size_t bytes, void **out,
                                             uint32_t *index);
void cpu_dev_buffer_free(cpu_exec *x, void *p);
HLO_MUST_USE hlo_status cpu_dev_graph_copy(cpu_exec *x, void *dst, const void *src, size_t n);
HLO_MUST_USE hlo_status cpu_dev_hand_graph_buffer(cpu_exec *x, tensor *r, uint32_t k, bool hv);
void cpu_dev_recipe_push(grecipe *r, uint32_t k, bool hv);

/* executable_cpu_cond_graph.c, for the recording: a host read of
 * host[0..bytes) in a deferred run with conditional nodes — *took when it
 * was a loop's predicate or a case's selector, taken by the recording
 * (its host copy written); and, at the next call, host read or result
 * (`result`, or NULL), whether the open case's branch 0 is over (then its
 * SWITCH node is made). */
HLO_MUST_USE hlo_status cpu_dev_cond_pred(cpu_exec *x, uint8_t *host, size_t bytes, bool *took);
HLO_MUST_USE hlo_status cpu_dev_case_poll(cpu_exec *x, const tensor *result);

/* executable_cpu_graph.c, for the DAG capture: one recorded call c (its
 * pointers p) enqueued on be; a list issued on be, into the recording when
 * `capture` (conditional nodes through the graph_cond slots), else call by
 * call with conditional nodes run as the eager loop runs. Errors: the
 * backend's. */
HLO_MUST_USE hlo_status cpu_dev_issue_one(const backend *be, const gcall *c, void *const *p);
HLO_MUST_USE hlo_status cpu_dev_issue_all(const backend *be, const glist *l, bool capture);

/* executable_cpu_graph_dag.c (when g->dag): a device pointer p[0..bytes)
 * that the current step reads or writes (w), noted into its range group;
 * the group (or a copy's own) assigned to call c as it is recorded; list
 * l captured as a DAG into the recording open on x's backend (counts in
 * g->dag_*). Out of memory while noting: every call a barrier (grp_bad).
 * cpu_dev_issue_dag's errors: the backend's, HLO_RESOURCE_EXHAUSTED. */
void cpu_dev_dag_note(graph_state *g, const void *p, size_t bytes, bool w);
void cpu_dev_dag_assign(graph_state *g, gcall *c, const void *const *p);
HLO_MUST_USE hlo_status cpu_dev_issue_dag(cpu_exec *x, const glist *l);
#endif
