/* kernel.h — the kernel representation: the one unit both code generators
 * (the C emitter for CPUs now, the CUDA emitter later) print. Version 0.
 *
 * A fusion (a list of StableHLO ops) is lowered (lower_fusion.c) to a
 * `kernel`: a loop nest over an INDEX SPACE, a straight-line SSA BODY of
 * scalar instructions evaluated at each point of it, and OUTPUTS stored at
 * each point (or, for a reduction, once per row after a combiner has folded
 * the row). The emitters never decide anything: every choice that changes the
 * code's shape (tiles, threads) is in the kernel, made by a schedule
 * function, so the C and CUDA texts of one kernel compute the same thing.
 *
 * Design decisions, field by field:
 *
 * - Index space (`rank`, `dims`, `num_reduce_dims`): the output's dims; for a
 *   reduction, the reduced operand's dims, whose trailing `num_reduce_dims`
 *   are reduction dims (XLA's row reduction; a reduce over other dims is
 *   first made trailing by a transpose in the index map of its producer, a
 *   later step). The index variables x0..x{rank-1} are the coordinates.
 *
 * - Schedule (`sched`): `tile[d]` splits dim d into tiles of that size (a
 *   tile equal to the dim is "not split"); the tiles of the leading
 *   `num_thread_dims` dims are numbered row-major into one TILE INDEX space
 *   of kernel_num_tiles() tiles: the CPU runs a range of them per thread
 *   (the kernel takes [tile_begin, tile_end)), CUDA will map one tile to one
 *   block (blockIdx.x). Other split dims loop over their tiles inside the
 *   thread's tile (cache blocking). Reduction dims are never thread dims nor
 *   split: a row is reduced in one pass by one thread, or (`row_threads`, a
 *   GPU schedule) by the threads of one block, each folding a strided part
 *   of the row, combined as a tree (XLA's row-reduction
 *   emitter).
 *
 * - Index maps (`kernel_map`): for each tensor a load or store touches, its
 *   index as one AFFINE expression per tensor dim of the index variables
 *   (offset + sum coeff[i] * x_i). Broadcast drops dims (coefficient 0),
 *   transpose permutes rows, slice adds offsets and multiplies strides,
 *   reshape re-expresses the linear position when it divides evenly
 *   (lower_fusion.c says when) and otherwise leaves a FLAT map (the linear
 *   offset only, enough for loads through elementwise ops), so a chain of
 *   layout ops costs no memory traffic. Per-dim (not flattened) so a CUDA emitter can compute shared-
 *   memory tile coordinates and bounds, and so a guard can test one dim.
 *   The emitter flattens it with the row-major strides (kernel_map_linear).
 *   Not expressible yet: div/mod per dim (a reshape that merges dims of a
 *   broadcast, transpose or slice under it); gather-like INDIRECT loads will be a KI_LOAD whose
 *   map is the affine part plus "dim j = value of instruction v", a slot
 *   left in kinst (`indirect`, unused in v0).
 *
 * - Body (`body`): SSA, each instruction refers to earlier ones by index.
 *   Kinds: KI_LOAD (input, map, optional guard: an i1 instruction; a guarded
 *   load yields 0 when false — this is how concatenate reads only the operand
 *   that owns the point, and how a CUDA emitter masks a partial tile),
 *   KI_CONST, KI_INDEX (an affine function of the index variables as i64:
 *   iota, concatenate's bounds), KI_OP (a StableHLO elementwise op by its
 *   opcode — the spec's names, so the op -> text tables of the dialects are
 *   indexed by hlo_opcode), KI_PARAM (combiner arguments), KI_ROW and
 *   KI_TEMP (a row value, a temporary: see Stages). Every value has
 *   its StableHLO element type `dtype`; it is COMPUTED in the computation
 *   type: bf16/f16 in f32, the others in themselves. A bf16/f16 KI_OP result
 *   is rounded to its type right after the op (each StableHLO op's result is
 *   a bf16 value, as XLA's elemental emitter does on CPU and GPU, and as the
 *   interpreter does), and stores convert to the storage format.
 *
 * - Stages (`stages`): the body is cut into an ordered list of STAGES, each
 *   a contiguous range of it, all over the same parallel points (the tile
 *   index stays "points of the leading, kept dims"). For each parallel point
 *   (a ROW: the trailing `num_reduce_dims` dims), the stages run one after
 *   the other, each over the whole row:
 *     KSTAGE_REDUCE  its instructions at every point of the row, `value`
 *                    folded with the stage's combiner `comb` (its own range
 *                    of k->comb, SSA over KI_PARAM 0 = accumulator and
 *                    KI_PARAM 1 = element; `comb_result` is the new
 *                    accumulator) from `init` (a constant) in `acc_dtype`;
 *                    the result, rounded once to the reduce's type `dtype`,
 *                    is the stage's ROW VALUE, which later stages read with
 *                    KI_ROW (input = the stage);
 *     KSTAGE_MAP     its instructions at every point of the row; stores the
 *                    outputs whose `stage` it is.
 *   An instruction reads only instructions of its own stage; what crosses
 *   stages is a row value (KI_ROW) or a TEMPORARY (`temps`): a row-sized
 *   scratch written by one stage at every point of the row (`value`) and
 *   read by later stages at the same point (KI_TEMP). The lowering writes
 *   an expensive per-point value (exp(x - max) of a softmax, GELU's output
 *   before a LayerNorm) to a temporary instead of computing it again in a
 *   later stage (XLA's rule: never duplicate an expensive producer); cheap
 *   values (a load, x - mean) are recomputed from L1. An instruction that
 *   does not vary along the row (kernel_row_varying: a KI_ROW, a constant,
 *   a load whose map ignores the row dims, ops of those) is evaluated once
 *   per row, before the stage's row loops (mean, rsqrt(var + eps)), and an
 *   output whose map and value do not vary is stored once per row. So
 *   softmax is one kernel of three stages (max; sum of exp, the exp kept in
 *   a temporary; divide and store), LayerNorm three, RMSNorm two: the
 *   matrix is read from memory once and written once. An elementwise kernel
 *   is one MAP stage (no row dims: every instruction runs once per point);
 *   a plain reduction a REDUCE stage and a MAP stage storing its row value.
 *   The C emitter prints a row's stages one after the other inside the
 *   parallel loops; a CUDA emitter maps a row to a block, temporaries to
 *   shared memory and a REDUCE stage to a block-wide tree.
 *
 * - Outputs (`outputs`): buffer type, map over the index variables, the
 *   body value stored and the MAP stage that stores it. Several outputs
 *   share the index space (multi-output fusion); an output of the kept
 *   dims (a reduce's result) has a map that ignores the row dims and is
 *   stored once per row. Accumulators (per REDUCE stage) may be WIDER than
 *   the reduce's type, rounded to it once, at the end of the row (XLA does
 *   the same): bf16/f16 reductions accumulate in f32 (no per-step
 *   rounding), and an f32 add-reduction accumulates in f64, so a long row's
 *   sum stays within an ULP or two of the interpreter's pairwise sum
 *   (a sequential f32 sum drifts by O(n) ULP and stalls at 2^24); f32
 *   max/min/mul, f64 and integers accumulate in their own type. The
 *   combiner's instructions carry acc_dtype (lower_fusion rewrites them),
 *   so an emitter just prints the kernel. Variadic reduce
 *   (argmax) will need one accumulator per output: `comb` then returns
 *   several values; v0 has one.
 *
 * - Dynamic-update outputs (`dus_operand`, `dus_start`): XLA's in-place
 *   dynamic-update-slice fusion (CanEmitFusedDynamicUpdateSliceInPlace):
 *   the kernel's index space is the UPDATE's dims (the fusion computes the
 *   update), its one output is the operand-shaped result, stored at the
 *   identity map plus, per dim j, a start offset read from a 0-d integer
 *   input (once per kernel call) and clamped to [0, buf.dims[j] - dims[j]]
 *   (the spec's clamp). The output normally IS the operand's buffer (the
 *   runtime binds it there: in place, nothing else is written); when it is
 *   not (the runtime could not share it), the kernel first copies the
 *   operand's elements outside the update box into it: tile t of T copies
 *   rows [R t / T, R (t+1) / T) of the operand (R rows of its last dim),
 *   skipping the box, so the copy and the update's stores never touch the
 *   same element and no ordering between tiles is needed. Both buffers are
 *   may_alias. An emitter prints the clamped starts, the conditional copy
 *   at the top of each tile, and the offsets in the store's address; the
 *   rest is an elementwise kernel. Only on a kernel of one output, no
 *   reduction dims, rank >= 1 and the map the identity over the index
 *   space (lower_fusion makes it from a fusion whose root is a
 *   dynamic_update_slice; kernel_check_schedule checks it).
 *
 * - Loops (`loop`, lower_while.c): a LOOP kernel runs a whole
 *   stablehlo.while whose carried values are all 0-d, in one call: its
 *   index space is rank 0 (one point), one MAP stage, no temporaries, and
 *   its body is cut in three: body[0, loop.begin) runs once (the loads of
 *   the init values and of the values the loop reads from outside it);
 *   then, while the i1 instruction `loop.cond` (computed by body[begin,
 *   cond_end)) is true, body[cond_end, num_body) computes the next carried
 *   values `loop.next[i]`. Carried value i is read by KI_PARAM i (in the
 *   body, a carried value; in a combiner, an accumulator or element), which
 *   holds loop.init[i] (an instruction before `begin`) on the first
 *   iteration. Outputs are stored once, after the loop, and store either a
 *   carried value's final value (their `value` is its KI_PARAM) or a value
 *   computed before the loop. Instructions of the loop read earlier
 *   instructions only, as everywhere (the condition's values are in scope
 *   in the body of the same iteration). XLA runs such a loop with a host
 *   round trip per iteration (or a conditional graph node on GPUs); here
 *   it is one kernel call (one thread on a GPU).
 *
 * - Buffers (`kernel_buffer`): element type and dims of each input/output,
 *   and the IR value it stands for (`value`: the runtime binds buffers by
 *   it; a non-splat constant in a fusion is an input whose `literal` holds
 *   the data). Calling convention for every emitter: one array of buffer
 *   pointers, inputs first, then outputs.
 *
 * Known gaps of v0: a reduction whose combiner has no identity (or a row
 * shorter than 2 L) folds in one scalar, in order (does not vectorise);
 * an f64 add-reduction has no wider type (L lanes divide its error growth
 * by L; a compensated sum would remove it); compare TOTALORDER, complex, f8/f4, i2/i4
 * and quantized types are not lowered. Converts follow the interpreter's
 * (ml_dtypes') rules: f64 -> f16 rounds once, f64 -> bf16 and integer ->
 * bf16/f16 go through f32 (two roundings, on purpose).
 *
 * Ownership: kernel_create returns a kernel you free with kernel_destroy;
 * everything it points to is its own (malloc'd), except what it borrows
 * from the module it was lowered from: `loc` (the source text),
 * kernel_buffer.value and .literal — keep the module alive while you use
 * those (emitting errors are located at `loc`). Limits: rank <=
 * KERNEL_MAX_RANK, KERNEL_MAX_STAGES stages, KERNEL_MAX_TEMPS temporaries
 * of KERNEL_MAX_TEMP_BYTES per row in all. */
