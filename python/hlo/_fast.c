/* hlo._fast: the per-call fast path of hlo.Executable (python/hlo/_core.py),
 * a CPython extension because a ctypes call costs ~10 us where this costs
 * under 1 us (docs/python.md has the measurement).
 *
 * It does not link libhlo.so: init() receives the addresses of the C API's
 * functions from the ctypes handle the package already loaded, so there is
 * one copy of the library whichever file HLO_LIBRARY names.
 *
 * run(exe, nres, specs, args) handles the common case only — every argument a
 * C-contiguous numpy array of the parameter's exact dtype and static shape —
 * and returns None for anything else, so that the Python path converts the
 * argument or raises hlo.HloError with its message. Errors of the run come
 * back as an int (the hlo_status address) for the Python side to turn into
 * an HloError. Results: a list with, per result, a numpy array (copied, at
 * most SMALL bytes) or an int (the hlo_buffer address: large results, tokens,
 * tuples, which the Python side wraps without a copy). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "hlo/hlo.h"

#define MAXARGS 64
#define MAXRANK 16
#define SMALL 4096

typedef hlo_status (*run_fn)(hlo_executable *, const hlo_buffer_view *, int, hlo_buffer ***);
typedef int (*rank_fn)(const hlo_buffer *);
typedef hlo_dtype (*dtype_fn)(const hlo_buffer *);
typedef const int64_t *(*dims_fn)(const hlo_buffer *);
typedef const void *(*data_fn)(const hlo_buffer *);
typedef size_t (*nbytes_fn)(const hlo_buffer *);
typedef void (*destroy_fn)(hlo_buffer *);

static struct {
  run_fn run;
  rank_fn rank;
  dtype_fn dtype;
  dims_fn dims;
  data_fn data;
  nbytes_fn nbytes;
  destroy_fn destroy;
  PyObject *dtypes;  /* tuple: hlo_dtype -> numpy dtype or None */
  PyObject *empty;   /* numpy.empty */
} api;

static PyObject *fast_init(PyObject *self, PyObject *args) {
  unsigned long long a[7];
  PyObject *dtypes, *empty;
  if (!PyArg_ParseTuple(args, "KKKKKKKO!O", &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6],
                        &PyTuple_Type, &dtypes, &empty))
    return NULL;
  api.run = (run_fn)(uintptr_t)a[0];
  api.rank = (rank_fn)(uintptr_t)a[1];
  api.dtype = (dtype_fn)(uintptr_t)a[2];
  api.dims = (dims_fn)(uintptr_t)a[3];
  api.data = (data_fn)(uintptr_t)a[4];
  api.nbytes = (nbytes_fn)(uintptr_t)a[5];
  api.destroy = (destroy_fn)(uintptr_t)a[6];
  Py_XDECREF(api.dtypes);
  Py_XDECREF(api.empty);
  Py_INCREF(dtypes);
  Py_INCREF(empty);
  api.dtypes = dtypes;
  api.empty = empty;
  Py_RETURN_NONE;
}

/* Whether `x`'s dtype is `want` (identity first: numpy's dtypes are
 * singletons for the builtin types). -1 with an exception set on error. */
static int same_dtype(PyObject *x, PyObject *want) {
  PyObject *dt = PyObject_GetAttrString(x, "dtype");
  if (!dt) { PyErr_Clear(); return 0; }
  int same = dt == want ? 1 : PyObject_RichCompareBool(dt, want, Py_EQ);
  Py_DECREF(dt);
  if (same < 0) { PyErr_Clear(); return 0; }
  return same;
}

/* A result as a numpy array (small) or its address (the rest). Takes `b`. */
static PyObject *result(hlo_buffer *b) {
  int rank = api.rank(b);
  size_t nbytes = rank >= 0 ? api.nbytes(b) : 0;
  hlo_dtype dt = rank >= 0 ? api.dtype(b) : 0;
  PyObject *npdt = rank >= 0 && (Py_ssize_t)dt < PyTuple_GET_SIZE(api.dtypes)
                       ? PyTuple_GET_ITEM(api.dtypes, dt) : Py_None;
  const void *data = nbytes ? api.data(b) : NULL;
  if (rank < 0 || rank > MAXRANK || nbytes > SMALL || npdt == Py_None || (nbytes && !data))
    return PyLong_FromVoidPtr(b);
  const int64_t *dims = api.dims(b);
  PyObject *shape = PyTuple_New(rank);
  if (!shape) return NULL;
  for (int i = 0; i < rank; i++) PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(dims[i]));
  PyObject *arr = PyObject_CallFunctionObjArgs(api.empty, shape, npdt, NULL);
  Py_DECREF(shape);
  if (!arr) return NULL;
  if (nbytes) {
    Py_buffer ob;
    if (PyObject_GetBuffer(arr, &ob, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
      /* ml_dtypes arrays may not export a buffer: the Python side copies. */
      PyErr_Clear();
      Py_DECREF(arr);
      return PyLong_FromVoidPtr(b);
    }
    if ((size_t)ob.len == nbytes) memcpy(ob.buf, data, nbytes);
    PyBuffer_Release(&ob);
    if ((size_t)ob.len != nbytes) { Py_DECREF(arr); return PyLong_FromVoidPtr(b); }
  }
  api.destroy(b);
  return arr;
}

