/* ir.h — hlo's in-memory program: types, attributes, values, ops, blocks,
 * functions and modules.
 *
 * Ownership: everything hangs off one hlo_module and lives in its arena
 * (`m->arena`); nothing here is freed on its own. hlo_module_destroy frees it
 * all. Pointers into a module stay valid until then.
 *
 * THE ATTRIBUTE CONTRACT (parser, printer, verifier, interpreter all rely on
 * it): an op's attributes are stored exactly as MLIR's *generic* form spells
 * them — the StableHLO dialect's ODS names and kinds — whatever syntax the
 * text used. `stablehlo.broadcast_in_dim %x, dims = [1]` stores
 * `broadcast_dimensions = array<i64: 1>` (ATTR_DENSE_ARRAY of I64);
 * `dot_general ..., contracting_dims = [1] x [0]` stores
 * `dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
 * rhs_contracting_dimensions = [0]>` (ATTR_STRUCT "stablehlo.dot" whose
 * fields are ATTR_DENSE_ARRAY of I64, see below); `compare LT, ...,
 * FLOAT` stores `comparison_direction = #stablehlo<comparison_direction LT>`
 * and `compare_type = #stablehlo<comparison_type FLOAT>` (ATTR_ENUM).
 * Custom-syntax attributes map like this:
 *   123 : i64 / 1 : i32         ATTR_INT, dtype I64 / I32 (untyped: I64)
 *   1.5 : f32                   ATTR_FLOAT, dtype F32 (untyped: F64)
 *   true / false                ATTR_BOOL
 *   unit (`{has_side_effect}`)  ATTR_UNIT
 *   "text"                      ATTR_STRING (bytes unescaped; may hold NUL)
 *   @sym / @a::@b               ATTR_SYMBOL (text after '@', nested refs raw)
 *   [a, b]                      ATTR_ARRAY
 *   array<i64: 1, 2>            ATTR_DENSE_ARRAY (dtype I64/I32/I1/F32..)
 *   dense<...> : tensor<..>     ATTR_DENSE (raw element bytes, see below)
 *   {a = 1}                     ATTR_DICT
 *   tensor<2xf32> (a type)      ATTR_TYPE
 *   #stablehlo<NAME VALUE>      ATTR_ENUM {dialect "stablehlo", name NAME, value VALUE}
 *   #stablehlo.NAME<k = v, ...> ATTR_STRUCT {name "stablehlo.NAME", fields}
 *                               Field values: int lists as ATTR_DENSE_ARRAY I64,
 *                               single ints as ATTR_INT I64, others as parsed.
 *                               Fields that are absent/empty are omitted.
 *   #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]> (or `raw ...`)
 *                               ATTR_STRUCT "stablehlo.conv" with the ODS
 *                               fields input_batch_dimension (INT),
 *                               input_feature_dimension (INT),
 *                               input_spatial_dimensions (DENSE_ARRAY), kernel_
 *                               input_feature_dimension, kernel_output_feature_
 *                               dimension, kernel_spatial_dimensions, output_
 *                               batch_dimension, output_feature_dimension,
 *                               output_spatial_dimensions: all nine, always.
 *   dense_resource<name> : T   ATTR_DENSE with `resource` = name; the data is
 *                               the blob of the module's resource section
 *                               (resolved by the parser; see hlo_resource)
 *   #sdy.sharding<...>, #sdy.sharding_per_value<[...]>, #sdy.mesh<...>, and the
 *   bare `<@mesh, [...]>` / `{"x"}` forms of the sdy ops' custom syntax
 *                               ATTR_SDY (see sdy_attr below)
 *   anything else (#loc refs, affine maps, other dialects' attributes)
 *                               ATTR_OPAQUE: the exact source text, printed back
 *                               verbatim.
 *
 * DENSE ELEMENTS: `data` holds the elements row-major, each element taking
 * hlo_dtype_size(dtype) bytes, little-endian: integers sign/zero-extended to
 * the storage width (i1: 0 or 1 in a byte), floats as their bit pattern (f8,
 * f6, f4 in the low bits of a byte), complex as (real, imag). This is MLIR's
 * hex-blob layout. A splat (`dense<1.0>` of many elements) stores one element
 * and sets `splat`; `num_elems` is always the type's element count. Quantized
 * element types store the storage integers.
 */