#ifndef HLO_CODEGEN_KERNEL_H
#define HLO_CODEGEN_KERNEL_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"
#include "support/strbuf.h"

#define KERNEL_MAX_RANK 8

/* offset + sum_i coeff[i] * x_i over the index variables. */
typedef struct kernel_affine {
  int64_t offset;
  int64_t coeff[KERNEL_MAX_RANK];
} kernel_affine;

/* A tensor's index as a function of the index variables: dim j of the
 * tensor is dim[j]. A FLAT map instead gives only the row-major linear
 * element offset, in dim[0] (rank stays the tensor's): what a reshape
 * leaves when its index needs div/mod per dim but not in memory (a reshape
 * of what is read straight from a buffer, through elementwise ops). */
typedef struct kernel_map {
  uint32_t rank;
  bool flat;
  kernel_affine dim[KERNEL_MAX_RANK];
} kernel_map;

typedef struct kernel_buffer {
  hlo_dtype dtype;
  uint32_t rank;
  int64_t dims[KERNEL_MAX_RANK];
  const hlo_value *value;     /* the IR value it holds (may be NULL) */
  const hlo_attr *literal;    /* inputs only: a constant's ATTR_DENSE, else NULL */
  bool may_alias;             /* shares memory with another buffer of the kernel (an
                                 output written in place over an input): no restrict */
} kernel_buffer;

