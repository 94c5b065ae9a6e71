/* parse_internal.h — the parser's shared state and helpers, used by
 * parser.c (cursor, errors, module/func/block/op structure, generic form,
 * value scopes), parse_type.c (types), parse_attr.c (attributes, dense
 * literals) and parse_ops.c (pretty op forms). Not a public interface.
 *
 * Conventions: every parse function returns true on success; on failure it
 * has recorded the first error in ps->err (a located HLO_PARSE_ERROR) and
 * returns false. Out of memory is recorded as HLO_RESOURCE_EXHAUSTED (ps_oom).
 * Everything allocated lives in the module's arena. The cursor is a byte
 * offset into the module's own NUL-terminated copy of the text. */
#ifndef HLO_PARSE_PARSE_INTERNAL_H
#define HLO_PARSE_PARSE_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

/* Maximum nesting of regions, attributes, types and dense lists. */
#define PARSE_MAX_DEPTH 256

/* One name in a value scope: `%name` for `count` consecutive values. */
typedef struct sym_entry {
  const char *name;
  uint32_t len, hash;
  int32_t next;       /* older entry in the same bucket, or -1 */
  uint32_t count;     /* values defined under this name (`%0:2` → 2) */
  hlo_value *first;   /* the first value; the others follow it in memory */
} sym_entry;

/* A name in the text: offset and length (without '%'). */
typedef struct name_ref {
  size_t pos, len;
} name_ref;

/* A `dense_resource<NAME>` literal waiting for the resource section. */
typedef struct pending_resource {
  hlo_attr *attr;
  size_t pos;
} pending_resource;

typedef struct pstate {
  hlo_module_ir *m;
  arena *a;
  const char *s;           /* text (NUL-terminated copy in the module) */
  size_t pos, end;
  const hlo_source *src;   /* &m->source */
  int depth;
  hlo_status err;
  /* incremental line tracking for locations */
  size_t lc_pos, lc_line_start;
  uint32_t lc_line;
  /* value scope: a stack of entries, hashed into buckets */
  sym_entry *syms;
  uint32_t nsyms, capsyms;
  int32_t *buckets;        /* SYM_BUCKETS heads */
  uint32_t cap_aliases;    /* capacity of m->aliases */
  /* the last function type parsed as an attribute (generic func.func's
   * function_type); fn_nin == UINT32_MAX when none */
  hlo_type **fn_ins, **fn_outs;
  uint32_t fn_nin, fn_nout;
  char tokbuf[48];         /* scratch for token descriptions */
  pending_resource *pend_res; /* dense_resource literals to resolve */
  uint32_t npend_res, cap_pend_res;
} pstate;

#define SYM_BUCKETS 4096u

#define TRY(x) do { if (!(x)) return false; } while (0)

/* ------------------------------------------------------------ cursor */
/* The location (line:col, counted from src->first_line) of byte `pos`
 * (clamped to the end). Incremental: cheap for positions near the last one. */
hlo_loc ps_loc(pstate *ps, size_t pos);
/* Records a located parse error at byte `pos` (first error wins); returns false. */
bool ps_err(pstate *ps, size_t pos, const char *fmt, ...) HLO_PRINTF(3, 4);
/* Records an out-of-memory error; returns false. */
bool ps_oom(pstate *ps);
/* Skips white space and `//` comments. */
void ps_ws(pstate *ps);
/* The next significant character (after ps_ws), 0 at the end. */
char ps_peek(pstate *ps);
/* Consumes `c` if it is next. */
bool ps_accept(pstate *ps, char c);
/* Consumes the string `lit` if it is next (no word-boundary check). */
bool ps_accept_str(pstate *ps, const char *lit);
/* Consumes `c` or records "expected 'c' in WHAT, got 'TOKEN'". */
bool ps_expect(pstate *ps, char c, const char *what);
/* Consumes "->" or errors. */
bool ps_expect_arrow(pstate *ps, const char *what);
/* A short description of the token at `pos` for messages (lent). */
const char *ps_tok(pstate *ps, size_t pos);
/* True when the next token is the bare word `w` (word boundary checked). */
bool ps_peek_kw(pstate *ps, const char *w);
/* Consumes the bare word `w` if next. */
bool ps_accept_kw(pstate *ps, const char *w);
/* Consumes the bare word `w` or records "expected 'w' in WHAT". */
bool ps_expect_kw(pstate *ps, const char *w, const char *what);
/* A bare identifier [A-Za-z_][A-Za-z0-9_$.-]*: start offset and length.
 * Returns false (no error recorded) when none is next. */