#ifndef HLO_IR_IR_H
#define HLO_IR_IR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hlo/hlo.h"
#include "support/arena.h"
#include "support/status.h"

/* ------------------------------------------------------------------ ops */

enum {
  OPF_ELEMENTWISE = 1 << 0, /* result shape = operand shape, per element */
  OPF_REGIONS = 1 << 1,     /* carries regions */
  OPF_TERMINATOR = 1 << 2,  /* ends a block */
  OPF_SIDE_EFFECT = 1 << 3, /* must not be removed or reordered freely */
  OPF_CHLO = 1 << 4,        /* chlo op: legalized away before execution */
};

typedef enum hlo_opcode {
#define HLO_OP(e, name, flags) OP_##e,
#include "ir/ops.def"
#undef HLO_OP
  OP_COUNT
} hlo_opcode;

/* Full MLIR name ("stablehlo.add"); NULL when out of range. */
const char *op_name(hlo_opcode c);
/* OPF_* bits of `c`. */
unsigned op_flags(hlo_opcode c);
/* The opcode named `name[0..n)` (full name, e.g. "stablehlo.add"); also
 * accepts "return" and "call" as func.return/func.call. OP_COUNT if none. */
hlo_opcode op_lookup(const char *name, size_t n);

/* ---------------------------------------------------------------- types */

/* Size of a dynamic dimension ('?'). */
#define HLO_DYN INT64_MIN

typedef enum type_kind { TYPE_TENSOR, TYPE_TUPLE, TYPE_TOKEN } type_kind;

/* !quant.uniform<storage<min:max>:expressed[:axis], scale[:zp] | {s:zp,...}> */
typedef struct quant_params {
  hlo_dtype storage;      /* i8, ui8, i4, ... */
  hlo_dtype expressed;    /* f32, bf16, f16 */
  int64_t storage_min, storage_max; /* explicit range or the storage type's */
  bool has_range;         /* storage range was written in the text */
  int32_t axis;           /* quantization dimension; -1 for per-tensor */
  uint32_t num_scales;    /* 1 for per-tensor */
  double *scales;
  int64_t *zero_points;
} quant_params;

typedef struct hlo_type hlo_type;
struct hlo_type {
  type_kind kind;
  /* TYPE_TENSOR */
  hlo_dtype dtype;            /* element type; storage type when quantized */
  const quant_params *quant;  /* non-NULL for a quantized element type */
  uint32_t rank;
  int64_t *dims;              /* rank entries; HLO_DYN for '?' */
  const char *encoding;       /* raw text of `, #stablehlo.bounds<...>` etc. or NULL */
  /* TYPE_TUPLE */
  uint32_t num_elems;
  hlo_type **elems;
};

/* Element count of a static tensor type; -1 when dynamic or when the count
 * overflows int64. Tuples and tokens: -1. */
int64_t type_num_elements(const hlo_type *t);
/* Structural equality, including quantization parameters and encoding. */
bool type_equal(const hlo_type *a, const hlo_type *b);
/* Equal shapes and element types, ignoring encoding. */
bool type_same_shape(const hlo_type *a, const hlo_type *b);
/* No dimension is HLO_DYN (tuples: recursively; tokens: true). */
bool type_is_static(const hlo_type *t);
/* New tensor type in `a`; dims are copied. NULL on out of memory. */
hlo_type *type_tensor(arena *a, hlo_dtype dt, uint32_t rank, const int64_t *dims);
/* New tuple type; elems are copied (the array, not the types). */
hlo_type *type_tuple(arena *a, uint32_t n, hlo_type *const *elems);
/* The `!stablehlo.token` type, new in `a`. NULL on out of memory. */
hlo_type *type_token(arena *a);

/* ----------------------------------------------------------- attributes */

typedef enum attr_kind {
  ATTR_UNIT, ATTR_BOOL, ATTR_INT, ATTR_FLOAT, ATTR_STRING, ATTR_SYMBOL,
  ATTR_TYPE, ATTR_ARRAY, ATTR_DENSE_ARRAY, ATTR_DENSE, ATTR_DICT, ATTR_ENUM,
  ATTR_STRUCT, ATTR_OPAQUE, ATTR_SDY,
} attr_kind;

/* ---- Shardy (sdy dialect) sharding structures, kept structured for the
 * SPMD partitioner. Names follow Shardy's attribute definitions. */

