/* npy.h — reading and writing NumPy .npy files (format versions 1.0, 2.0
 * and 3.0, as numpy.lib.format documents them).
 *
 * A .npy file is the magic "\x93NUMPY", a major and minor version byte, the
 * header length (2 bytes little-endian in 1.0, 4 bytes in 2.0/3.0), then a
 * Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ended by '\n', then the raw elements.
 *
 * Element types (the descr's kind and size; byte order '<', '>', '|', '='):
 *   b1 -> HLO_I1; i1/i2/i4/i8 -> I8/I16/I32/I64; u1/u2/u4/u8 -> UI8..UI64;
 *   f2/f4/f8 -> F16/F32/F64; c8/c16 -> C64/C128;
 *   V2 -> BF16: ml_dtypes' bfloat16 is a legacy user dtype whose dtype.str
 *   is '<V2', which np.save writes as the descr (numpy.lib.format.
 *   dtype_to_descr returns dtype.str for such types). It is the only 2-byte
 *   ml_dtypes type, so the mapping is unambiguous. 1-byte ml_dtypes types
 *   ('<V1' for float8_e4m3fn, int4, float4_e2m1fn...; '<f1' for
 *   float8_e5m2) do not say which they are: they read as UI8 bytes with
 *   `opaque_byte` set, for the caller to take as the type it expects.
 *   Structured descrs (lists) and object arrays are rejected.
 * Data comes back little-endian and row-major (C order): big-endian files are
 * byte-swapped, Fortran-order files are transposed. Bools are normalised to
 * 0/1 bytes.
 */
#ifndef HLO_SUPPORT_NPY_H
#define HLO_SUPPORT_NPY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hlo/hlo.h"

/* Most dimensions a .npy array may have here (numpy's own limit is 64). */
#define NPY_MAX_RANK 16

/* An array read from a .npy file. */
typedef struct npy_array {
  char descr[16];              /* the descr string as found ("<f4", "|b1") */
  hlo_dtype dtype;             /* the mapped element type (see above) */
  int rank;
  int64_t dims[NPY_MAX_RANK];
  void *data;                  /* malloc'd, row-major, little-endian, storage
                                  layout of dtypes.def; NULL when nbytes == 0 */
  size_t nbytes;               /* product(dims) * hlo_dtype_size(dtype) */
  bool opaque_byte;            /* descr '|V1'/'<V1'/'<f1': a 1-byte ml_dtypes type
                                  (float8_*, float6_*, float4_*, int4...) whose
                                  flavour the file does not record; dtype is
                                  UI8 and the bytes are its bit patterns */
} npy_array;

/* Reads the .npy file at `path` into *out (zeroed first; on success release
 * with npy_free; on error *out holds nothing to free).
 * Errors: HLO_NOT_FOUND when the file cannot be opened or read (message
 * names the path and strerror); HLO_INVALID_ARGUMENT for a malformed header,
 * an unsupported element type or truncated/trailing data (message says what
 * was expected and what was found); HLO_RESOURCE_EXHAUSTED for absurd sizes
 * (over 2^36 bytes) or out of memory. Never crashes on corrupted input. */
HLO_MUST_USE hlo_status npy_read(const char *path, npy_array *out);

/* npy_read on the `len` bytes at `bytes` (borrowed); `name` is used in error
 * messages. Same results and errors (except HLO_NOT_FOUND). */
HLO_MUST_USE hlo_status npy_read_mem(const char *name, const void *bytes, size_t len,
                                     npy_array *out);

/* Frees the data of `a` and clears it. NULL is fine. */
void npy_free(npy_array *a);

/* The numpy descr ("<f4") of element type `dt`, or NULL when numpy has no
 * such type (bf16, f8*, i2/i4/ui2/ui4, ...). Static storage. */
const char *npy_descr_of(hlo_dtype dt);

/* Writes a version 1.0 .npy file at `path` (replacing it) holding the
 * row-major, little-endian elements `data` of element type `dt` and shape
 * dims[0..rank). `data` holds product(dims) * hlo_dtype_size(dt) bytes.
 * Only numpy-representable types are accepted (see npy_descr_of); callers
 * convert others (e.g. bf16 to f32) first.
 * Errors: HLO_INVALID_ARGUMENT (type numpy lacks, bad rank or dims),
 * HLO_NOT_FOUND (cannot create the file: path and strerror),
 * HLO_RESOURCE_EXHAUSTED (write failed, e.g. disk full). */
HLO_MUST_USE hlo_status npy_write(const char *path, hlo_dtype dt, int rank, const int64_t *dims,
                                  const void *data);

/* npy_write into memory: *out_bytes is a malloc'd buffer of *out_len bytes
 * (yours). Errors as npy_write, minus the file ones. */
HLO_MUST_USE hlo_status npy_write_mem(hlo_dtype dt, int rank, const int64_t *dims,
                                      const void *data, void **out_bytes, size_t *out_len);
#endif