/* KI_ROW: the row value of REDUCE stage `input` (an earlier stage); KI_TEMP:
 * temporary `input` at this point of the row (written by an earlier stage). */
typedef enum kinst_kind { KI_LOAD, KI_CONST, KI_INDEX, KI_OP, KI_PARAM, KI_ROW, KI_TEMP } kinst_kind;

/* compare directions (the spec's comparison_direction) */
typedef enum kernel_cmp { KCMP_EQ, KCMP_NE, KCMP_LT, KCMP_LE, KCMP_GT, KCMP_GE } kernel_cmp;

#define KINST_MAX_ARGS 3

typedef struct kinst {
  kinst_kind kind;
  hlo_dtype dtype;            /* the value's element type */
  hlo_opcode op;              /* KI_OP: the StableHLO op (add, exponential, convert, ...) */
  kernel_cmp cmp;             /* KI_OP compare: direction */
  uint32_t num_args;
  uint32_t args[KINST_MAX_ARGS]; /* KI_OP: earlier instructions */
  uint32_t input;             /* KI_LOAD: input number; KI_PARAM: parameter number;
                                 KI_ROW: stage number; KI_TEMP: temporary number */
  int32_t guard;              /* KI_LOAD: an i1 instruction, or -1 (always loaded) */
  int32_t indirect;           /* reserved for gather-like loads; -1 in v0 */
  kernel_map map;             /* KI_LOAD */
  kernel_affine index;        /* KI_INDEX (dtype I64) */
  union { int64_t i; double f; } cval; /* KI_CONST: i (bool, integers) or f (floats) */
} kinst;

