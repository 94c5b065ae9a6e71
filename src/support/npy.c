/* npy.c — NumPy .npy reader and writer; see npy.h for the format. */
#include "support/npy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/arena.h"
#include "support/status.h"
#include "support/strbuf.h"

/* Largest array (bytes) we accept, matching HLO_MAX_TENSOR_BYTES. */
#define NPY_MAX_BYTES ((size_t)1 << 36)

/* ------------------------------------------------------------- dtypes */

typedef struct npy_type_row {
  char kind;      /* numpy kind character */
  int size;       /* bytes */
  hlo_dtype dt;
} npy_type_row;

static const npy_type_row npy_types[] = {
    {'b', 1, HLO_I1},   {'i', 1, HLO_I8},   {'i', 2, HLO_I16},  {'i', 4, HLO_I32},
    {'i', 8, HLO_I64},  {'u', 1, HLO_UI8},  {'u', 2, HLO_UI16}, {'u', 4, HLO_UI32},
    {'u', 8, HLO_UI64}, {'f', 2, HLO_F16},  {'f', 4, HLO_F32},  {'f', 8, HLO_F64},
    {'c', 8, HLO_C64},  {'c', 16, HLO_C128}, {'V', 2, HLO_BF16},
};

const char *npy_descr_of(hlo_dtype dt) {
  switch (dt) {
    case HLO_I1: return "|b1";
    case HLO_I8: return "|i1";
    case HLO_I16: return "<i2";
    case HLO_I32: return "<i4";
    case HLO_I64: return "<i8";
    case HLO_UI8: return "|u1";
    case HLO_UI16: return "<u2";
    case HLO_UI32: return "<u4";
    case HLO_UI64: return "<u8";
    case HLO_F16: return "<f2";
    case HLO_F32: return "<f4";
    case HLO_F64: return "<f8";
    case HLO_C64: return "<c8";
    case HLO_C128: return "<c16";
    default: return NULL;
  }
}

/* ------------------------------------------------------ header parsing */

typedef struct hdr_parser {
  const char *name;
  const char *p, *end;
} hdr_parser;

static void skip_ws(hdr_parser *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

static hlo_status hdr_error(const hdr_parser *h, const char *expected) {
  char found[24];
  size_t n = (size_t)(h->end - h->p);
  if (n == 0) {
    snprintf(found, sizeof found, "end of header");
  } else {
    if (n > 12) n = 12;
    size_t k = 0;
    found[k++] = '\'';
    for (size_t i = 0; i < n; i++) {
      char c = h->p[i];
      found[k++] = (c >= 32 && c < 127) ? c : '?';
    }
    found[k++] = '\'';
    found[k] = 0;
  }
  return status_new(HLO_INVALID_ARGUMENT, "%s: malformed .npy header: expected %s, found %s",
                    h->name, expected, found);
}

static bool eat(hdr_parser *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

/* A Python string literal in single or double quotes (no escapes needed by
 * any key or descr numpy writes; a backslash is rejected). */
static hlo_status parse_str(hdr_parser *h, char *buf, size_t cap) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return hdr_error(h, "a quoted string");
  char q = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != q) {
    if (*h->p == '\\' || (unsigned char)*h->p < 32) return hdr_error(h, "a plain string character");
    if (n + 1 >= cap) return hdr_error(h, "a shorter string");
    buf[n++] = *h->p++;
  }
  if (h->p >= h->end) return hdr_error(h, "a closing quote");
  h->p++;
  buf[n] = 0;
  return NULL;
}

static hlo_status parse_shape(hdr_parser *h, npy_array *out) {
  if (!eat(h, '(')) return hdr_error(h, "'(' starting the shape tuple");
  out->rank = 0;
  for (;;) {
    skip_ws(h);
    if (eat(h, ')')) return NULL;
    if (h->p >= h->end || *h->p < '0' || *h->p > '9')
      return hdr_error(h, "a dimension size (non-negative integer) or ')'");
    int64_t v = 0;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
      if (v > (INT64_MAX - 9) / 10)
        return status_new(HLO_RESOURCE_EXHAUSTED, "%s: .npy dimension size too large", h->name);
      v = v * 10 + (*h->p++ - '0');
    }
    if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) h->p++;  /* Python 2 longs */
    if (out->rank >= NPY_MAX_RANK)
      return status_new(HLO_INVALID_ARGUMENT, "%s: .npy array has more than %d dimensions",
                        h->name, NPY_MAX_RANK);
    out->dims[out->rank++] = v;
    if (eat(h, ')')) return NULL;
    if (!eat(h, ',')) return hdr_error(h, "',' or ')' in the shape tuple");
  }
}