/* The n results of a run as a list (see the top); frees the array. On an
 * exception the buffers not yet converted are freed too. */
static PyObject *results(hlo_buffer **res, int n) {
  PyObject *list = PyList_New(n);
  int i = 0;
  if (list) {
    for (; i < n; i++) {
      PyObject *r = result(res[i]);
      if (!r) break;
      PyList_SET_ITEM(list, i, r);
    }
  }
  if (!list || i < n) {
    for (int k = list ? i : 0; k < n; k++) api.destroy(res[k]);
    for (int k = 0; list && k < i; k++) { /* results handed back by address */
      PyObject *r = PyList_GET_ITEM(list, k);
      if (PyLong_Check(r)) api.destroy(PyLong_AsVoidPtr(r));
    }
    Py_XDECREF(list);
    list = NULL;
  }
  free(res);
  return list;
}

static PyObject *fast_run(PyObject *self, PyObject *args) {
  unsigned long long exe_addr;
  int nres;
  PyObject *specs, *xs;
  if (!PyArg_ParseTuple(args, "KiO!O!", &exe_addr, &nres, &PyTuple_Type, &specs, &PyTuple_Type,
                        &xs))
    return NULL;
  if (!api.run) return PyErr_Format(PyExc_RuntimeError, "hlo._fast: init() not called");
  Py_ssize_t n = PyTuple_GET_SIZE(xs);
  if (n != PyTuple_GET_SIZE(specs) || n > MAXARGS) Py_RETURN_NONE;
  Py_buffer bufs[MAXARGS];
  hlo_buffer_view views[MAXARGS];
  int64_t dims[MAXARGS][MAXRANK];
  Py_ssize_t got = 0;
  int ok = 1;
  for (Py_ssize_t i = 0; i < n && ok; i++) {
    /* spec: (numpy dtype, hlo dtype code, shape tuple, raw integer dtype
     * of the same size for an ml_dtypes type or None) */
    PyObject *spec = PyTuple_GET_ITEM(specs, i);
    PyObject *x = PyTuple_GET_ITEM(xs, i);
    PyObject *shape = PyTuple_GET_ITEM(spec, 2);
    Py_ssize_t rank = PyTuple_GET_SIZE(shape);
    if (rank > MAXRANK || !same_dtype(x, PyTuple_GET_ITEM(spec, 0))) { ok = 0; break; }
    if (PyObject_GetBuffer(x, &bufs[i], PyBUF_C_CONTIGUOUS | PyBUF_ND) < 0) {
      /* numpy exports no buffer of an ml_dtypes array (bf16, f8, ...):
       * read it through a view as the same-sized integer type, spec[3]. */
      PyErr_Clear();
      PyObject *raw = PyTuple_GET_SIZE(spec) > 3 ? PyTuple_GET_ITEM(spec, 3) : Py_None;
      PyObject *v = raw != Py_None ? PyObject_CallMethod(x, "view", "O", raw) : NULL;
      int got_view = v && PyObject_GetBuffer(v, &bufs[i], PyBUF_C_CONTIGUOUS | PyBUF_ND) == 0;
      Py_XDECREF(v); /* the Py_buffer holds its own reference */
      if (!got_view) {
        PyErr_Clear();
        ok = 0;
        break;
      }
    }
    got++;
    if (bufs[i].ndim != rank) { ok = 0; break; }
    for (Py_ssize_t d = 0; d < rank; d++) {
      long long want = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
      if (bufs[i].shape[d] != want) ok = 0;
      dims[i][d] = want;
    }
    views[i].dtype = (hlo_dtype)PyLong_AsLong(PyTuple_GET_ITEM(spec, 1));
    views[i].rank = (int)rank;
    views[i].dims = dims[i];
    views[i].data = bufs[i].buf;
  }
  if (!ok) {
    for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&bufs[i]);
    Py_RETURN_NONE;
  }
  hlo_executable *e = (hlo_executable *)(uintptr_t)exe_addr;
  hlo_buffer **res = NULL;
  hlo_status st;
  Py_BEGIN_ALLOW_THREADS
  st = api.run(e, views, (int)n, &res);
  Py_END_ALLOW_THREADS
  for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&bufs[i]);
  if (st) return PyLong_FromVoidPtr(st);
  return results(res, nres);
}

static PyMethodDef methods[] = {
    {"init", fast_init, METH_VARARGS,
     "init(run, rank, dtype, dims, data, nbytes, destroy, dtypes, empty)"},
    {"run", fast_run, METH_VARARGS,
     "run(exe, nres, specs, args) -> list of results, int (a status), None (slow path)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hlo._fast",
                                    "hlo.Executable's per-call fast path", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fast(void);
PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
