/* pass_manager.c — the pass registry and the pipeline runner (see
 * pass_manager.h): parse the pipeline, then for each pass dump the module,
 * run it, time it, verify, dump again. */
#include "passes/pass_manager.h"
#include "support/path.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "passes/pass_util.h"
#include "support/arena.h"
#include "support/strbuf.h"

/* ----------------------------------------------------------- adapters */

static hlo_status run_chlo_legalize(hlo_module_ir *m, const hlo_pass_options *o) {
  (void)o;
  return pass_chlo_legalize(m);
}

static hlo_status run_refine_shapes(hlo_module_ir *m, const hlo_pass_options *o) {
  const char *entry = o ? o->entry : NULL;
  hlo_func *f = module_entry(m, entry);
  if (!f) return status_new(HLO_NOT_FOUND, "refine-shapes: no entry function");
  if (o && o->arg_types)
    return pass_refine_shapes(m, entry, o->arg_types, o->num_arg_types);
  /* the declared types (which must be static) */
  hlo_type **none = xcalloc(f->num_args ? f->num_args : 1, sizeof *none);
  if (!none) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  hlo_status st = pass_refine_shapes(m, entry, none, f->num_args);
  free(none);
  return st;
}

static const pass_info k_passes[] = {
    {"inline", pass_inline, "inline func.call and stablehlo.composite; drop dead private functions"},
    {"chlo-legalize", run_chlo_legalize, "rewrite chlo ops into StableHLO"},
    {"refine-shapes", run_refine_shapes,
     "specialize @main to its argument types (StableHLO's stablehlo-refine-shapes)"},
    {"simplify", pass_simplify, "algebraic simplification: local rules to a fixed point"},
    {"constant-fold", pass_constant_fold,
     "evaluate ops on constants with the interpreter's kernels (size-limited)"},
    {"cse", pass_cse, "merge identical pure ops within each block"},
    {"dce", pass_dce, "remove unused pure ops and unreferenced private functions"},
    {"transpose-folding", pass_transpose_folding,
     "dot_general reads a transposed operand in place: the transpose folded into its dims"},
    {"dot-decomposer", pass_dot_decomposer,
     "dot_general as a [B,]MxK . [B,]KxN matrix product: operands transposed and reshaped"},
    {"dot-strength-reduction", pass_dot_strength_reduction,
     "small dot_general as broadcasts, multiply and reduce(add): fused, no GEMM call"},
    {"reduction-layout-normalizer", pass_reduction_layout_normalizer,
     "reduce over trailing dimensions only: a transpose moves the reduced ones last"},
    {"reshape-hoisting", pass_reshape_hoisting,
     "a reshape merging dims of an elementwise chain: the chain computed in the merged shape"},
    {"duplicate-generators", pass_duplicate_generators,
     "copy a cheap iota/constant-only value into each fusible reader, so fusion never stores it"},
    {"while-loop-trip-count", pass_while_loop_trip_count,
     "annotate while loops whose trip count is known (i = c0; i < N; i += s)"},
    {"fusion", pass_fusion, "group elementwise/layout chains and reductions into hlo.fusion ops"},
};

#define NUM_PASSES (sizeof k_passes / sizeof k_passes[0])

const pass_info *pass_lookup(const char *name, size_t len) {
  for (size_t i = 0; i < NUM_PASSES; i++)
    if (strlen(k_passes[i].name) == len && memcmp(k_passes[i].name, name, len) == 0)
      return &k_passes[i];
  return NULL;
}

const pass_info *pass_at(uint32_t i) { return i < NUM_PASSES ? &k_passes[i] : NULL; }

/* ----------------------------------------------------------- pipelines */

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

/* Splits `p` into passes: *out (malloc'd) gets up to *n entries. */
static hlo_status parse_pipeline(const char *p, const pass_info ***out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  uint32_t cap = 1;
  for (const char *s = p; *s; s++) cap += *s == ',';
  const pass_info **v = xcalloc(cap, sizeof *v);
  if (!v) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  const char *s = p;
  for (;;) {
    const char *e = strchr(s, ',');
    if (!e) e = s + strlen(s);
    const char *a = s, *b = e;
    while (a < b && is_space(*a)) a++;
    while (b > a && is_space(b[-1])) b--;
    const pass_info *pi = pass_lookup(a, (size_t)(b - a));
    if (!pi) {
      strbuf sb;
      sb_init(&sb);
      for (size_t i = 0; i < NUM_PASSES; i++) sb_printf(&sb, "%s%s", i ? ", " : "", k_passes[i].name);
      hlo_status st =
          a == b ? status_new(HLO_INVALID_ARGUMENT,
                              "pipeline \"%s\": empty pass name; the passes are: %s", p,
                              sb_cstr(&sb))
                 : status_new(HLO_INVALID_ARGUMENT,
                              "pipeline \"%s\": unknown pass '%.*s'; the passes are: %s", p,
                              (int)(b - a), a, sb_cstr(&sb));
      sb_free(&sb);
      free(v);
      return st;
    }
    v[(*n)++] = pi;
    if (!*e) break;
    s = e + 1;
  }
  *out = v;
  return NULL;
}