/* An axis reference: `"x"`, or the sub-axis `"x":(pre_size)size`. */
typedef struct sdy_axis_ref {
  const char *name;
  int64_t pre_size, size;   /* both 0 for a whole axis */
} sdy_axis_ref;

/* A mesh: `<["x"=2, "y"=1]>`, `<[], device_ids=[0]>`. */
typedef struct sdy_mesh {
  uint32_t num_axes;
  const char **axis_names;
  int64_t *axis_sizes;
  uint32_t num_device_ids;  /* 0 when the text gives none (iota order) */
  int64_t *device_ids;
} sdy_mesh;

/* One dimension of a sharding: `{"x", "y"}`, `{"x", ?}` (open), `{}p1`. */
typedef struct sdy_dim_sharding {
  uint32_t num_axes;
  sdy_axis_ref *axes;
  bool is_open;             /* `?`: propagation may add axes */
  int64_t priority;         /* `pN`, or -1 when none */
} sdy_dim_sharding;

/* `<@mesh, [dims...], replicated={...}, unreduced={...}>`. */
typedef struct sdy_sharding {
  const char *mesh_name;    /* without '@'; NULL when the mesh is inline */
  const sdy_mesh *mesh;     /* the inline mesh (`<mesh<[...]>, [...]>`) or NULL */
  uint32_t rank;
  sdy_dim_sharding *dims;
  uint32_t num_replicated, num_unreduced;
  sdy_axis_ref *replicated, *unreduced;
} sdy_sharding;

typedef enum sdy_attr_kind {
  SDY_MESH,                 /* #sdy.mesh<...> */
  SDY_SHARDING,             /* #sdy.sharding<...> */
  SDY_SHARDING_PER_VALUE,   /* #sdy.sharding_per_value<[<...>, ...]> */
  SDY_AXES,                 /* `{"x", "y"}` (manual_axes of manual_computation) */
} sdy_attr_kind;

typedef struct sdy_attr {
  sdy_attr_kind kind;
  const sdy_mesh *mesh;            /* SDY_MESH */
  uint32_t n;                      /* SDY_SHARDING_PER_VALUE: shardings; SDY_AXES: names */
  const sdy_sharding **shardings;  /* SDY_SHARDING: one; SDY_SHARDING_PER_VALUE: n */
  const char **axes;               /* SDY_AXES */
} sdy_attr;

typedef struct hlo_attr hlo_attr;
typedef struct named_attr {
  const char *name;
  hlo_attr *value;
} named_attr;

struct hlo_attr {
  attr_kind kind;
  union {
    bool b;                                   /* ATTR_BOOL */
    struct { int64_t v; hlo_dtype dtype; } i; /* ATTR_INT (dtype I64 by default) */
    struct { double v; hlo_dtype dtype; } f;  /* ATTR_FLOAT (dtype F64 by default) */
    struct { const char *s; size_t len; } str;/* ATTR_STRING, ATTR_SYMBOL, ATTR_OPAQUE */
    const hlo_type *type;                     /* ATTR_TYPE */
    struct { uint32_t n; hlo_attr **items; } arr; /* ATTR_ARRAY */
    struct {                                  /* ATTR_DENSE_ARRAY */
      hlo_dtype dtype;
      uint32_t n;
      int64_t *ints;    /* integer and bool dtypes */
      double *floats;   /* float dtypes */
    } darr;
    struct {                                  /* ATTR_DENSE */
      const hlo_type *type;
      bool splat;
      int64_t num_elems;
      uint8_t *data;    /* see DENSE ELEMENTS above */
      size_t nbytes;
      const char *resource; /* `dense_resource<NAME>`: NAME; NULL for dense<> */
    } dense;
    struct { uint32_t n; named_attr *entries; } dict; /* ATTR_DICT */
    struct { const char *dialect, *name, *value; } en; /* ATTR_ENUM */
    struct { const char *name; uint32_t n; named_attr *fields; } st; /* ATTR_STRUCT */
    const sdy_attr *sdy;                      /* ATTR_SDY */
  } u;
};

/* Constructors, all allocating in `a`; NULL on out of memory. Strings and
 * arrays are copied into `a`; a type is referenced, not copied. int/float
 * take the attribute's element type (I64/F64 when the text has none); the
 * dense arrays get dtype I64 / I1. */