static hlo_status map_descr(const char *name, npy_array *out, bool *swap) {
  const char *d = out->descr;
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return status_new(HLO_INVALID_ARGUMENT,
                      "%s: unsupported .npy descr '%s' (expected a byte-order character "
                      "'<', '>', '|' or '=' then a kind and size, e.g. '<f4')",
                      name, d);
  char kind = d[1];
  char *endp = NULL;
  if (d[2] < '0' || d[2] > '9')
    return status_new(HLO_INVALID_ARGUMENT, "%s: unsupported .npy descr '%s' (no element size)",
                      name, d);
  long size = strtol(d + 2, &endp, 10);
  if (*endp)
    return status_new(HLO_INVALID_ARGUMENT, "%s: unsupported .npy descr '%s'", name, d);
  if ((kind == 'V' || kind == 'f') && size == 1) {
    /* ml_dtypes' 1-byte types (float8/6/4 flavours, int4...): the file does
     * not say which; the caller decides from the parameter's type */
    out->dtype = HLO_UI8;
    out->opaque_byte = true;
    *swap = false;
    return NULL;
  }
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
    if (npy_types[i].kind == kind && npy_types[i].size == size) {
      out->dtype = npy_types[i].dt;
      *swap = order == '>' && size > 1;
      return NULL;
    }
  }
  return status_new(HLO_INVALID_ARGUMENT,
                    "%s: unsupported .npy element type '%s' (supported: b1, i1/i2/i4/i8, "
                    "u1/u2/u4/u8, f2/f4/f8, c8/c16, V2 = ml_dtypes bfloat16)",
                    name, d);
}

static void byteswap(uint8_t *p, size_t nbytes, size_t unit) {
  for (size_t off = 0; off + unit <= nbytes; off += unit) {
    for (size_t i = 0; i < unit / 2; i++) {
      uint8_t t = p[off + i];
      p[off + i] = p[off + unit - 1 - i];
      p[off + unit - 1 - i] = t;
    }
  }
}

void npy_free(npy_array *a) {
  if (!a) return;
  free(a->data);
  memset(a, 0, sizeof *a);
}