typedef struct kernel_output {
  kernel_buffer buf;
  kernel_map map;             /* over the kept (parallel) index variables */
  uint32_t value;             /* body instruction stored */
  uint32_t stage;             /* the MAP stage that stores it */
  /* An update in place (see the top, Dynamic-update outputs): input
   * dus_operand - 1 is the buffer the output is updated from (0: none, an
   * ordinary output); dim j of the store is offset by the value of 0-d
   * integer input dus_start[j] - 1 (0: by nothing) clamped to
   * [0, buf.dims[j] - dims[j]]. */
  uint32_t dus_operand;
  uint32_t dus_start[KERNEL_MAX_RANK];
} kernel_output;

#define KERNEL_MAX_STAGES 16
#define KERNEL_MAX_TEMPS 8

typedef enum kernel_stage_kind { KSTAGE_MAP, KSTAGE_REDUCE } kernel_stage_kind;

typedef union kernel_scalar { int64_t i; double f; } kernel_scalar;

/* One stage (see the top): its instructions are body[body_begin, body_end);
 * a REDUCE stage's combiner is comb[comb_begin, comb_end). Indices in
 * instructions (args, guard, value, comb_result) are absolute. */
typedef struct kernel_stage {
  kernel_stage_kind kind;
  uint32_t body_begin, body_end;
  /* KSTAGE_REDUCE: */
  uint32_t value;             /* the body instruction folded */
  uint32_t comb_begin, comb_end, comb_result;
  hlo_dtype dtype;            /* the reduce's element type: the row value's */
  hlo_dtype acc_dtype;        /* the accumulator's type (see the top) */
  kernel_scalar init;         /* initial value, in dtype */
  kernel_scalar identity;     /* with lanes: the combiner's identity in acc_dtype
                                 (kernel_stage_identity) */
} kernel_stage;

