/* ir.c — the op table, types, attributes, and building blocks of the IR. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>
#include "ir/element.h"

/* ------------------------------------------------------------------ ops */

static const struct { const char *name; unsigned flags; } op_info[] = {
#define HLO_OP(e, name, flags) {name, flags},
#include "ir/ops.def"
#undef HLO_OP
};

const char *op_name(hlo_opcode c) { return (unsigned)c < OP_COUNT ? op_info[c].name : NULL; }
unsigned op_flags(hlo_opcode c) { return (unsigned)c < OP_COUNT ? op_info[c].flags : 0; }

hlo_opcode op_lookup(const char *name, size_t n) {
  if (n == 6 && memcmp(name, "return", 6) == 0) return OP_FUNC_RETURN;
  if (n == 4 && memcmp(name, "call", 4) == 0) return OP_FUNC_CALL;
  /* a small open-addressing hash table, built on first use */
  enum { CAP = 512 };
  static int16_t table[CAP];
  static int built = 0;
  if (!built) {
    for (int i = 0; i < CAP; i++) table[i] = -1;
    for (int c = 0; c < OP_COUNT; c++) {
      const char *s = op_info[c].name;
      uint32_t h = 2166136261u;
      for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
      uint32_t k = h & (CAP - 1);
      while (table[k] >= 0) k = (k + 1) & (CAP - 1);
      table[k] = (int16_t)c;
    }
    built = 1;
  }
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)name[i]) * 16777619u;
  for (uint32_t k = h & (CAP - 1); table[k] >= 0; k = (k + 1) & (CAP - 1)) {
    const char *s = op_info[table[k]].name;
    if (strlen(s) == n && memcmp(s, name, n) == 0) return (hlo_opcode)table[k];
  }
  return OP_COUNT;
}

/* ---------------------------------------------------------------- types */

int64_t type_num_elements(const hlo_type *t) {
  if (!t || t->kind != TYPE_TENSOR) return -1;
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i];
    if (d < 0) return -1;
    if (d && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

bool type_is_static(const hlo_type *t) {
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->num_elems; i++)
      if (!type_is_static(t->elems[i])) return false;
    return true;
  }
  if (t->kind == TYPE_TOKEN) return true;
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

static bool quant_equal(const quant_params *a, const quant_params *b) {
  if (!a || !b) return a == b;
  if (a->storage != b->storage || a->expressed != b->expressed || a->axis != b->axis ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->num_scales != b->num_scales)
    return false;
  for (uint32_t i = 0; i < a->num_scales; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i]) return false;
  return true;
}

bool type_same_shape(const hlo_type *a, const hlo_type *b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  if (a->kind == TYPE_TOKEN) return true;
  if (a->kind == TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (uint32_t i = 0; i < a->num_elems; i++)
      if (!type_same_shape(a->elems[i], b->elems[i])) return false;
    return true;
  }
  if (a->dtype != b->dtype || a->rank != b->rank || !quant_equal(a->quant, b->quant)) return false;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool type_equal(const hlo_type *a, const hlo_type *b) {
  if (a == b) return true;
  if (!type_same_shape(a, b)) return false;
  if (a->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < a->num_elems; i++)
      if (!type_equal(a->elems[i], b->elems[i])) return false;
    return true;
  }
  if (a->kind != TYPE_TENSOR) return true;
  if (!a->encoding || !b->encoding) return a->encoding == b->encoding;
  return strcmp(a->encoding, b->encoding) == 0;
}

hlo_type *type_tensor(arena *a, hlo_dtype dt, uint32_t rank, const int64_t *dims) {
  hlo_type *t = arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = TYPE_TENSOR;
  t->dtype = dt;
  t->rank = rank;
  if (rank) {
    t->dims = arena_memdup(a, dims, rank * sizeof *dims);
    if (!t->dims) return NULL;
  }
  return t;
}

hlo_type *type_tuple(arena *a, uint32_t n, hlo_type *const *elems) {
  hlo_type *t = arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = TYPE_TUPLE;
  t->num_elems = n;
  if (n) {
    t->elems = arena_memdup(a, elems, n * sizeof *elems);
    if (!t->elems) return NULL;
  }
  return t;
}

