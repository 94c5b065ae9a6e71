/* fuzz_parse.c — libFuzzer target for hlo's front end and interpreter.
 *
 * For each input: parse_module; a parse failure must be HLO_PARSE_ERROR or
 * HLO_RESOURCE_EXHAUSTED carrying a location (line >= 1). On success:
 * module_verify, module_print, and re-parse of the printed text. Whatever
 * the parser accepts — verified or not (issue 12) — the printed text must
 * parse again and print to the same text (print is a fixed point after one
 * round); a failure there is a printer/parser bug and traps so the fuzzer
 * records the input.
 *
 * Interpreter mode (on unless HLO_FUZZ_INTERP=0): a verified module whose
 * entry function takes no arguments is run on the reference interpreter,
 * but only when it cannot loop or grow without bound — the interpreter has
 * no step budget — so modules holding stablehlo.while, func.call,
 * interpreter.run_parallel, feeds/send/recv, collectives, or any tensor type
 * of more than FUZZ_MAX_ELEMS elements are not run.
 *
 * Build: tests/fuzz/run.sh (clang -fsanitize=fuzzer,address,undefined). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "parse/parse.h"
#include "runtime/runtime.h"
#include "support/status.h"

/* Largest element count of any tensor type in a module that is interpreted. */
#define FUZZ_MAX_ELEMS 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *text, size_t len) {
  fprintf(stderr, "fuzz_parse: %s\n--- text (%zu bytes) ---\n%.*s\n---\n", what, len,
          (int)(len > 4000 ? 4000 : len), text);
  __builtin_trap();
}

/* A parse error must carry a sane code and a location. */
static void check_parse_status(hlo_status st, const char *text, size_t len) {
  hlo_status_code c = hlo_status_code_of(st);
  if (c != HLO_PARSE_ERROR && c != HLO_RESOURCE_EXHAUSTED) {
    hlo_status_print(st, stderr);
    fuzz_fail("parse_module failed with an unexpected status code", text, len);
  }
  const hlo_loc *loc = status_loc(st);
  if (c == HLO_PARSE_ERROR && (!loc || loc->line < 1)) {
    hlo_status_print(st, stderr);
    fuzz_fail("parse error without a location", text, len);
  }
}

static bool type_ok(const hlo_type *t) {
  if (!t) return true;
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_elems; i++)
      if (!type_ok(t->elems[i])) return false;
    return true;
  }
  if (t->kind != TYPE_TENSOR) return true;
  int64_t n = type_num_elements(t);
  return n >= 0 && n <= FUZZ_MAX_ELEMS;
}