bool ps_ident(pstate *ps, size_t *start, size_t *len);
/* c may continue a bare identifier: [A-Za-z0-9_$.-]. */
bool ps_is_ident_char(char c);
/* An integer literal (optional '-', decimal or 0x hex) into int64
 * (hex and large decimals wrap through uint64). */
bool ps_int(pstate *ps, int64_t *out, const char *what);
/* A double-quoted string, unescaped into the arena. */
bool ps_string(pstate *ps, char **out, size_t *out_len);
/* Skips a balanced `<...>`/`(...)`/`[...]`/`{...}` group starting at the
 * cursor (which must be at the opening bracket). */
bool ps_skip_balanced(pstate *ps);
/* Arena helpers: allocation / copy in ps->a; NULL after recording ps_oom. */
void *ps_alloc(pstate *ps, size_t n);
char *ps_strndup(pstate *ps, const char *s, size_t n);
/* Grows an arena vector of `el`-byte elements to hold *n+1 (doubling; the old
 * array is abandoned in the arena), increments *n and returns the new zeroed
 * slot; NULL after ps_oom (also past 2^28 elements). */
void *ps_vec_push(pstate *ps, void **arr, uint32_t *n, uint32_t *cap, size_t el);

/* ------------------------------------------------------------ values */
/* `%name` (cursor at '%'): start/len of the name without '%'. */
bool ps_value_name(pstate *ps, size_t *start, size_t *len);
/* A use `%name` or `%name#i`; checks it is defined. */
bool ps_use(pstate *ps, hlo_value **out);
/* Defines `count` values starting at `first` under the name. Errors on
 * redefinition (at `pos`). */
bool ps_define(pstate *ps, size_t pos, const char *name, uint32_t len, hlo_value *first,
               uint32_t count);
/* A scope mark (the current number of names), and popping every name defined
 * since `mark` (they become undefined again). */
uint32_t ps_scope_mark(pstate *ps);
void ps_scope_pop(pstate *ps, uint32_t mark);

/* ------------------------------------------------------------- types */
/* A value type: tensor<...>, tuple<...>, !stablehlo.token. */
bool parse_type(pstate *ps, hlo_type **out);
/* An element type (i32, complex<f32>, !quant.uniform<...>). Returns false
 * without an error when `soft` and the next token is not a known element
 * type (the cursor is then unchanged). */
bool parse_elem_type(pstate *ps, hlo_dtype *dt, const quant_params **q, bool soft);
/* `(T, ...)` or a single type: the list of types in parentheses (or one). */
bool parse_type_list_parens(pstate *ps, hlo_type ***out, uint32_t *n);
/* Comma-separated types without parentheses (at least one). */
bool parse_type_list(pstate *ps, hlo_type ***out, uint32_t *n);
/* A function type `(T, ...) -> T | (T, ...)`. */
bool parse_func_type(pstate *ps, hlo_type ***ins, uint32_t *nin, hlo_type ***outs,
                     uint32_t *nout);
/* Result types after "->": `T` or `(T, ...)`. */
bool parse_result_types(pstate *ps, hlo_type ***outs, uint32_t *nout);

/* -------------------------------------------------------- attributes */
/* Any attribute value (the left column of ir.h's ATTRIBUTE CONTRACT), stored
 * as the contract says; unknown `#dialect...` forms become ATTR_OPAQUE. */
bool parse_attr(pstate *ps, hlo_attr **out);
/* Appends `name = v` to an attribute list (an op's attributes, an attr-dict,
 * a struct's fields): THE one place every path of the parser adds a named
 * attribute, so every path rejects a duplicate name ("duplicate attribute
 * 'NAME'", located at `pos`). name == NULL or v == NULL is out of memory. */
bool ps_attr_add(pstate *ps, size_t pos, named_attr **items, uint32_t *n, uint32_t *cap,
                 const char *name, hlo_attr *v);
/* `{name = value, unit_name, ...}` (cursor at '{') appended to a list through
 * ps_attr_add; names are identifiers or non-empty quoted strings. */
bool parse_attr_dict(pstate *ps, named_attr **items, uint32_t *n, uint32_t *cap);
/* `[1, 2, ?]` as int64s (? → HLO_DYN), arena allocated. */
bool parse_int_list(pstate *ps, int64_t **out, uint32_t *n);
/* The fields of `#stablehlo.NAME<...>` after the '<' up to and including '>'. */
bool parse_struct_body(pstate *ps, const char *name, hlo_attr **out);
/* `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` conv dimension numbers. */
bool parse_conv_dims(pstate *ps, hlo_attr **out);
/* Attribute constructors in ps->a (mk_enum copies value[0..vlen); mk_struct
 * keeps `name` and `fields` by reference); NULL after ps_oom. */