hlo_type *type_token(arena *a) {
  hlo_type *t = arena_alloc(a, sizeof *t);
  if (t) t->kind = TYPE_TOKEN;
  return t;
}

/* ----------------------------------------------------------- attributes */

static hlo_attr *new_attr(arena *a, attr_kind k) {
  hlo_attr *at = arena_alloc(a, sizeof *at);
  if (at) at->kind = k;
  return at;
}

hlo_attr *attr_int(arena *a, int64_t v, hlo_dtype dtype) {
  hlo_attr *at = new_attr(a, ATTR_INT);
  if (at) { at->u.i.v = v; at->u.i.dtype = dtype; }
  return at;
}

hlo_attr *attr_float(arena *a, double v, hlo_dtype dtype) {
  hlo_attr *at = new_attr(a, ATTR_FLOAT);
  if (at) { at->u.f.v = v; at->u.f.dtype = dtype; }
  return at;
}

hlo_attr *attr_bool(arena *a, bool v) {
  hlo_attr *at = new_attr(a, ATTR_BOOL);
  if (at) at->u.b = v;
  return at;
}

hlo_attr *attr_unit(arena *a) { return new_attr(a, ATTR_UNIT); }

hlo_attr *attr_string(arena *a, const char *s, size_t len) {
  hlo_attr *at = new_attr(a, ATTR_STRING);
  if (!at) return NULL;
  at->u.str.s = arena_strndup(a, s, len);
  at->u.str.len = len;
  return at->u.str.s ? at : NULL;
}

hlo_attr *attr_symbol(arena *a, const char *s) {
  hlo_attr *at = new_attr(a, ATTR_SYMBOL);
  if (!at) return NULL;
  at->u.str.len = strlen(s);
  at->u.str.s = arena_strndup(a, s, at->u.str.len);
  return at->u.str.s ? at : NULL;
}

hlo_attr *attr_type(arena *a, const hlo_type *t) {
  hlo_attr *at = new_attr(a, ATTR_TYPE);
  if (at) at->u.type = t;
  return at;
}

hlo_attr *attr_dense_array_i64(arena *a, const int64_t *v, uint32_t n) {
  hlo_attr *at = new_attr(a, ATTR_DENSE_ARRAY);
  if (!at) return NULL;
  at->u.darr.dtype = HLO_I64;
  at->u.darr.n = n;
  at->u.darr.ints = arena_calloc(a, n ? n : 1, sizeof(int64_t));
  if (!at->u.darr.ints) return NULL;
  if (n) memcpy(at->u.darr.ints, v, n * sizeof(int64_t));
  return at;
}

hlo_attr *attr_dense_array_bool(arena *a, const bool *v, uint32_t n) {
  hlo_attr *at = new_attr(a, ATTR_DENSE_ARRAY);
  if (!at) return NULL;
  at->u.darr.dtype = HLO_I1;
  at->u.darr.n = n;
  at->u.darr.ints = arena_calloc(a, n ? n : 1, sizeof(int64_t));
  if (!at->u.darr.ints) return NULL;
  for (uint32_t i = 0; i < n; i++) at->u.darr.ints[i] = v[i];
  return at;
}

hlo_attr *attr_enum(arena *a, const char *dialect, const char *name, const char *value) {
  hlo_attr *at = new_attr(a, ATTR_ENUM);
  if (!at) return NULL;
  at->u.en.dialect = arena_strdup(a, dialect);
  at->u.en.name = arena_strdup(a, name);
  at->u.en.value = arena_strdup(a, value);
  return at->u.en.dialect && at->u.en.name && at->u.en.value ? at : NULL;
}

hlo_attr *attr_dense(arena *a, const hlo_type *t, const void *data, size_t nbytes, bool splat) {
  hlo_attr *at = new_attr(a, ATTR_DENSE);
  if (!at) return NULL;
  at->u.dense.type = t;
  at->u.dense.splat = splat;
  at->u.dense.num_elems = type_num_elements(t);
  at->u.dense.nbytes = nbytes;
  at->u.dense.data = arena_alloc(a, nbytes ? nbytes : 1);
  if (!at->u.dense.data) return NULL;
  if (nbytes) memcpy(at->u.dense.data, data, nbytes);
  return at;
}