hlo_attr *attr_int(arena *a, int64_t v, hlo_dtype dtype);
hlo_attr *attr_float(arena *a, double v, hlo_dtype dtype);
hlo_attr *attr_bool(arena *a, bool v);
hlo_attr *attr_unit(arena *a);
hlo_attr *attr_string(arena *a, const char *s, size_t len);
hlo_attr *attr_symbol(arena *a, const char *s);
hlo_attr *attr_type(arena *a, const hlo_type *t);
hlo_attr *attr_dense_array_i64(arena *a, const int64_t *v, uint32_t n);
hlo_attr *attr_dense_array_bool(arena *a, const bool *v, uint32_t n);
hlo_attr *attr_enum(arena *a, const char *dialect, const char *name, const char *value);
/* A dense attribute of type `t` from raw element bytes (copied); `splat`
 * means `data` holds one element. */
hlo_attr *attr_dense(arena *a, const hlo_type *t, const void *data, size_t nbytes, bool splat);

/* The integer list of an ATTR_DENSE_ARRAY, an ATTR_ARRAY of ATTR_INT, or an
 * integer ATTR_DENSE (splat expanded): writes a pointer to `*out_n` int64s
 * allocated in `a` to *out. Returns false when `at` is none of those (or out
 * of memory). */
bool attr_as_ints(arena *a, const hlo_attr *at, int64_t **out, uint32_t *out_n);
/* Field `name` of an ATTR_STRUCT or entry of an ATTR_DICT; NULL if absent. */
const hlo_attr *attr_field(const hlo_attr *at, const char *name);
/* Structural equality. */
bool attr_equal(const hlo_attr *a, const hlo_attr *b);

/* ----------------------------------------------------- values, ops, blocks */

typedef struct hlo_op hlo_op;
typedef struct hlo_block hlo_block;
typedef struct hlo_region hlo_region;
typedef struct hlo_func hlo_func;
typedef struct hlo_module_ir hlo_module_ir;

/* An SSA value: an op result or a block argument. */
typedef struct hlo_value {
  hlo_type *type;
  hlo_op *def;          /* defining op, or NULL for a block argument */
  hlo_block *block;     /* owning block for a block argument */
  uint32_t index;       /* result index, or argument index */
  uint32_t id;          /* dense number within its function, from 0; see
                           func_number_values */
  const char *name;     /* the text's name without '%' ("arg0", "0", "cst"),
                           may be NULL; the printer renumbers anyway */
  hlo_loc loc;          /* where the value was defined */
} hlo_value;

struct hlo_block {
  uint32_t num_args;
  hlo_value *args;      /* num_args values */
  hlo_op *first, *last; /* ops in order, doubly linked */
  hlo_region *parent;
};

/* A region holds one block (all StableHLO regions are single-block). */
struct hlo_region {
  hlo_block block;
  hlo_op *parent;
};

struct hlo_op {
  hlo_opcode opcode;
  uint32_t num_operands;
  hlo_value **operands;
  uint32_t num_results;
  hlo_value *results;   /* array of num_results values, def == this op */
  uint32_t num_attrs;
  named_attr *attrs;    /* in text order */
  uint32_t num_regions;
  hlo_region *regions;  /* array of num_regions */
  hlo_op *prev, *next;
  hlo_block *parent;
  hlo_loc loc;          /* where the op's name starts */
  const char *loc_text; /* trailing `loc(...)` text, verbatim, or NULL */
};

/* The attribute named `name` of `op`, or NULL. */
const hlo_attr *op_attr(const hlo_op *op, const char *name);
/* Sets (replaces or appends) attribute `name` of `op` (name is copied into
 * m's arena; `value` is referenced, so it must live in m's arena too).
 * Errors: HLO_RESOURCE_EXHAUSTED on out of memory. */
hlo_status op_set_attr(hlo_module_ir *m, hlo_op *op, const char *name, hlo_attr *value);
/* Integer value of an ATTR_INT/ATTR_BOOL attribute, or `dflt` if absent. */
int64_t op_attr_int(const hlo_op *op, const char *name, int64_t dflt);
/* The number of entries of a stablehlo.custom_call's
 * output_operand_aliases (0 without the attribute). */
uint32_t custom_call_num_aliases(const hlo_op *op);
/* Entry k of a stablehlo.custom_call's output_operand_aliases: *result
 * the result it names (output_tuple_indices: [i] picks result i of
 * several, [] the one result) and *operand its operand_index. False when k
 * is past the list, the entry is malformed, or it names an element inside
 * a tuple (a longer output path, or a non-empty operand_tuple_indices). */
