/* parse.h — reading MLIR text (StableHLO, chlo, func, check, interpreter
 * dialects) into the IR of ir.h: the generic op form and every pretty form
 * JAX and the StableHLO test corpus print. */
#ifndef HLO_PARSE_PARSE_H
#define HLO_PARSE_PARSE_H
#include <stddef.h>
#include "ir/ir.h"

/* What the parser accepts (src/parse/: parser.c structure and generic form,
 * parse_type.c, parse_attr.c, parse_ops.c pretty forms):
 *   - `module [@name] [attributes {..}] { func.func ... }`, bare func.funcs,
 *     and the fully generic `"builtin.module"() ({...}) : () -> ()` /
 *     `"func.func"() <{function_type = ..., sym_name = ..}> ({...})`;
 *   - `#alias = ...` top-level lines (kept in m->aliases), `loc(...)` after
 *     ops (op->loc_text), args, functions and modules;
 *   - every op of ops.def in generic form, and the pretty forms JAX and the
 *     StableHLO corpus print. Attributes are stored as ir.h's ATTRIBUTE
 *     CONTRACT says; a tensor type's encoding is stored without the ", "
 *     separator (`#stablehlo.bounds<5>`). Result types the pretty form omits
 *     are inferred (SameOperandsAndResultType); such results share one
 *     hlo_type object (types are treated as immutable).
 * Errors name the offending token and sit at its line:col; nesting is
 * bounded (256 levels) and absurd sizes are errors, not allocations. */

/* Parses the text `src->text[begin, end)` as one module (`module { ... }`
 * or bare `func.func`s, which get an implicit module). `src->name` is the
 * file name for messages; line numbers count from `src->first_line` at
 * src->text[0]. The module copies the text it needs (m->source). On success
 * *out is a new module (free with module_free). Errors: HLO_PARSE_ERROR
 * located at the offending token (`file:line:col`), HLO_RESOURCE_EXHAUSTED.
 * Does not verify. */
HLO_MUST_USE hlo_status parse_module(const hlo_source *src, size_t begin, size_t end,
                                     hlo_module_ir **out);

/* One piece of a --split-input-file file. */
typedef struct split_piece {
  size_t begin, end;     /* byte range in the text */
  uint32_t first_line;   /* line number of text[begin] */
} split_piece;

/* Cuts `text` at every line containing the substring `// -----` (the
 * reference tools also cut at `// // -----`). *out_pieces is malloc'd
 * (yours); always at least one piece. Errors: HLO_RESOURCE_EXHAUSTED. */
HLO_MUST_USE hlo_status parse_split(const char *text, size_t len, split_piece **out_pieces,
                                    size_t *out_n);
#endif