bool attr_as_ints(arena *a, const hlo_attr *at, int64_t **out, uint32_t *out_n) {
  if (!at) return false;
  if (at->kind == ATTR_DENSE_ARRAY && at->u.darr.ints) {
    *out = at->u.darr.ints;
    *out_n = at->u.darr.n;
    return true;
  }
  if (at->kind == ATTR_ARRAY) {
    int64_t *v = arena_calloc(a, at->u.arr.n ? at->u.arr.n : 1, sizeof *v);
    if (!v) return false;
    for (uint32_t i = 0; i < at->u.arr.n; i++) {
      const hlo_attr *x = at->u.arr.items[i];
      if (x->kind == ATTR_INT) v[i] = x->u.i.v;
      else if (x->kind == ATTR_BOOL) v[i] = x->u.b;
      else return false;
    }
    *out = v;
    *out_n = at->u.arr.n;
    return true;
  }
  if (at->kind == ATTR_DENSE) {
    const hlo_type *t = at->u.dense.type;
    if (t->kind != TYPE_TENSOR || !(dtype_is_int(t->dtype) || t->dtype == HLO_I1)) return false;
    int64_t n = at->u.dense.num_elems;
    if (n < 0 || n > UINT32_MAX) return false;
    int64_t *v = arena_calloc(a, n ? (size_t)n : 1, sizeof *v);
    if (!v) return false;
    for (int64_t i = 0; i < n; i++)
      v[i] = elem_get_i64(t->dtype, at->u.dense.data, at->u.dense.splat ? 0 : i);
    *out = v;
    *out_n = (uint32_t)n;
    return true;
  }
  return false;
}

const hlo_attr *attr_field(const hlo_attr *at, const char *name) {
  if (!at) return NULL;
  const named_attr *f;
  uint32_t n;
  if (at->kind == ATTR_STRUCT) { f = at->u.st.fields; n = at->u.st.n; }
  else if (at->kind == ATTR_DICT) { f = at->u.dict.entries; n = at->u.dict.n; }
  else return NULL;
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(f[i].name, name) == 0) return f[i].value;
  return NULL;
}

static bool named_equal(const named_attr *a, const named_attr *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(a[i].name, b[i].name) || !attr_equal(a[i].value, b[i].value)) return false;
  return true;
}

static bool str_eq(const char *a, const char *b) { return (!a || !b) ? a == b : !strcmp(a, b); }

static bool axes_equal(const sdy_axis_ref *a, const sdy_axis_ref *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!str_eq(a[i].name, b[i].name) || a[i].pre_size != b[i].pre_size || a[i].size != b[i].size)
      return false;
  return true;
}

static bool mesh_equal(const sdy_mesh *a, const sdy_mesh *b) {
  if (!a || !b) return a == b;
  if (a->num_axes != b->num_axes || a->num_device_ids != b->num_device_ids) return false;
  for (uint32_t i = 0; i < a->num_axes; i++)
    if (!str_eq(a->axis_names[i], b->axis_names[i]) || a->axis_sizes[i] != b->axis_sizes[i])
      return false;
  for (uint32_t i = 0; i < a->num_device_ids; i++)
    if (a->device_ids[i] != b->device_ids[i]) return false;
  return true;
}

static bool sharding_equal(const sdy_sharding *a, const sdy_sharding *b) {
  if (!a || !b) return a == b;
  if (!str_eq(a->mesh_name, b->mesh_name) || !mesh_equal(a->mesh, b->mesh) || a->rank != b->rank ||
      a->num_replicated != b->num_replicated || a->num_unreduced != b->num_unreduced)
    return false;
  for (uint32_t i = 0; i < a->rank; i++) {
    const sdy_dim_sharding *x = &a->dims[i], *y = &b->dims[i];
    if (x->num_axes != y->num_axes || x->is_open != y->is_open || x->priority != y->priority ||
        !axes_equal(x->axes, y->axes, x->num_axes))
      return false;
  }
  return axes_equal(a->replicated, b->replicated, a->num_replicated) &&
         axes_equal(a->unreduced, b->unreduced, a->num_unreduced);
}