hlo_status pass_pipeline_check(const char *pipeline) {
  const pass_info **v;
  uint32_t n;
  HLO_TRY(parse_pipeline(pipeline ? pipeline : PASS_PIPELINE_DEFAULT, &v, &n));
  free(v);
  return NULL;
}

/* ----------------------------------------------------------- dumps */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static hlo_status make_dir(const char *dir) {
  hlo_status st = path_make_dirs(dir, 0777);
  return st ? status_note(st, "while making the dump folder") : NULL;
}

static hlo_status dump(const hlo_module_ir *m, const char *dir, uint32_t index, const char *pass,
                       const char *when) {
  strbuf path;
  sb_init(&path);
  sb_printf(&path, "%s/%04u.%s.%s.mlir", dir, index, pass, when);
  if (path.oom) {
    sb_free(&path);
    return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  char *text = module_print(m);
  hlo_status st = NULL;
  if (!text) {
    st = status_new(HLO_RESOURCE_EXHAUSTED, "out of memory while printing %s", path.data);
  } else {
    FILE *f = fopen(path.data, "w");
    size_t len = strlen(text);
    bool ok = f != NULL;
    if (f) {
      ok = fwrite(text, 1, len, f) == len;
      ok = fclose(f) == 0 && ok;
    }
    if (!ok) st = status_new(HLO_UNAVAILABLE, "cannot write %s: %s", path.data, strerror(errno));
  }
  free(text);
  sb_free(&path);
  return st;
}

/* ----------------------------------------------------------- running */

static const pass_pipeline_options k_default_options = {NULL, true, NULL, 0, {0}};

static hlo_status run_pipeline(hlo_module_ir *m, const pass_pipeline_options *o,
                               const pass_info *const *passes, uint32_t n, pass_report *rep) {
  const char *pipeline = o->pipeline ? o->pipeline : PASS_PIPELINE_DEFAULT;
  if (o->dump_dir) HLO_TRY(make_dir(o->dump_dir));
  if (o->verify_each) {
    hlo_status st = module_verify(m);
    if (st) return status_note(st, "the input of pipeline \"%s\" does not verify", pipeline);
  }
  for (uint32_t i = 0; i < n; i++) {
    const pass_info *pi = passes[i];
    uint32_t index = o->first_dump_index + i;
    pass_stat *ps = &rep->stats[rep->n++];
    ps->name = pi->name;
    ps->ops_before = module_count_ops(m);
    if (o->dump_dir) HLO_TRY(dump(m, o->dump_dir, index, pi->name, "before"));
    double t0 = now_ms();
    hlo_status st = pi->run(m, &o->pass);
    ps->ms = now_ms() - t0;
    ps->ops_after = module_count_ops(m);
    rep->next_dump_index = index + 1;
    if (st) return status_note(st, "in pass '%s' (%u of %u in \"%s\")", pi->name, i + 1, n, pipeline);
    if (o->dump_dir) HLO_TRY(dump(m, o->dump_dir, index, pi->name, "after"));
    if (o->verify_each) {
      st = module_verify(m);
      if (st) {
        hlo_status e = status_at(hlo_status_code_of(st), status_loc(st), "after pass '%s' (%u of %u): %s",
                                 pi->name, i + 1, n, hlo_status_message(st));
        hlo_status_free(st);
        return status_note(e, "the IR verified before pass '%s' of \"%s\"", pi->name, pipeline);
      }
    }
  }
  return NULL;
}

hlo_status pass_run_list(hlo_module_ir *m, const pass_pipeline_options *o,
                         const pass_info *const *passes, uint32_t n, pass_report *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!o) o = &k_default_options;
  if (!m) return status_new(HLO_INVALID_ARGUMENT, "pass_run_list: no module");
  pass_report rep = {0};
  rep.next_dump_index = o->first_dump_index;
  rep.stats = xcalloc(n ? n : 1, sizeof *rep.stats);
  if (!rep.stats) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  double t0 = now_ms();
  hlo_status st = run_pipeline(m, o, passes, n, &rep);
  for (hlo_func *f = m->funcs; f; f = f->next) func_number_values(f);
  rep.total_ms = now_ms() - t0;
  if (out) *out = rep;
  else pass_report_free(&rep);
  return st;
}

hlo_status pass_pipeline_run(hlo_module_ir *m, const pass_pipeline_options *o, pass_report *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!o) o = &k_default_options;
  if (!m) return status_new(HLO_INVALID_ARGUMENT, "pass_pipeline_run: no module");
  const pass_info **passes;
  uint32_t n;
  HLO_TRY(parse_pipeline(o->pipeline ? o->pipeline : PASS_PIPELINE_DEFAULT, &passes, &n));
  hlo_status st = pass_run_list(m, o, passes, n, out);
  free(passes);
  return st;
}

void pass_report_print(const pass_report *r, FILE *f) {
  for (uint32_t i = 0; i < r->n; i++) {
    const pass_stat *s = &r->stats[i];
    fprintf(f, "  %-14s %9.3f ms  %8llu -> %llu ops\n", s->name, s->ms,
            (unsigned long long)s->ops_before, (unsigned long long)s->ops_after);
  }
  fprintf(f, "  %-14s %9.3f ms\n", "total", r->total_ms);
}

void pass_report_free(pass_report *r) {
  free(r->stats);
  memset(r, 0, sizeof *r);
}
