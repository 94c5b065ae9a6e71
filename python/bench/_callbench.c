/* A minimal CPython extension over libhlo.so, for the call-overhead
 * measurement of docs/python.md only (python/bench/call_overhead.py builds
 * it): run(exe_address, result_template, *arrays) runs an executable of
 * static-shaped arguments on C-contiguous buffers (buffer protocol) and
 * copies its single result into a new array made by
 * result_template.copy() — what a C-extension binding would do per call —
 * and loop(exe_address, n, *arrays) times n bare hlo_executable_run calls. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <time.h>

#include "hlo/hlo.h"

#define MAXARGS 16

static int views_of(PyObject *args, Py_ssize_t first, Py_buffer *bufs, hlo_buffer_view *views,
                    int64_t dims[MAXARGS][8], int *nout) {
  Py_ssize_t n = PyTuple_GET_SIZE(args) - first;
  if (n > MAXARGS) { PyErr_SetString(PyExc_ValueError, "too many arguments"); return -1; }
  for (Py_ssize_t i = 0; i < n; i++) {
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(args, first + i), &bufs[i],
                           PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND) < 0) {
      for (Py_ssize_t k = 0; k < i; k++) PyBuffer_Release(&bufs[k]);
      return -1;
    }
    for (int d = 0; d < bufs[i].ndim && d < 8; d++) dims[i][d] = bufs[i].shape[d];
    views[i].dtype = HLO_F32; /* the benchmark's function is f32 only */
    views[i].rank = bufs[i].ndim;
    views[i].dims = dims[i];
    views[i].data = bufs[i].buf;
  }
  *nout = (int)n;
  return 0;
}

static PyObject *run(PyObject *self, PyObject *args) {
  if (PyTuple_GET_SIZE(args) < 2) return PyErr_Format(PyExc_TypeError, "run(exe, template, *arrays)");
  hlo_executable *e = PyLong_AsVoidPtr(PyTuple_GET_ITEM(args, 0));
  PyObject *tmpl = PyTuple_GET_ITEM(args, 1);
  Py_buffer bufs[MAXARGS];
  hlo_buffer_view views[MAXARGS];
  int64_t dims[MAXARGS][8];
  int n;
  if (views_of(args, 2, bufs, views, dims, &n) < 0) return NULL;
  hlo_buffer **res = NULL;
  hlo_status st;
  Py_BEGIN_ALLOW_THREADS
  st = hlo_executable_run(e, views, n, &res);
  Py_END_ALLOW_THREADS
  for (int i = 0; i < n; i++) PyBuffer_Release(&bufs[i]);
  if (st) {
    PyErr_SetString(PyExc_RuntimeError, hlo_status_message(st));
    hlo_status_free(st);
    return NULL;
  }
  PyObject *out = PyObject_CallMethod(tmpl, "copy", NULL);
  if (out) {
    Py_buffer ob;
    if (PyObject_GetBuffer(out, &ob, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) == 0) {
      memcpy(ob.buf, hlo_buffer_data(res[0]), hlo_buffer_nbytes(res[0]));
      PyBuffer_Release(&ob);
    } else {
      Py_CLEAR(out);
    }
  }
  int nr = hlo_executable_num_results(e);
  for (int i = 0; i < nr; i++) hlo_buffer_destroy(res[i]);
  free(res);
  return out;
}

static PyObject *loop(PyObject *self, PyObject *args) {
  if (PyTuple_GET_SIZE(args) < 2) return PyErr_Format(PyExc_TypeError, "loop(exe, n, *arrays)");
  hlo_executable *e = PyLong_AsVoidPtr(PyTuple_GET_ITEM(args, 0));
  long reps = PyLong_AsLong(PyTuple_GET_ITEM(args, 1));
  Py_buffer bufs[MAXARGS];
  hlo_buffer_view views[MAXARGS];
  int64_t dims[MAXARGS][8];
  int n;
  if (views_of(args, 2, bufs, views, dims, &n) < 0) return NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int nr = hlo_executable_num_results(e);
  for (long r = 0; r < reps; r++) {
    hlo_buffer **res = NULL;
    hlo_status st = hlo_executable_run(e, views, n, &res);
    if (st) { hlo_status_free(st); break; }
    for (int i = 0; i < nr; i++) hlo_buffer_destroy(res[i]);
    free(res);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  for (int i = 0; i < n; i++) PyBuffer_Release(&bufs[i]);
  return PyFloat_FromDouble(((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec)) / reps);
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "run(exe_address, template, *arrays)"},
    {"loop", loop, METH_VARARGS, "loop(exe_address, n, *arrays) -> seconds per run"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_callbench", NULL, -1, methods,
                                 NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__callbench(void);
PyMODINIT_FUNC PyInit__callbench(void) { return PyModule_Create(&mod); }
