/* test_passes_oracle.c — the passes preserve semantics: the default pipeline
 * (PASS_PIPELINE_DEFAULT, verifying after each pass) runs on every model of
 * ../shared/models (NAME.mlir and NAME.cpu.mlir, on their inputs/), on every
 * file of the conformance testdata/ folder (a sample with
 * HLO_PASSES_ORACLE_EVERY=N) and on every JAX program of tests/jax (on its
 * inputs; "refine-shapes" first for the dynamic ones); the interpreter runs
 * the optimised module and the unoptimised one (chlo legalized, shapes
 * refined, nothing else), and their results must be equal bit for bit (the
 * interpreter is the oracle; constant folding runs the interpreter's own
 * kernels, so it is exact too). Prints the op counts before and after the
 * pipeline for each model. The same again for the CPU pipeline
 * (PASS_PIPELINE_CPU: the default one, then fusion), which also prints the
 * number of hlo.fusion ops made per model: the interpreter runs each
 * fusion's body, so the fused module must give the same bits. About 1 s
 * per pipeline at -O2. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "passes/pass_manager.h"
#include "passes/pass_util.h"
#include "support/npy.h"
#include "test.h"
#include "testlib.h"

/* A tensor of type `t` from a .npy array (float32 files converted to
 * narrower float types, as the models store bf16); NULL on mismatch. */
static tensor *tensor_from_npy(const hlo_type *t, const npy_array *a) {
  if (t->kind != TYPE_TENSOR ||
      type_num_elements(t) != (int64_t)(a->nbytes / hlo_dtype_size(a->dtype)))
    return NULL;
  tensor *v = NULL;
  hlo_status st = tensor_create(t, NULL, &v);
  if (st) {
    hlo_status_free(st);
    return NULL;
  }
  if (a->dtype == t->dtype) {
    if (a->nbytes) memcpy(v->data, a->data, a->nbytes);
  } else if (dtype_is_float(a->dtype) && dtype_is_float(t->dtype)) {
    for (int64_t i = 0; i < v->num_elems; i++)
      elem_set_f64(t->dtype, v->data, i, elem_get_f64(a->dtype, a->data, i));
  } else {
    tensor_release(v);
    return NULL;
  }
  return v;
}