hlo_status npy_read_mem(const char *name, const void *bytes, size_t len, npy_array *out) {
  memset(out, 0, sizeof *out);
  if (!name) name = "<memory>";
  const uint8_t *b = bytes;
  if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return status_new(HLO_INVALID_ARGUMENT,
                      "%s: not a .npy file (expected the magic \\x93NUMPY and a version, "
                      "found %zu bytes%s)",
                      name, len, len >= 6 ? " of something else" : "");
  unsigned major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)b[8] | (size_t)b[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12)
      return status_new(HLO_INVALID_ARGUMENT, "%s: truncated .npy file (%zu bytes)", name, len);
    hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    hstart = 12;
  } else {
    return status_new(HLO_INVALID_ARGUMENT,
                      "%s: unsupported .npy format version %u.%u (expected 1.0, 2.0 or 3.0)",
                      name, major, b[7]);
  }
  if (hlen > len - hstart)
    return status_new(HLO_INVALID_ARGUMENT,
                      "%s: truncated .npy header (header says %zu bytes, file has %zu after "
                      "the preamble)",
                      name, hlen, len - hstart);

  hdr_parser h = {name, (const char *)b + hstart, (const char *)b + hstart + hlen};
  bool have_descr = false, have_order = false, have_shape = false, fortran = false;
  if (!eat(&h, '{')) return hdr_error(&h, "'{' starting the header dict");
  for (;;) {
    if (eat(&h, '}')) break;
    char key[32];
    HLO_TRY(parse_str(&h, key, sizeof key));
    if (!eat(&h, ':')) return hdr_error(&h, "':' after a key");
    if (!strcmp(key, "descr")) {
      skip_ws(&h);
      if (h.p < h.end && *h.p == '[')
        return status_new(HLO_INVALID_ARGUMENT,
                          "%s: structured .npy arrays (a list descr) are not supported", name);
      HLO_TRY(parse_str(&h, out->descr, sizeof out->descr));
      have_descr = true;
    } else if (!strcmp(key, "fortran_order")) {
      skip_ws(&h);
      if ((size_t)(h.end - h.p) >= 4 && !memcmp(h.p, "True", 4)) {
        fortran = true;
        h.p += 4;
      } else if ((size_t)(h.end - h.p) >= 5 && !memcmp(h.p, "False", 5)) {
        fortran = false;
        h.p += 5;
      } else {
        return hdr_error(&h, "True or False for 'fortran_order'");
      }
      have_order = true;
    } else if (!strcmp(key, "shape")) {
      HLO_TRY(parse_shape(&h, out));
      have_shape = true;
    } else {
      return status_new(HLO_INVALID_ARGUMENT,
                        "%s: malformed .npy header: unexpected key '%s' (expected 'descr', "
                        "'fortran_order', 'shape')",
                        name, key);
    }
    if (eat(&h, '}')) break;
    if (!eat(&h, ',')) return hdr_error(&h, "',' or '}' in the header dict");
  }
  skip_ws(&h);
  if (h.p != h.end) return hdr_error(&h, "only padding after the header dict");
  if (!have_descr || !have_order || !have_shape)
    return status_new(HLO_INVALID_ARGUMENT,
                      "%s: malformed .npy header: missing key '%s'", name,
                      !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");

  bool swap = false;
  hlo_status st = map_descr(name, out, &swap);
  if (st) {
    memset(out, 0, sizeof *out);
    return st;
  }
  size_t esize = hlo_dtype_size(out->dtype);
  size_t count = 1;
  for (int i = 0; i < out->rank; i++) {
    uint64_t d = (uint64_t)out->dims[i];
    if (d != 0 && count > NPY_MAX_BYTES / d) {
      memset(out, 0, sizeof *out);
      return status_new(HLO_RESOURCE_EXHAUSTED, "%s: .npy array is too large (over %zu bytes)",
                        name, NPY_MAX_BYTES);
    }
    count *= (size_t)d;
  }
  if (count > NPY_MAX_BYTES / esize) {
    memset(out, 0, sizeof *out);
    return status_new(HLO_RESOURCE_EXHAUSTED, "%s: .npy array is too large (over %zu bytes)",
                      name, NPY_MAX_BYTES);
  }
  size_t nbytes = count * esize;
  size_t have = len - hstart - hlen;
  if (have != nbytes) {
    char descr[sizeof out->descr];
    memcpy(descr, out->descr, sizeof descr);
    memset(out, 0, sizeof *out);
    return status_new(HLO_INVALID_ARGUMENT,
                      "%s: .npy data is %s: expected %zu bytes (%zu elements of '%s'), found %zu",
                      name, have < nbytes ? "truncated" : "followed by trailing bytes", nbytes,
                      count, descr, have);
  }
  out->nbytes = nbytes;
  if (nbytes == 0) return NULL;
  uint8_t *data = xmalloc(nbytes);
  if (!data) {
    memset(out, 0, sizeof *out);
    return status_new(HLO_RESOURCE_EXHAUSTED, "%s: out of memory reading %zu bytes", name,
                      nbytes);
  }
  const uint8_t *src = b + hstart + hlen;
  if (fortran && out->rank > 1) {
    /* Element at C index (i0..ir-1) sits at Fortran offset sum(i_k * s_k),
     * s_0 = 1, s_k = s_{k-1} * d_{k-1}. */
    int64_t idx[NPY_MAX_RANK] = {0};
    size_t fstride[NPY_MAX_RANK];
    size_t s = 1;
    for (int k = 0; k < out->rank; k++) {
      fstride[k] = s;
      s *= (size_t)out->dims[k];
    }
    for (size_t lin = 0; lin < count; lin++) {
      size_t off = 0;
      for (int k = 0; k < out->rank; k++) off += (size_t)idx[k] * fstride[k];
      memcpy(data + lin * esize, src + off * esize, esize);
      for (int k = out->rank - 1; k >= 0; k--) {
        if (++idx[k] < out->dims[k]) break;
        idx[k] = 0;
      }
    }
  } else {
    memcpy(data, src, nbytes);
  }
  if (swap) byteswap(data, nbytes, out->dtype == HLO_C64 ? 4 : out->dtype == HLO_C128 ? 8 : esize);
  if (out->dtype == HLO_I1)
    for (size_t i = 0; i < nbytes; i++) data[i] = data[i] != 0;
  out->data = data;
  return NULL;
}