bool custom_call_alias(const hlo_op *op, uint32_t k, int64_t *result, int64_t *operand);
/* true when the attribute is ATTR_BOOL true or ATTR_UNIT; `dflt` if absent. */
bool op_attr_bool(const hlo_op *op, const char *name, bool dflt);

/* A named argument/result attribute list (`{jax.result_info = "x"}`). */
typedef struct attr_list {
  uint32_t n;
  named_attr *items;
} attr_list;

struct hlo_func {
  const char *name;        /* without '@' */
  const char *visibility;  /* "public", "private", "nested" or NULL (unset) */
  uint32_t num_args, num_results;
  hlo_type **result_types;
  attr_list *arg_attrs;    /* num_args lists (may be empty) */
  attr_list *result_attrs; /* num_results lists */
  attr_list attrs;         /* `attributes {...}` of the function */
  hlo_region body;         /* body.block.args are the arguments */
  uint32_t num_values;     /* after func_number_values */
  hlo_loc loc;
  hlo_func *next;
};

/* The GSPMD sharding string of `mhlo.sharding = "{devices=[2,1]0,1}"` (the
 * older path; XLA's HloSharding::ToString syntax), decoded on demand by
 * gspmd_sharding_parse. The attribute itself stays an ATTR_STRING. */
typedef enum gspmd_kind {
  GSPMD_REPLICATED,   /* {replicated} (and the empty string) */
  GSPMD_MAXIMAL,      /* {maximal device=N} */
  GSPMD_MANUAL,       /* {manual} */
  GSPMD_UNKNOWN,      /* {unknown} */
  GSPMD_TILED,        /* {devices=[d0,d1]ids} / {devices=[d0,d1]<=[n]T(p)} */
  GSPMD_TUPLE,        /* {{...}, {...}} */
} gspmd_kind;

typedef struct gspmd_sharding gspmd_sharding;
struct gspmd_sharding {
  gspmd_kind kind;
  int64_t device;                 /* GSPMD_MAXIMAL */
  uint32_t rank;                  /* GSPMD_TILED: tile assignment dims */
  int64_t *tile_dims;
  uint32_t num_devices;           /* product of tile_dims */
  int64_t *devices;               /* device ids in tile order (iota forms expanded) */
  bool last_tile_dim_replicate;
  uint32_t num_subgroups;         /* `last_tile_dims={manual, replicated}` */
  const char **subgroup_types;
  uint32_t num_elems;             /* GSPMD_TUPLE */
  gspmd_sharding *elems;
};

/* Decodes the GSPMD sharding text s[0..len) into *out (arrays in `a`).
 * Trailing `metadata={...}`, `shard_as N`/`shard_like N` are skipped.
 * Errors: HLO_INVALID_ARGUMENT naming what is malformed (no location: the
 * caller locates it); HLO_RESOURCE_EXHAUSTED; over 2^20 devices is refused. */
HLO_MUST_USE hlo_status gspmd_sharding_parse(arena *a, const char *s, size_t len,
                                             gspmd_sharding *out);

/* A module-level `sdy.mesh @name = <...> {attrs}`. */
typedef struct sdy_mesh_decl {
  const char *name;        /* without '@' */
  const sdy_mesh *mesh;
  attr_list attrs;         /* trailing `{stablehlo.mesh = ...}` */
  hlo_loc loc;
} sdy_mesh_decl;

/* One entry of the trailing `{-# dialect_resources: { DIALECT: { KEY: "0x.." } } #-}`
 * section. `data` is the blob (after the 4-byte alignment header) for
 * builtin blobs; `text` keeps the original hex string for printing back. */
typedef struct hlo_resource {
  const char *section;     /* "dialect_resources" or "external_resources" */
  const char *dialect;     /* "builtin", ... */
  const char *key;
  const char *text;        /* the value's string contents ("0x04000000...") */
  uint32_t alignment;      /* builtin blobs: the header's alignment */
  const uint8_t *data;     /* builtin blobs: the elements; NULL otherwise */
  size_t nbytes;
  hlo_loc loc;
} hlo_resource;