/* A row-sized scratch (the product of the row dims, in the computation type
 * of `dtype`), written by stage `stage` with body value `value` at every
 * point of the row, read by KI_TEMP in later stages. */
typedef struct kernel_temp {
  hlo_dtype dtype;
  uint32_t stage, value;
} kernel_temp;

/* The most bytes of temporaries one kernel keeps per row (a C emitter puts
 * them on the stack; CUDA in shared memory). */
#define KERNEL_MAX_TEMP_BYTES (64 * 1024)

typedef struct kernel_schedule {
  int64_t tile[KERNEL_MAX_RANK];
  uint32_t num_thread_dims;
  /* Per REDUCE stage: 0 or 1, one accumulator folds the row in order. L > 1 (a
   * power of two): the innermost reduction dim is folded into L PARTIAL
   * accumulators (lanes), lane l taking the elements whose index is l mod L
   * (those past the last multiple of L go to lane 0); lane 0 starts from
   * the init value, the others from the combiner's identity (`identity`),
   * and the lanes are combined as a tree at the end (lane l with lane l + w,
   * for w = L/2, L/4, ..., 1).
   * The spec leaves a reduce's tree and where its init values go to the
   * implementation; lanes need a commutative combiner (kernel_reduce_identity
   * says which). A CPU emitter gets an inner loop over the lanes that
   * vectorises (a plain float sum or NaN-aware max does not: the order is
   * fixed); a CUDA emitter would map lanes to the threads of a warp. */
  uint32_t reduce_lanes[KERNEL_MAX_STAGES];
  /* 0 or 1: a row is computed by one thread (the CPU's schedule). T > 1 (a
   * power of two, 32..1024; a GPU schedule, backend/cuda/emit_cuda.h): a
   * tile (one row: every parallel dim a thread dim with tile 1) is computed
   * by a block of T threads: the innermost row dim is spread over them
   * (thread i takes the elements i, i + T, ...; the other row dims loop in
   * every thread; with several row dims, the row's linear positions are
   * spread instead), a REDUCE stage whose combiner has an identity folds each
   * thread's elements from it (thread 0 from the init value) and combines
   * the T accumulators as a tree (warp shuffles, then shared memory); one
   * without folds the row in order in thread 0. Row values are seen by all
   * threads; temporaries are in memory shared by the block; outputs stored
   * once per row are stored by thread 0. Reduction lanes must be 0. */
  uint32_t row_threads;
} kernel_schedule;

/* The most carried values of a LOOP kernel (see the top, Loops), and the
 * most buffers (inputs and outputs) it has: every backend's kernels take
 * 64 (the CUDA kernels' parameter table, emit_cuda.h CUDA_MAX_BUFS). */
#define KERNEL_MAX_LOOP_CARRIED 32
#define KERNEL_MAX_LOOP_BUFFERS 64

typedef struct kernel_loop {
  uint32_t num_carried;       /* 0: not a loop kernel */
  uint32_t begin, cond_end;   /* body[0, begin) once; [begin, cond_end) the condition */
  uint32_t cond;              /* the i1 instruction: iterate while true */
  uint32_t init[KERNEL_MAX_LOOP_CARRIED]; /* before `begin` */
  uint32_t next[KERNEL_MAX_LOOP_CARRIED]; /* the body's next carried values */
  uint32_t param[KERNEL_MAX_LOOP_CARRIED]; /* the KI_PARAM reading each */
} kernel_loop;

typedef struct kernel {
  char *name;                 /* a C identifier */
  uint32_t rank;
  int64_t dims[KERNEL_MAX_RANK];
  uint32_t num_reduce_dims;   /* trailing reduction dims; 0: elementwise */
  kernel_schedule sched;
  uint32_t num_inputs, num_outputs;
  kernel_buffer *inputs;
  kernel_output *outputs;
  uint32_t num_body, cap_body;
  kinst *body;
  uint32_t num_comb, cap_comb;
  kinst *comb;                /* the REDUCE stages' combiners */
  uint32_t num_stages;        /* >= 1 (kernel_create makes stage 0, a MAP stage) */
  kernel_stage stages[KERNEL_MAX_STAGES];
  uint32_t num_temps;
  kernel_temp temps[KERNEL_MAX_TEMPS];
  kernel_loop loop;           /* a LOOP kernel's cut (num_carried 0: none) */
  hlo_loc loc;                /* the fusion's first op, for errors */
} kernel;