hlo_status npy_read(const char *path, npy_array *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) return status_new(HLO_NOT_FOUND, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  uint8_t *buf = xmalloc(cap);
  if (!buf) {
    fclose(f);
    return status_new(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", path);
  }
  for (;;) {
    if (len == cap) {
      if (cap > NPY_MAX_BYTES + 4096) {
        free(buf);
        fclose(f);
        return status_new(HLO_RESOURCE_EXHAUSTED, "%s: file too large (over %zu bytes)", path,
                          NPY_MAX_BYTES);
      }
      uint8_t *nb = xrealloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        fclose(f);
        return status_new(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", path);
      }
      buf = nb;
      cap *= 2;
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  int err = ferror(f) ? errno : 0;
  fclose(f);
  if (err) {
    free(buf);
    return status_new(HLO_NOT_FOUND, "cannot read '%s': %s", path, strerror(err));
  }
  hlo_status st = npy_read_mem(path, buf, len, out);
  free(buf);
  return st;
}

/* --------------------------------------------------------------- write */

hlo_status npy_write_mem(hlo_dtype dt, int rank, const int64_t *dims, const void *data,
                         void **out_bytes, size_t *out_len) {
  *out_bytes = NULL;
  *out_len = 0;
  const char *descr = npy_descr_of(dt);
  if (!descr)
    return status_new(HLO_INVALID_ARGUMENT,
                      "npy_write: numpy has no element type %s; convert it first",
                      hlo_dtype_name(dt));
  if (rank < 0 || rank > NPY_MAX_RANK)
    return status_new(HLO_INVALID_ARGUMENT, "npy_write: rank %d out of range (0..%d)", rank,
                      NPY_MAX_RANK);
  size_t esize = hlo_dtype_size(dt), count = 1;
  strbuf hb;
  sb_init(&hb);
  sb_printf(&hb, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) {
      sb_free(&hb);
      return status_new(HLO_INVALID_ARGUMENT, "npy_write: dimension %d is negative (%lld)", i,
                        (long long)dims[i]);
    }
    if (dims[i] != 0 && count > NPY_MAX_BYTES / (uint64_t)dims[i]) {
      sb_free(&hb);
      return status_new(HLO_RESOURCE_EXHAUSTED, "npy_write: array too large");
    }
    count *= (size_t)dims[i];
    sb_printf(&hb, "%s%lld", i ? ", " : "", (long long)dims[i]);
  }
  if (count > NPY_MAX_BYTES / esize) {
    sb_free(&hb);
    return status_new(HLO_RESOURCE_EXHAUSTED, "npy_write: array too large");
  }
  sb_puts(&hb, rank == 1 ? ",), }" : "), }");
  /* Pad with spaces so that preamble (10 bytes) + header + '\n' is a multiple
   * of 64, as numpy does (ARRAY_ALIGN). */
  size_t total = 10 + hb.len + 1;
  size_t pad = (64 - total % 64) % 64;
  for (size_t i = 0; i < pad; i++) sb_putc(&hb, ' ');
  sb_putc(&hb, '\n');
  if (hb.oom || hb.len > 65535) {
    sb_free(&hb);
    return status_new(HLO_RESOURCE_EXHAUSTED, "npy_write: out of memory");
  }
  size_t nbytes = count * esize;
  size_t len = 10 + hb.len + nbytes;
  uint8_t *buf = xmalloc(len);
  if (!buf) {
    sb_free(&hb);
    return status_new(HLO_RESOURCE_EXHAUSTED, "npy_write: out of memory");
  }
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (uint8_t)(hb.len & 0xff);
  buf[9] = (uint8_t)(hb.len >> 8);
  memcpy(buf + 10, hb.data, hb.len);
  if (nbytes) memcpy(buf + 10 + hb.len, data, nbytes);
  sb_free(&hb);
  *out_bytes = buf;
  *out_len = len;
  return NULL;
}

hlo_status npy_write(const char *path, hlo_dtype dt, int rank, const int64_t *dims,
                     const void *data) {
  void *bytes;
  size_t len;
  HLO_TRY(npy_write_mem(dt, rank, dims, data, &bytes, &len));
  FILE *f = fopen(path, "wb");
  if (!f) {
    int e = errno;
    free(bytes);
    return status_new(HLO_NOT_FOUND, "cannot create '%s': %s", path, strerror(e));
  }
  size_t n = fwrite(bytes, 1, len, f);
  int e = errno;
  free(bytes);
  int rc = fclose(f);
  if (n != len || rc != 0)
    return status_new(HLO_RESOURCE_EXHAUSTED, "cannot write '%s': %s", path,
                      strerror(n != len ? e : errno));
  return NULL;
}