hlo_attr *mk_enum(pstate *ps, const char *dialect, const char *name, const char *value, size_t vlen);
hlo_attr *mk_dense_array(pstate *ps, const int64_t *v, uint32_t n, hlo_dtype dt);
hlo_attr *mk_struct(pstate *ps, const char *name, named_attr *fields, uint32_t n);

/* ---------------------------------------------------------------- ops */
/* What an op's parse collects before the op is created. */
typedef struct opb {
  hlo_opcode opc;
  size_t name_pos;
  hlo_value **ops; uint32_t nops, capops;
  hlo_type **rtypes; uint32_t nrt;  /* result types once known */
  uint32_t nres;                    /* result count from the `%r:N =` list */
  named_attr *attrs; uint32_t nattrs, capattrs;
  hlo_region **regs; uint32_t nregs, capregs;
} opb;

/* Append an operand / a named attribute / a region to `b`. false after
 * ps_oom (opb_attr also treats v == NULL as out of memory, so a failed
 * constructor can be passed straight in). */
bool opb_operand(pstate *ps, opb *b, hlo_value *v);
bool opb_attr(pstate *ps, opb *b, const char *name, hlo_attr *v);
/* opb_attr with the position a duplicate is reported at (opb_attr uses the
 * cursor). */
bool opb_attr_at(pstate *ps, opb *b, size_t pos, const char *name, hlo_attr *v);
bool opb_region(pstate *ps, opb *b, hlo_region *r);
/* A region `{ [^bb(args):] ops }` (cursor at '{'). `pre_types`/`pre_names`
 * give block args defined outside the braces (while's iterArgs, reducer
 * args); `n_pre` of them. */
bool parse_region(pstate *ps, hlo_region **out, hlo_type *const *pre_types,
                  const name_ref *pre_names, uint32_t n_pre);
/* Checks a use's declared type against the value's. */
bool check_use_type(pstate *ps, size_t pos, hlo_value *v, const hlo_type *declared);
/* The generic form after the op name: `(operands) <{props}> (regions)
 * {attrs} : (types) -> types`. */
bool parse_generic(pstate *ps, opb *b);
/* The pretty form of `b->opc` after its name (parse_ops.c). */
bool parse_pretty(pstate *ps, opb *b);
/* ------------------------------------------------------ sdy (parse_sdy.c) */
/* `<[...], device_ids=[...]>` (cursor at '<'). */
bool parse_sdy_mesh_body(pstate *ps, sdy_mesh **out);
/* `<@mesh | mesh<...>, [dims], replicated={..}, unreduced={..}>` (cursor at '<'). */
bool parse_sdy_sharding_body(pstate *ps, sdy_sharding **out);
/* `#NAME<...>` for NAME = sdy.sharding / sdy.sharding_per_value / sdy.mesh
 * (nm/nl: NAME; `after`: offset just past NAME). Sets *handled when NAME is
 * one of them (then *out is the ATTR_SDY); other sdy attributes are left to
 * the caller (kept opaque). */
bool parse_sdy_hash_attr(pstate *ps, const char *nm, size_t nl, size_t after, bool *handled,
                         hlo_attr **out);
/* A module-level `sdy.mesh @name = <...> {attrs}` after the keyword at `kw_pos`. */
bool parse_sdy_mesh_decl(pstate *ps, size_t kw_pos);
/* The pretty form of an sdy op (b->opc is OP_SDY_*) after its name. */
bool parse_sdy_pretty(pstate *ps, opb *b);

/* ------------------------------------------ resources (parse_resource.c) */
/* `dense_resource<NAME> : T` with the cursor after the keyword (`start`: the
 * keyword's offset, for errors): an ATTR_DENSE with `resource` set, resolved
 * later by parse_resolve_resources. */
bool parse_dense_resource(pstate *ps, size_t start, hlo_attr **out);
/* `{-# dialect_resources: {...} #-}` (cursor at '{-#') into m->resources. */
bool parse_resource_section(pstate *ps);
/* Fills every recorded dense_resource literal from the module's builtin
 * blobs; located errors for a missing name, `__elided__`, or a size that
 * differs from the type's. */
bool parse_resolve_resources(pstate *ps);

/* Optional trailing `loc(...)`: its text or NULL. */
bool parse_opt_loc(pstate *ps, const char **out);
#endif