/* A new empty kernel named `name` (copied) of index space dims[0..rank).
 * Errors: HLO_UNIMPLEMENTED over KERNEL_MAX_RANK, HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status kernel_create(const char *name, uint32_t rank, const int64_t *dims,
                                      const hlo_loc *loc, kernel **out);
/* Frees `k` and all it owns (NULL is fine). */
void kernel_destroy(kernel *k);

/* Appends an input of the given type; *out_index is its number. Errors:
 * HLO_RESOURCE_EXHAUSTED, HLO_UNIMPLEMENTED over KERNEL_MAX_RANK. */
HLO_MUST_USE hlo_status kernel_add_input(kernel *k, hlo_dtype dt, uint32_t rank,
                                         const int64_t *dims, const hlo_value *v,
                                         uint32_t *out_index);
/* Appends an output storing body value `value` through `map`, stored by
 * the last stage. */
HLO_MUST_USE hlo_status kernel_add_output(kernel *k, hlo_dtype dt, uint32_t rank,
                                          const int64_t *dims, const hlo_value *v,
                                          const kernel_map *map, uint32_t value);
/* Appends `in` to the last stage's body (comb = false) or combiner (comb =
 * true) and writes its (absolute) index to *out_index; an identical
 * earlier instruction of that stage is reused instead (CSE by structure).
 * Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status kernel_add_inst(kernel *k, bool comb, const kinst *in,
                                        uint32_t *out_index);
/* Appends a new empty stage of `kind` (fields other than the ranges
 * zeroed: the caller fills a REDUCE stage's value, dtype, acc_dtype, init);
 * *out_stage is its number. A kernel whose only stage is empty reuses it.
 * Errors: HLO_UNIMPLEMENTED past KERNEL_MAX_STAGES. */
HLO_MUST_USE hlo_status kernel_begin_stage(kernel *k, kernel_stage_kind kind, uint32_t *out_stage);
/* Appends the last stage of `part` (a kernel used as a stage builder: its
 * last stage's instructions, combiner and the outputs it stores) to `k`,
 * renumbering instruction indices; its inputs must already be k's (KI_LOAD
 * input numbers, KI_ROW and KI_TEMP numbers are k's). *out_stage is its
 * number in k, *out_offset the index its first body instruction got.
 * Errors: HLO_UNIMPLEMENTED past KERNEL_MAX_STAGES, HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status kernel_append_stage(kernel *k, const kernel *part, uint32_t *out_stage,
                                            uint32_t *out_offset);
/* A zeroed instruction of `kind` and `dtype` (guard/indirect -1). */
kinst kinst_make(kinst_kind kind, hlo_dtype dtype);

/* The identity map of a tensor of `rank` dims over index variables 0..rank-1. */
kernel_map kernel_map_identity(uint32_t rank);
/* The map flattened to a linear element offset in a row-major tensor of
 * dims[0..m->rank) (a flat map's dim[0]). */
kernel_affine kernel_map_linear(const kernel_map *m, const int64_t *dims);

/* The number of tiles in the thread (tile index) space of k's schedule. */
int64_t kernel_num_tiles(const kernel *k);
/* The default CPU schedule: every parallel dim but the innermost is a thread
 * dim with tile 1; the innermost parallel dim of an elementwise kernel is a
 * thread dim too, split in tiles of `inner_tile` elements (0: 4096), so
 * that a 1-d kernel still spreads over threads. Reduction (row) dims whole;
 * a REDUCE stage whose combiner has an identity (kernel_stage_identity) and
 * whose innermost row dim holds at least 2 L elements gets L = 128 bytes /
 * the accumulator's size lanes (8..64: four 256-bit vectors), and its
 * `identity`. */