static bool sdy_equal(const sdy_attr *a, const sdy_attr *b) {
  if (a->kind != b->kind || a->n != b->n || !mesh_equal(a->mesh, b->mesh)) return false;
  uint32_t ns = a->kind == SDY_SHARDING ? 1 : a->kind == SDY_SHARDING_PER_VALUE ? a->n : 0;
  for (uint32_t i = 0; i < ns; i++)
    if (!sharding_equal(a->shardings[i], b->shardings[i])) return false;
  if (a->kind == SDY_AXES)
    for (uint32_t i = 0; i < a->n; i++)
      if (!str_eq(a->axes[i], b->axes[i])) return false;
  return true;
}

const sdy_mesh_decl *module_find_mesh(const hlo_module_ir *m, const char *name) {
  for (uint32_t i = 0; i < m->num_meshes; i++)
    if (!strcmp(m->meshes[i].name, name)) return &m->meshes[i];
  return NULL;
}

int64_t sdy_mesh_num_devices(const sdy_mesh *mm) {
  if (!mm->num_axes) return mm->num_device_ids ? (int64_t)mm->num_device_ids : 1;
  int64_t n = 1;
  for (uint32_t i = 0; i < mm->num_axes; i++) {
    if (mm->axis_sizes[i] < 0 || (mm->axis_sizes[i] && n > INT64_MAX / mm->axis_sizes[i])) return -1;
    n *= mm->axis_sizes[i];
  }
  return n;
}

const sdy_mesh *sdy_sharding_mesh(const hlo_module_ir *m, const sdy_sharding *s) {
  if (s->mesh) return s->mesh;
  const sdy_mesh_decl *d = s->mesh_name ? module_find_mesh(m, s->mesh_name) : NULL;
  return d ? d->mesh : NULL;
}

bool attr_equal(const hlo_attr *a, const hlo_attr *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case ATTR_UNIT: return true;
    case ATTR_BOOL: return a->u.b == b->u.b;
    case ATTR_INT: return a->u.i.v == b->u.i.v && a->u.i.dtype == b->u.i.dtype;
    case ATTR_FLOAT:
      return a->u.f.dtype == b->u.f.dtype &&
             memcmp(&a->u.f.v, &b->u.f.v, sizeof(double)) == 0;
    case ATTR_STRING: case ATTR_SYMBOL: case ATTR_OPAQUE:
      return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case ATTR_TYPE: return type_equal(a->u.type, b->u.type);
    case ATTR_ARRAY:
      if (a->u.arr.n != b->u.arr.n) return false;
      for (uint32_t i = 0; i < a->u.arr.n; i++)
        if (!attr_equal(a->u.arr.items[i], b->u.arr.items[i])) return false;
      return true;
    case ATTR_DENSE_ARRAY:
      if (a->u.darr.dtype != b->u.darr.dtype || a->u.darr.n != b->u.darr.n) return false;
      if (a->u.darr.ints)
        return !a->u.darr.n || memcmp(a->u.darr.ints, b->u.darr.ints, a->u.darr.n * 8) == 0;
      return !a->u.darr.n || memcmp(a->u.darr.floats, b->u.darr.floats, a->u.darr.n * 8) == 0;
    case ATTR_SDY: return sdy_equal(a->u.sdy, b->u.sdy);
    case ATTR_DENSE:
      return type_equal(a->u.dense.type, b->u.dense.type) && a->u.dense.splat == b->u.dense.splat &&
             str_eq(a->u.dense.resource, b->u.dense.resource) &&
             a->u.dense.nbytes == b->u.dense.nbytes &&
             memcmp(a->u.dense.data, b->u.dense.data, a->u.dense.nbytes) == 0;
    case ATTR_DICT:
      return a->u.dict.n == b->u.dict.n && named_equal(a->u.dict.entries, b->u.dict.entries, a->u.dict.n);
    case ATTR_ENUM:
      return !strcmp(a->u.en.dialect, b->u.en.dialect) && !strcmp(a->u.en.name, b->u.en.name) &&
             !strcmp(a->u.en.value, b->u.en.value);
    case ATTR_STRUCT:
      return !strcmp(a->u.st.name, b->u.st.name) && a->u.st.n == b->u.st.n &&
             named_equal(a->u.st.fields, b->u.st.fields, a->u.st.n);
  }
  return false;
}