/* Bit-exact equality of two values (tuples element-wise; tokens equal). */
static bool same_value(const tensor *a, const tensor *b) {
  if (!a || !b || a->type->kind != b->type->kind) return false;
  if (a->type->kind == TYPE_TOKEN) return true;
  if (a->type->kind == TYPE_TUPLE) {
    if (a->num_tuple != b->num_tuple) return false;
    for (uint32_t i = 0; i < a->num_tuple; i++)
      if (!same_value(a->tuple[i], b->tuple[i])) return false;
    return true;
  }
  return type_same_shape(a->type, b->type) && a->nbytes == b->nbytes &&
         (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
}

/* The results of one run, or the status that stopped it. */
typedef struct outcome {
  tl_run r;
  hlo_status st;
  uint64_t ops_before, ops_after;
  uint64_t fusions; /* hlo.fusion ops after the pipeline */
  uint64_t unfused; /* other ops outside fusions (constants, terminators not counted) */
} outcome;

/* The pipeline the optimised runs use (the tests below set it). */
static const char *g_pipeline = PASS_PIPELINE_DEFAULT;

static void count_fusions(const hlo_block *b, outcome *o) {
  for (const hlo_op *op = b->first; op; op = op->next) {
    if (op->opcode == OP_FUSION) {
      o->fusions++;
      continue;
    }
    if (op->opcode != OP_CONSTANT && !(op_flags(op->opcode) & OPF_TERMINATOR)) o->unfused++;
    for (uint32_t r = 0; r < op->num_regions; r++) count_fusions(&op->regions[r].block, o);
  }
}

/* Reads DIR/argK.npy for each argument of `f` into args[] (tokens get a
 * token value) and their concrete types into types[] (the declared element
 * type, the file's dims: for programs with dynamic shapes). */
static hlo_status read_inputs(hlo_module_ir *m, const hlo_func *f, const char *dir,
                              tensor **args, hlo_type **types) {
  for (uint32_t i = 0; i < f->num_args; i++) {
    const hlo_type *want = f->body.block.args[i].type;
    if (want->kind == TYPE_TOKEN) {
      types[i] = (hlo_type *)want;
      args[i] = tensor_new(want);
      if (!args[i]) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
      continue;
    }
    if (want->kind != TYPE_TENSOR) return status_new(HLO_UNIMPLEMENTED, "argument %u is a tuple", i);
    char ap[1200];
    snprintf(ap, sizeof ap, "%s/arg%u.npy", dir, i);
    npy_array a;
    HLO_TRY(npy_read(ap, &a));
    types[i] = type_tensor(&m->arena, want->dtype, (uint32_t)a.rank, a.dims);
    if (types[i]) {
      types[i]->quant = want->quant;
      args[i] = tensor_from_npy(types[i], &a);
    }
    npy_free(&a);
    if (!args[i]) return status_new(HLO_INVALID_ARGUMENT, "input %u does not fit", i);
  }
  return NULL;
}

/* Parses `src`, reads the inputs from `inputs` (NULL: none), refines the
 * shapes when the entry has dynamic ones, then runs the default pipeline
 * (optimise: "refine-shapes," first when needed) or chlo-legalize only,
 * and the entry function. */
static void run_one(const hlo_source *src, bool optimise, const char *inputs, outcome *o) {
  memset(o, 0, sizeof *o);
  tl_run *r = &o->r;
  tensor **args = NULL;
  hlo_type **types = NULL;
  uint32_t nargs = 0;
  hlo_status st = parse_module(src, 0, src->len, &r->m);
  if (!st) {
    o->ops_before = module_count_ops(r->m);
    r->f = module_entry(r->m, NULL);
    if (!r->f) st = status_new(HLO_NOT_FOUND, "no entry function");
  }
  if (!st) {
    nargs = r->f->num_args;
    args = calloc(nargs + 1, sizeof *args);
    types = calloc(nargs + 1, sizeof *types);
    if (inputs) st = read_inputs(r->m, r->f, inputs, args, types);
    else if (nargs) st = status_new(HLO_INVALID_ARGUMENT, "@main takes arguments");
  }
  bool refine = !st && module_needs_refinement(r->m, NULL);
  if (!st && optimise) {
    pass_pipeline_options po = {.verify_each = true};
    char pl[512];
    snprintf(pl, sizeof pl, "%s%s", refine ? "refine-shapes," : "", g_pipeline);
    po.pipeline = pl;
    po.pass.arg_types = types;
    po.pass.num_arg_types = nargs;
    st = pass_pipeline_run(r->m, &po, NULL);
  } else if (!st) {
    if (refine) st = pass_refine_shapes(r->m, NULL, types, nargs);
    if (!st) st = pass_chlo_legalize(r->m);
    for (hlo_func *f = r->m->funcs; f && !st; f = f->next) func_number_values(f);
  }
  if (!st) {
    o->ops_after = module_count_ops(r->m);
    for (const hlo_func *f = r->m->funcs; f; f = f->next) count_fusions(&f->body.block, o);
    r->f = module_entry(r->m, NULL);
    if (!r->f) st = status_new(HLO_NOT_FOUND, "no entry function after the passes");
  }
  if (!st) st = interp_create(r->m, NULL, &r->it);
  if (!st) st = tl_call(r, args, nargs);
  for (uint32_t i = 0; args && i < nargs; i++) tensor_release(args[i]);
  free(args);
  free(types);
  o->st = st;
}

static void outcome_free(outcome *o) {
  tl_run_free(&o->r);
  hlo_status_free(o->st);
  memset(o, 0, sizeof *o);
}

typedef struct tally {
  int compared, skipped, failed;
  bool quiet_skips; /* count skips without a line each */
} tally;

/* Runs `path` both ways and compares; `inputs` is the folder of its
 * argK.npy files (NULL: none); `label` (may be NULL) prints op counts. */
static void check_file(const char *path, const char *inputs, const char *label, tally *t) {
  tl_file tf;
  hlo_status st = tl_file_read(path, &tf);
  if (st) {
    printf("  %s: skipped: cannot read it\n", path);
    hlo_status_free(st);
    tl_file_free(&tf);
    t->skipped++;
    return;
  }
  outcome ref, opt;
  run_one(&tf.src, false, inputs, &ref);
  if (ref.st) {
    if (!t->quiet_skips)
      printf("  %s: skipped: the unoptimised run fails: %.120s\n", path,
             hlo_status_message(ref.st));
    t->skipped++;
    outcome_free(&ref);
    tl_file_free(&tf);
    return;
  }
  run_one(&tf.src, true, inputs, &opt);
  bool ok = !opt.st && opt.r.n == ref.r.n;
  uint32_t bad = UINT32_MAX;
  for (uint32_t k = 0; ok && k < ref.r.n; k++)
    if (!same_value(ref.r.res[k], opt.r.res[k])) {
      ok = false;
      bad = k;
    }
  t->compared++;
  if (!ok) {
    t->failed++;
    if (opt.st) {
      printf("  FAIL %s: the optimised module fails:\n", path);
      hlo_status_print(opt.st, stdout);
    } else {
      printf("  FAIL %s: result %u differs from the unoptimised run\n", path, bad);
    }
  } else if (label) {
    printf("  %-36s %5llu -> %5llu ops", label, (unsigned long long)opt.ops_before,
           (unsigned long long)opt.ops_after);
    if (strcmp(g_pipeline, PASS_PIPELINE_DEFAULT))
      printf(", %llu fusions + %llu other ops", (unsigned long long)opt.fusions,
             (unsigned long long)opt.unfused);
    printf("\n");
  }
  CHECK(ok);
  outcome_free(&ref);
  outcome_free(&opt);
  tl_file_free(&tf);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every model, optimised with g_pipeline. */
static void check_models(void) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/models", tl_shared_dir());
  DIR *d = opendir(dir);
  if (!d) {
    printf("pipeline_preserves_every_model: skipped: no %s (set HLO_SHARED)\n", dir);
    return;
  }
  char *names[256];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 256;)
    if (e->d_name[0] != '.' && strcmp(e->d_name, "README.md") != 0) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  tally t = {0};
  printf("  model (pipeline: %s)\n", g_pipeline);
  for (int i = 0; i < n; i++) {
    static const char *const suffixes[] = {".mlir", ".cpu.mlir"};
    for (int s = 0; s < 2; s++) {
      char path[1400];
      snprintf(path, sizeof path, "%s/%s/%s%s", dir, names[i], names[i], suffixes[s]);
      FILE *f = fopen(path, "r");
      if (!f) continue;
      fclose(f);
      char inputs[1400];
      snprintf(inputs, sizeof inputs, "%s/%s/inputs", dir, names[i]);
      check_file(path, inputs, strrchr(path, '/') + 1, &t);
    }
    free(names[i]);
  }
  printf("  models: %d compared bit for bit, %d failed, %d skipped\n", t.compared, t.failed,
         t.skipped);
  CHECK(t.compared >= 17);
  CHECK_EQ_INT(t.failed, 0);
}