static bool block_ok(const hlo_block *b) {
  for (uint32_t i = 0; i < b->num_args; i++)
    if (!type_ok(b->args[i].type)) return false;
  for (const hlo_op *op = b->first; op; op = op->next) {
    switch (op->opcode) {
    case OP_WHILE: case OP_FUNC_CALL: case OP_INTERP_RUN_PARALLEL: case OP_INFEED:
    case OP_OUTFEED: case OP_SEND: case OP_RECV: case OP_ALL_GATHER: case OP_ALL_REDUCE:
    case OP_ALL_TO_ALL: case OP_COLLECTIVE_BROADCAST: case OP_COLLECTIVE_PERMUTE:
    case OP_COLLECTIVE_REDUCE: case OP_REDUCE_SCATTER: case OP_INTERP_PROBE:
      return false;
    default: break;
    }
    for (uint32_t i = 0; i < op->num_results; i++)
      if (!type_ok(op->results[i].type)) return false;
    for (uint32_t i = 0; i < op->num_attrs; i++) {
      const hlo_attr *a = op->attrs[i].value;
      if (a && a->kind == ATTR_DENSE && (a->u.dense.num_elems < 0 ||
                                         a->u.dense.num_elems > FUZZ_MAX_ELEMS))
        return false;
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      if (!block_ok(&op->regions[r].block)) return false;
  }
  return true;
}

/* True when every function of `m` is safe to interpret (see the header). */
static bool module_safe_to_run(const hlo_module_ir *m) {
  for (const hlo_func *f = m->funcs; f; f = f->next)
    if (!block_ok(&f->body.block)) return false;
  return true;
}

static void run_interp(hlo_module_ir *ir) {
  const char *e = getenv("HLO_FUZZ_INTERP");
  if (e && strcmp(e, "0") == 0) return;
  const hlo_func *entry = module_entry(ir, NULL);
  if (!entry || entry->num_args != 0 || !module_safe_to_run(ir)) {
    module_free(ir);
    return;
  }
  hlo_module *m = runtime_module_wrap(ir);
  if (!m) { module_free(ir); return; }
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  interp_options opts = {NULL, devnull};
  hlo_executable *exe = NULL;
  hlo_status st = runtime_executable_create(m, NULL, &opts, &exe);
  if (!st && module_safe_to_run(runtime_module_ir(m))) {  /* again, after chlo lowering */
    hlo_buffer **res = NULL;
    st = hlo_executable_run(exe, NULL, 0, &res);
    if (getenv("HLO_FUZZ_VERBOSE")) {
      fprintf(stderr, "fuzz_parse: interpreted: %s\n", st ? hlo_status_message(st) : "ok");
    }
    if (!st) {
      for (int i = 0; i < hlo_executable_num_results(exe); i++) hlo_buffer_destroy(res[i]);
      free(res);
    }
  }
  hlo_status_free(st);
  hlo_executable_destroy(exe);
  hlo_module_destroy(m);
}

/* a == b, ignoring blanks and CRs at line ends (top-level alias lines keep
 * trailing blanks on the first parse only — a cosmetic difference). */
static bool same_text(const char *a, const char *b) {
  for (;;) {
    const char *ea = a, *eb = b;
    while (*ea == ' ' || *ea == '\t' || *ea == '\r') ea++;
    while (*eb == ' ' || *eb == '\t' || *eb == '\r') eb++;
    bool enda = *ea == '\n' || !*ea, endb = *eb == '\n' || !*eb;
    if (enda && endb) {
      if (*ea != *eb) return false;
      if (!*ea) return true;
      a = ea + 1;
      b = eb + 1;
      continue;
    }
    if (*a != *b) return false;
    a++;
    b++;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  /* HLO_FUZZ_SKIP_KNOWN=1 ignores inputs that trigger the known, unfixed
   * bugs of tests/fuzz/crashes/ (NUL or TAB bytes, `module @` with a name
   * that is not a bare identifier), to look past them when exploring. */
  static int skip_known = -1;
  if (skip_known < 0) skip_known = getenv("HLO_FUZZ_SKIP_KNOWN") != NULL;
  if (skip_known) {
    if (memchr(data, 0, size) || memchr(data, '\t', size)) return 0;
    for (size_t i = 0; i + 8 < size; i++) {
      if (memcmp(text + i, "module @", 8) != 0) continue;
      char c = text[i + 8];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return 0;
    }
  }
  hlo_source src = {"fuzz.mlir", text, size, 1};
  hlo_module_ir *m = NULL;
  hlo_status st = parse_module(&src, 0, size, &m);
  if (st) {
    check_parse_status(st, text, size);
    hlo_status_free(st);
    return 0;
  }
  hlo_status vst = module_verify(m);
  bool verified = vst == NULL;
  hlo_status_free(vst);

  char *p1 = module_print(m);
  if (!p1) fuzz_fail("module_print returned NULL", text, size);
  size_t n1 = strlen(p1);
  hlo_source src2 = {"printed.mlir", p1, n1, 1};
  hlo_module_ir *m2 = NULL;
  st = parse_module(&src2, 0, n1, &m2);
  if (st) {
    hlo_status_print(st, stderr);
    fprintf(stderr, "--- printed ---\n%s\n", p1);
    fuzz_fail(verified ? "printed text of a verified module does not parse"
                       : "printed text of an accepted (unverified) module does not parse",
              text, size);
  } else {
    char *p2 = module_print(m2);
    if (!p2) fuzz_fail("module_print returned NULL on the re-parsed module", text, size);
    if (!same_text(p1, p2)) {
      fprintf(stderr, "--- print 1 ---\n%s\n--- print 2 ---\n%s\n", p1, p2);
      fuzz_fail("printing is not a fixed point (print(parse(print(m))) != print(m))", text,
                size);
    }
    free(p2);
    module_free(m2);
  }
  free(p1);

  if (verified) run_interp(m);  /* takes ownership of m */
  else module_free(m);
  return 0;
}