/* The internal module. hlo_module (public) wraps exactly this. */
struct hlo_module_ir {
  arena arena;
  hlo_source source;       /* the text it was parsed from (in the arena) */
  const char *name;        /* `module @name`, without '@', or NULL */
  attr_list attrs;         /* `attributes {...}` */
  hlo_func *funcs, *funcs_tail;
  uint32_t num_funcs;
  /* Top-level lines the IR does not model but must print back (`#loc1 =
   * loc(...)` aliases, `#map = ...`), verbatim, in order. */
  uint32_t num_aliases;
  const char **aliases;
  /* `sdy.mesh` declarations, in text order (printed first in the module). */
  uint32_t num_meshes;
  sdy_mesh_decl *meshes;
  /* The resource section's entries, in text order. */
  uint32_t num_resources;
  hlo_resource *resources;
};

/* A new empty module (its own arena). NULL on out of memory. */
hlo_module_ir *module_new(void);
/* Frees the module and everything in its arena. NULL is fine. */
void module_free(hlo_module_ir *m);
/* The `sdy.mesh` named `name` (without '@'), or NULL. */
const sdy_mesh_decl *module_find_mesh(const hlo_module_ir *m, const char *name);
/* Number of devices of mesh `mm`: the product of its axis sizes, or the
 * number of device_ids of a maximal mesh (`<[], device_ids=[0]>`; 1 when
 * both are empty). -1 on overflow. */
int64_t sdy_mesh_num_devices(const sdy_mesh *mm);
/* The mesh a sharding refers to in `m` (inline or by name), or NULL. */
const sdy_mesh *sdy_sharding_mesh(const hlo_module_ir *m, const sdy_sharding *s);
/* The function named `name`, or NULL. */
hlo_func *module_find_func(const hlo_module_ir *m, const char *name);
/* The entry function: `name` if given; else "main"; else the only function.
 * NULL when there is none. */
hlo_func *module_entry(const hlo_module_ir *m, const char *name);

/* Assigns hlo_value.id densely over every block argument and op result in
 * `f` (including nested regions), in program order; sets f->num_values. */
void func_number_values(hlo_func *f);

/* ------------------------------------------------------------- building */

/* A new op, not yet in any block: operands copied, results created with the
 * given types (types are not copied), no attributes, `num_regions` empty
 * regions. NULL on out of memory. */
hlo_op *op_create(hlo_module_ir *m, hlo_opcode opc, hlo_value *const *operands,
                  uint32_t num_operands, hlo_type *const *result_types,
                  uint32_t num_results, uint32_t num_regions, hlo_loc loc);
/* Links `op` at the end of `b` / before `before` (in before's block). */
void block_append(hlo_block *b, hlo_op *op);
void op_insert_before(hlo_op *before, hlo_op *op);
/* Unlinks `op` from its block (its memory stays in the arena). */
void op_unlink(hlo_op *op);
/* Sets the arguments of block `b` to fresh values of the given types (types
 * referenced, not copied; the old arguments are dropped, not unlinked from
 * their uses). Errors: HLO_RESOURCE_EXHAUSTED on out of memory. */
hlo_status block_set_args(hlo_module_ir *m, hlo_block *b, hlo_type *const *types,
                          uint32_t n);
/* Replaces every use of `from` by `to` in the ops of `b` and nested regions. */
void block_replace_uses(hlo_block *b, const hlo_value *from, hlo_value *to);

/* -------------------------------------------------------------- printing */

/* Pretty-prints the whole module the way JAX / mlir print it; the text
 * parses back to an equal module. Returns a malloc'd string (yours) or NULL
 * on out of memory. See src/ir/print.c. */
char *module_print(const hlo_module_ir *m);
/* module_print without locations (no `loc(...)` on ops, no `#loc`
 * aliases): value names are the printer's own (%0, %arg0, ...), so two
 * exports of one program that differ only in source locations or SSA names
 * print the same text. The compilation cache's key (executable_cache.c).
 * Yours; NULL on out of memory. */
char *module_print_canonical(const hlo_module_ir *m);

/* --------------------------------------------------------------- verify */

/* Checks every op of `m` against the spec's constraints. The first violation
 * is returned as a located HLO_VERIFY_ERROR naming the op and the spec's
 * constraint id ("dot_general (C12): ..."); HLO_INVALID_ARGUMENT when `m` is
 * NULL; HLO_RESOURCE_EXHAUSTED on out of memory. See src/ir/verify.c. */
HLO_MUST_USE hlo_status module_verify(const hlo_module_ir *m);

#endif /* HLO_IR_IR_H */