TEST(default_pipeline_preserves_every_model) {
  g_pipeline = PASS_PIPELINE_DEFAULT;
  check_models();
}

TEST(cpu_pipeline_preserves_every_model) {
  g_pipeline = PASS_PIPELINE_CPU;
  check_models();
  g_pipeline = PASS_PIPELINE_DEFAULT;
}

/* Every file (about 2 s for the 1741 of them at -O2, 4 s under ASan);
 * HLO_PASSES_ORACLE_EVERY=N in the environment takes every Nth only. */
static void conformance_one(const char *path, void *ctx) {
  tally *t = ctx;
  static int k;
  const char *e = getenv("HLO_PASSES_ORACLE_EVERY");
  int every = e && atoi(e) > 0 ? atoi(e) : 1;
  if (k++ % every) return;
  check_file(path, NULL, NULL, t);
}

static void check_conformance(void) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/conformance/testdata", tl_shared_dir());
  DIR *d = opendir(dir);
  if (!d) {
    printf("pipeline_preserves_conformance_sample: skipped: no %s\n", dir);
    return;
  }
  closedir(d);
  tally t = {0};
  tl_for_each_mlir(dir, false, conformance_one, &t);
  printf("  conformance testdata (%s): %d files compared bit for bit, %d failed, %d skipped\n",
         g_pipeline, t.compared, t.failed, t.skipped);
  CHECK(t.compared >= 100);
  CHECK_EQ_INT(t.failed, 0);
}

TEST(default_pipeline_preserves_conformance_sample) {
  g_pipeline = PASS_PIPELINE_DEFAULT;
  check_conformance();
}

TEST(cpu_pipeline_preserves_conformance_sample) {
  g_pipeline = PASS_PIPELINE_CPU;
  check_conformance();
  g_pipeline = PASS_PIPELINE_DEFAULT;
}

/* tests/jax/GROUP/CASE/program.mlir on its inputs/ (dynamic programs
 * refined to the inputs' shapes first, "refine-shapes" heading the
 * pipeline); the cases whose unoptimised run fails (the expected errors,
 * host callbacks) are counted as skipped. */
static void jax_case(const char *path, void *ctx) {
  tally *t = ctx;
  size_t n = strlen(path);
  if (n < 13 || strcmp(path + n - 13, "/program.mlir") != 0) return;
  char inputs[1200];
  snprintf(inputs, sizeof inputs, "%.*s/inputs", (int)(n - 13), path);
  check_file(path, inputs, NULL, t);
}

static void check_jax(void) {
  DIR *d = opendir("tests/jax");
  if (!d) {
    printf("pipeline_preserves_jax_fixtures: skipped: no tests/jax (run from the repo "
           "root)\n");
    return;
  }
  closedir(d);
  tally t = {.quiet_skips = true};
  tl_for_each_mlir("tests/jax", true, jax_case, &t);
  printf("  tests/jax programs (%s): %d compared bit for bit, %d failed, %d skipped (their "
         "unoptimised run fails: expected errors, callbacks)\n",
         g_pipeline, t.compared, t.failed, t.skipped);
  CHECK(t.compared >= 300);
  CHECK_EQ_INT(t.failed, 0);
}

TEST(default_pipeline_preserves_jax_fixtures) {
  g_pipeline = PASS_PIPELINE_DEFAULT;
  check_jax();
}

TEST(cpu_pipeline_preserves_jax_fixtures) {
  g_pipeline = PASS_PIPELINE_CPU;
  check_jax();
  g_pipeline = PASS_PIPELINE_DEFAULT;
}

TEST_MAIN()
