/* print.h — printing IR as MLIR text (the printer behind module_print in
 * ir.h). The module printer is in print.c, op forms in print_ops.c, types,
 * attributes and dense literals in print_attr.c.
 *
 * Everything appends to a strbuf (support/strbuf.h); an out-of-memory sets
 * the strbuf's `oom` flag, which callers check once at the end. */
#ifndef HLO_IR_PRINT_H
#define HLO_IR_PRINT_H
#include "ir/ir.h"
#include "support/strbuf.h"

/* Appends type `t` as MLIR spells it: `tensor<2x?xf32>`, `tensor<f32, #enc>`,
 * `tensor<4x!quant.uniform<i8:f32, 0.5:-3>>`, `tuple<...>`,
 * `!stablehlo.token`. */
void print_type(strbuf *b, const hlo_type *t);
/* Appends the element type of tensor type `t` (`f32`, `complex<f32>`,
 * `!quant.uniform<...>`). */
void print_elem_type(strbuf *b, const hlo_type *t);
/* Appends attribute `a` in MLIR's generic attribute syntax (ir.h's ATTRIBUTE
 * CONTRACT read backwards): `1 : i64`, `array<i64: 1, 2>`, `dense<...> :
 * tensor<...>`, `#stablehlo<comparison_direction LT>`, `#stablehlo.dot<...>`,
 * opaque attributes verbatim. */
void print_attr(strbuf *b, const hlo_attr *a);
/* Appends only the `dense<...>` part of an ATTR_DENSE (no `: type`).
 * Float elements print so they parse back to the same bits; NaN and
 * infinities as hex bit patterns (`0x7FC00000`); more than 100 elements as
 * a hex blob `"0x..."` of the raw data. */
void print_dense_body(strbuf *b, const hlo_attr *a);
/* Appends one float of type `t` given by its bit pattern: six significant
 * digits in `%.6e` layout (`1.429690e+00`) when that parses back to the same bits, else the shortest `%.{p}E` that does, and
 * NaN/inf as `0x` + the bit pattern (MLIR's rules). */
void print_float_bits(strbuf *b, hlo_dtype t, uint64_t bits);
/* Appends `s[0..n)` as a double-quoted MLIR string (`\"`, `\\`, other
 * non-printable bytes as `\XX`). */
void print_string(strbuf *b, const char *s, size_t n);
/* Appends a dictionary key or bare name: as is when it is an identifier
 * ([A-Za-z_][A-Za-z0-9_$.]*), else quoted. */
void print_name(strbuf *b, const char *s);
/* Appends a symbol reference: `@name` when every `::@`-separated segment of
 * name is an MLIR bare-id ([A-Za-z_][A-Za-z0-9_$.]*), so a nested reference
 * (`a::@b`) stays bare; else the whole name as `@"quoted"`. */
void print_symbol(strbuf *b, const char *s, size_t n);
/* A flat symbol reference (one name, no `::@` nesting: Shardy's mesh names)
 * as `@name`, or `@"..."` when it is not an MLIR bare-id — also when it
 * contains `::`, which a nested reference would read differently. */
void print_flat_symbol(strbuf *b, const char *s, size_t n);
/* Appends `{k = v, unit_key, ...}` for `n` named attributes. */
void print_attr_dict(strbuf *b, const named_attr *items, uint32_t n);
/* Appends conv dimension numbers without the `#stablehlo.conv<>` wrapper:
 * `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, or `raw field = ..., ...` when
 * the fields are not a permutation. */
void print_conv_dim_numbers(strbuf *b, const hlo_attr *a);
/* Appends `[1, 2, 3]`. */
void print_int_list(strbuf *b, const int64_t *v, uint32_t n);

/* One op in MLIR text, without indentation or newline (for messages and
 * dumps). Values are named after their names in the source (`%x`) or by id
 * when unnamed. Regions print in full. Returns a malloc'd string (yours), or
 * NULL on out of memory. */
char *op_print(const hlo_op *op);
/* Shardy (print_sdy.c): a mesh body `<["x"=2], device_ids=[..]>`, a sharding
 * body `<@mesh, [{"x"}, {}]>`, an ATTR_SDY value (`#sdy.sharding<...>`...),
 * the module's `sdy.mesh` lines (two-space indented, one per line), and the
 * trailing `{-# dialect_resources ... #-}` section (nothing when empty). */
void print_sdy_mesh(strbuf *b, const sdy_mesh *m);
void print_sdy_sharding(strbuf *b, const sdy_sharding *s);
void print_sdy_attr(strbuf *b, const sdy_attr *a);
void print_sdy_meshes(strbuf *b, const hlo_module_ir *m);
void print_resources(strbuf *b, const hlo_module_ir *m);
#endif