void kernel_schedule_default(kernel *k, int64_t inner_tile);
/* Whether stage `stage`'s combiner (a REDUCE stage) is one commutative op of both parameters (add,
 * multiply, maximum, minimum, and, or, xor) whose identity in acc_dtype is
 * known; if so writes it to *i (integers, bool) or *f (floats): add, or,
 * xor 0 (-0.0 for floats: -0 + x is x for every x); multiply 1; and all
 * ones (true); maximum -inf, the type's min (false); minimum +inf, its max
 * (true). */
bool kernel_stage_identity(const kernel *k, uint32_t stage, int64_t *i, double *f);
/* Whether `op` is expensive to compute again (transcendentals, divide,
 * remainder, power, atan2: the fusion pass's EXPENSIVE role). */
bool kernel_op_expensive(hlo_opcode op);
/* Writes to out[0..k->num_body) whether each body instruction varies along
 * the row (depends on a row index variable through a load's map or guard,
 * an index, a temporary, or an argument that does); the others are
 * evaluated once per row. With no row dims nothing varies. */
void kernel_row_varying(const kernel *k, bool *out);
/* Whether tile t of k touches exactly rows [t*r, (t+1)*r) of the leading
 * dim of buffer `buffer` (numbered as the calling convention: inputs, then
 * outputs), for every t (the last tile may be short), and no other rows; if
 * so writes r to *rows_per_tile. True when every load (or the store) of the
 * buffer has a per-dim map whose leading dim is an affine function of the
 * thread dims only, consistent with the row-major tile numbering. A lead
 * runs such a kernel as a GEMM's epilogue: tile t right after the GEMM
 * wrote rows [t*r, (t+1)*r) of it. False for a buffer not read (written)
 * through the body or a flat map. */
bool kernel_tiles_rows(const kernel *k, uint32_t buffer, int64_t *rows_per_tile);
/* Whether tile t of k reads exactly row t of input `buffer` seen as a matrix
 * (its last dim the columns, all the others flattened into rows, row-major:
 * a GEMM's product [B..., M, N] as B*M rows): every thread dim has tile 1
 * (it numbers the tiles) or is unsplit (within a tile), the tiles are as
 * many as the rows, and every load of `in` (there is at least one) reads,
 * at the tile-1 thread coordinates, only elements of row sum_d x_d W_d
 * (W_d the product of the tile-1 thread dims after d: the tile index). A
 * lead runs such a kernel as a GEMM's epilogue, tile b*M + r right after
 * the GEMM wrote row r of matrix b. `buffer` numbers inputs then outputs
 * (as kernel_tiles_rows): for output j, its store writes only row t.
 * A row kernel whose output and an input are both flat rows may write the
 * output over that input (executable_cpu.c, inplace_input). */
bool kernel_tiles_flat_rows(const kernel *k, uint32_t buffer);
/* Whether output `o` is a dynamic-update output (dus_operand: see the top). */
static inline bool kernel_output_dus(const kernel_output *o) { return o->dus_operand != 0; }
/* Whether some output of k is one (such a kernel stores at run-time offsets:
 * no row tiling facts hold for it). */
bool kernel_has_dus(const kernel *k);

/* Checks the schedule and the stages against the rules above (tiles in
 * [1, dim], reduction dims unsplit and not thread dims, lanes only on
 * REDUCE stages with an identity, stage ranges contiguous, instructions
 * reading only their own stage, KI_ROW/KI_TEMP only earlier stages).
 * Errors: HLO_INTERNAL naming the rule. */
HLO_MUST_USE hlo_status kernel_check_schedule(const kernel *k);

/* A readable dump of the kernel (index space, schedule, buffers, body) for
 * --dump-to and tests. */
void kernel_print(const kernel *k, strbuf *out);

/* The computation type of `dt` in the body: F32 for bf16/f16, else `dt`. */
hlo_dtype kernel_compute_dtype(hlo_dtype dt);
/* Whether the kernels support element type `dt` (bool, integers of 8..64
 * bits, bf16, f16, f32, f64). */
bool kernel_dtype_supported(hlo_dtype dt);

#endif /* HLO_CODEGEN_KERNEL_H */