/* ------------------------------------------------------------------ ops */

const hlo_attr *op_attr(const hlo_op *op, const char *name) {
  for (uint32_t i = 0; i < op->num_attrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) return op->attrs[i].value;
  return NULL;
}

hlo_status op_set_attr(hlo_module_ir *m, hlo_op *op, const char *name, hlo_attr *value) {
  for (uint32_t i = 0; i < op->num_attrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) {
      op->attrs[i].value = value;
      return NULL;
    }
  named_attr *a = arena_calloc(&m->arena, op->num_attrs + 1, sizeof *a);
  char *nm = arena_strdup(&m->arena, name);
  if (!a || !nm) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (op->num_attrs) memcpy(a, op->attrs, op->num_attrs * sizeof *a);
  a[op->num_attrs].name = nm;
  a[op->num_attrs].value = value;
  op->attrs = a;
  op->num_attrs++;
  return NULL;
}

int64_t op_attr_int(const hlo_op *op, const char *name, int64_t dflt) {
  const hlo_attr *a = op_attr(op, name);
  if (!a) return dflt;
  if (a->kind == ATTR_INT) return a->u.i.v;
  if (a->kind == ATTR_BOOL) return a->u.b;
  return dflt;
}

bool op_attr_bool(const hlo_op *op, const char *name, bool dflt) {
  const hlo_attr *a = op_attr(op, name);
  if (!a) return dflt;
  if (a->kind == ATTR_BOOL) return a->u.b;
  if (a->kind == ATTR_UNIT) return true;
  return dflt;
}

/* -------------------------------------------------------------- modules */

hlo_module_ir *module_new(void) {
  hlo_module_ir *m = xcalloc(1, sizeof *m);
  if (m) arena_init(&m->arena);
  return m;
}

void module_free(hlo_module_ir *m) {
  if (!m) return;
  arena_deinit(&m->arena);
  free(m);
}

hlo_func *module_find_func(const hlo_module_ir *m, const char *name) {
  for (hlo_func *f = m->funcs; f; f = f->next)
    if (strcmp(f->name, name) == 0) return f;
  return NULL;
}

hlo_func *module_entry(const hlo_module_ir *m, const char *name) {
  if (name) return module_find_func(m, name);
  hlo_func *f = module_find_func(m, "main");
  if (f) return f;
  return m->num_funcs == 1 ? m->funcs : NULL;
}

static void number_block(hlo_block *b, uint32_t *next) {
  for (uint32_t i = 0; i < b->num_args; i++) b->args[i].id = (*next)++;
  for (hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->num_regions; r++) number_block(&op->regions[r].block, next);
    for (uint32_t i = 0; i < op->num_results; i++) op->results[i].id = (*next)++;
  }
}

void func_number_values(hlo_func *f) {
  uint32_t next = 0;
  number_block(&f->body.block, &next);
  f->num_values = next;
}

/* ------------------------------------------------------------- building */

hlo_op *op_create(hlo_module_ir *m, hlo_opcode opc, hlo_value *const *operands,
                  uint32_t num_operands, hlo_type *const *result_types,
                  uint32_t num_results, uint32_t num_regions, hlo_loc loc) {
  arena *a = &m->arena;
  hlo_op *op = arena_alloc(a, sizeof *op);
  if (!op) return NULL;
  op->opcode = opc;
  op->loc = loc;
  op->num_operands = num_operands;
  if (num_operands) {
    op->operands = arena_memdup(a, operands, num_operands * sizeof *operands);
    if (!op->operands) return NULL;
  }
  op->num_results = num_results;
  if (num_results) {
    op->results = arena_calloc(a, num_results, sizeof *op->results);
    if (!op->results) return NULL;
    for (uint32_t i = 0; i < num_results; i++) {
      op->results[i].type = result_types[i];
      op->results[i].def = op;
      op->results[i].index = i;
      op->results[i].loc = loc;
    }
  }
  op->num_regions = num_regions;
  if (num_regions) {
    op->regions = arena_calloc(a, num_regions, sizeof *op->regions);
    if (!op->regions) return NULL;
    for (uint32_t i = 0; i < num_regions; i++) {
      op->regions[i].parent = op;
      op->regions[i].block.parent = &op->regions[i];
    }
  }
  return op;
}

