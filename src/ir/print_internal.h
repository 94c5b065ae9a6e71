/* print_internal.h — the printer's state, shared by print.c (module,
 * functions, names, generic op form) and print_ops.c (pretty op forms).
 * Not a public interface. */
#ifndef HLO_IR_PRINT_INTERNAL_H
#define HLO_IR_PRINT_INTERNAL_H
#include "ir/print.h"

/* Value names of one function: hlo_value* -> "%name" (open addressing). */
typedef struct printer {
  strbuf *b;
  int indent;                /* spaces before an op of the current block */
  const hlo_value **keys;
  const char **names;
  uint32_t cap, count;
  arena a;                   /* name strings */
  uint32_t next_res;         /* %0, %1, ... */
  uint32_t next_arg;         /* %arg0, %arg1, ... */
  uint32_t next_conflict;    /* suffix of %cst_N, %c_N, %iterArg_N */
  bool used_cst, used_c, used_iter;
  bool fail;                 /* out of memory while naming */
  bool no_locs;              /* module_print_canonical: locations left out */
} printer;

/* The location text of `op` as this printer prints it (NULL: none). */
static inline const char *pr_loc(const printer *p, const hlo_op *op) {
  return p->no_locs ? NULL : op->loc_text;
}

/* Appends the name of `v` ("%3", "%0#1", "%arg0"). */
void pr_value(printer *p, const hlo_value *v);
/* Appends `%a, %b, ...` for n values. */
void pr_values(printer *p, hlo_value *const *v, uint32_t n);
/* Binds `v` to `name` (copied). */
void pr_bind(printer *p, const hlo_value *v, const char *name);
/* The name bound to `v` ("%iterArg_3"), or NULL when it has none yet. */
const char *pr_name_of(const printer *p, const hlo_value *v);
/* A fresh block-argument name ("%arg7") bound to `v`, unless `v` already
 * has a name (module_print names every value up front). */
void pr_bind_arg(printer *p, const hlo_value *v);
/* A fresh `%iterArg`/`%iterArg_N` name (lent, valid until the printer ends). */
const char *pr_fresh_iter(printer *p);
/* Appends a newline and the indentation of the current block. */
void pr_newline(printer *p);
/* Appends the ops of block `blk` one per line at indentation `indent`
 * (without the block label); each line starts with a newline. */
void pr_block_ops(printer *p, const hlo_block *blk, int indent);
/* Appends a region in generic form: `{`, `^bb0(args):` when it has
 * arguments, the ops indented two more, `}` at the op's indentation. */
void pr_region_generic(printer *p, const hlo_region *r);
/* Appends `T` or `(T, U)` for a result type list (`()` when empty). */
void pr_result_types(printer *p, const hlo_op *op);
/* Appends `(A, B) -> R` for the op's operand and result types. */
void pr_func_type(printer *p, const hlo_op *op);
/* Appends `A, B` for the op's operand types. */
void pr_operand_types(printer *p, const hlo_op *op);

/* The op's pretty form after `%r = ` (its name onwards), when it has one
 * that applies to this op; returns false having printed nothing otherwise
 * (the caller then prints the generic form). */
bool pr_pretty(printer *p, const hlo_op *op);
/* The pretty form of an sdy op (print_sdy.c); false (nothing printed)
 * when its attributes do not fit it. */
bool pr_sdy_pretty(printer *p, const hlo_op *op);
#endif