void block_append(hlo_block *b, hlo_op *op) {
  op->parent = b;
  op->next = NULL;
  op->prev = b->last;
  if (b->last) b->last->next = op;
  else b->first = op;
  b->last = op;
}

void op_insert_before(hlo_op *before, hlo_op *op) {
  hlo_block *b = before->parent;
  op->parent = b;
  op->next = before;
  op->prev = before->prev;
  if (before->prev) before->prev->next = op;
  else b->first = op;
  before->prev = op;
}

void op_unlink(hlo_op *op) {
  hlo_block *b = op->parent;
  if (!b) return;
  if (op->prev) op->prev->next = op->next;
  else b->first = op->next;
  if (op->next) op->next->prev = op->prev;
  else b->last = op->prev;
  op->prev = op->next = NULL;
  op->parent = NULL;
}

hlo_status block_set_args(hlo_module_ir *m, hlo_block *b, hlo_type *const *types, uint32_t n) {
  b->num_args = n;
  b->args = NULL;
  if (!n) return NULL;
  b->args = arena_calloc(&m->arena, n, sizeof *b->args);
  if (!b->args) return status_new(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    b->args[i].type = types[i];
    b->args[i].block = b;
    b->args[i].index = i;
  }
  return NULL;
}

void block_replace_uses(hlo_block *b, const hlo_value *from, hlo_value *to) {
  for (hlo_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->num_operands; i++)
      if (op->operands[i] == from) op->operands[i] = to;
    for (uint32_t r = 0; r < op->num_regions; r++) block_replace_uses(&op->regions[r].block, from, to);
  }
}

uint32_t custom_call_num_aliases(const hlo_op *op) {
  const hlo_attr *a = op_attr(op, "output_operand_aliases");
  return a && a->kind == ATTR_ARRAY ? a->u.arr.n : 0;
}

/* The integers of a short list field (an ATTR_ARRAY of ATTR_INT or an
 * ATTR_DENSE_ARRAY; absent: empty), up to `cap` of them; false past cap or
 * for another kind. */
static bool small_ints(const hlo_attr *f, int64_t *v, uint32_t cap, uint32_t *n) {
  *n = 0;
  if (!f) return true;
  if (f->kind == ATTR_DENSE_ARRAY && f->u.darr.ints) {
    if (f->u.darr.n > cap) return false;
    for (uint32_t i = 0; i < f->u.darr.n; i++) v[i] = f->u.darr.ints[i];
    *n = f->u.darr.n;
    return true;
  }
  if (f->kind != ATTR_ARRAY || f->u.arr.n > cap) return false;
  for (uint32_t i = 0; i < f->u.arr.n; i++) {
    if (f->u.arr.items[i]->kind != ATTR_INT) return false;
    v[i] = f->u.arr.items[i]->u.i.v;
  }
  *n = f->u.arr.n;
  return true;
}

bool custom_call_alias(const hlo_op *op, uint32_t k, int64_t *result, int64_t *operand) {
  const hlo_attr *a = op_attr(op, "output_operand_aliases");
  if (!a || a->kind != ATTR_ARRAY || k >= a->u.arr.n) return false;
  const hlo_attr *e = a->u.arr.items[k];
  if (!e || e->kind != ATTR_STRUCT) return false;
  const hlo_attr *oi = attr_field(e, "operand_index");
  int64_t out[2], in[2];
  uint32_t nout, nin;
  if (!oi || oi->kind != ATTR_INT || !small_ints(attr_field(e, "output_tuple_indices"), out, 2, &nout) ||
      !small_ints(attr_field(e, "operand_tuple_indices"), in, 2, &nin) || nin != 0 || nout > 1)
    return false;
  if (nout == 0 && op->num_results != 1) return false; /* [] names a single result */
  *result = nout ? out[0] : 0;
  *operand = oi->u.i.v;
  return true;
}
