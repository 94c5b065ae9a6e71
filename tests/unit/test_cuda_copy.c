/* test_cuda_copy.c — the CUDA backend's copy_box / fill_box
 * (backend/cuda/cuda_copy.h):
 *   - the kernel's unit compiles with NVRTC for sm_90 (printed "skipped:
 *     REASON" where there is no NVRTC);
 *   - the parameter block (cuda_copy_make_desc, no GPU): on random boxes
 *     (ranks 0..8, strided sides as pad's interior, random offsets and
 *     element sizes, aligned and not), the kernel's semantics, emulated on
 *     the host over the block, equal a plain loop over the box; the fast
 *     path regroups a contiguous aligned row into 16-byte elements and
 *     repeats a fill's value; bad boxes give HLO_INVALID_ARGUMENT;
 *   - gather_rows' and scatter_rows' parameter blocks (word size, errors);
 *   - with a GPU (backend_cuda succeeds), else "skipped: no GPU (REASON)":
 *     copy_box and fill_box on random boxes in device memory equal the
 *     host loop, bytes outside the box untouched, source offsets read on
 *     the device at times (dynamic_slice's start indices, clamped); gather_rows on random
 *     tables and indices (some out of range) equals the host loop, and
 *     scatter_rows (f32 add with repeated rows, set) too, bit for bit, on
 *     both of its kernels (a block per row for lists up to
 *     SCATTER_ROWS_MAX, a thread per word past it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "backend/cuda/cuda_copy.h"
#include "backend/cuda/nvrtc.h"
#include "test.h"

TEST(nvrtc_compiles) {
  hlo_status st = nvrtc_load();
  if (st) {
    printf("nvrtc_compiles: skipped: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  void *cubin = NULL;
  size_t len = 0;
  st = nvrtc_compile(cuda_copy_source(), "hlo_copy_box.cu", 90, &cubin, &len);
  if (st) fprintf(stderr, "%s\n", hlo_status_message(st));
  CHECK(!st);
  hlo_status_free(st);
  CHECK(cubin && len > 16);
  CHECK(cubin && memmem(cubin, len, "hlo_copy_box", 13) != NULL);
  CHECK(cubin && memmem(cubin, len, "hlo_gather_rows", 16) != NULL);
  CHECK(cubin && memmem(cubin, len, "hlo_scatter_rows", 17) != NULL);
  printf("nvrtc: %s, cubin of %zu bytes\n", nvrtc_version_text(), len);
  free(cubin);
}

/* ------------------------------------------------------------ boxes */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static int64_t below(int64_t n) { return (int64_t)(next() % (uint64_t)n); }

/* A random box over two dense arrays: the source a sub-box of a larger
 * array, the destination a strided (pad-interior-like) sub-box of another;
 * sizes of both arrays in elements in *src_n, *dst_n. */
static void random_box(backend_box *b, int64_t *src_n, int64_t *dst_n) {
  static const uint32_t sizes[] = {1, 2, 4, 8, 16};
  memset(b, 0, sizeof *b);
  b->rank = (uint32_t)below(BACKEND_BOX_MAX_RANK + 1);
  b->esize = sizes[below(5)];
  int64_t sdims[BACKEND_BOX_MAX_RANK], ddims[BACKEND_BOX_MAX_RANK], mult[BACKEND_BOX_MAX_RANK];
  int64_t sstart[BACKEND_BOX_MAX_RANK], dstart[BACKEND_BOX_MAX_RANK];
  int64_t budget = 4096;
  for (uint32_t d = 0; d < b->rank; d++) {
    int64_t cap = budget > 1 ? (budget < 12 ? budget : 12) : 1;
    b->dims[d] = 1 + below(cap);
    if (d + 1 == b->rank && below(2)) b->dims[d] = 1 + below(64); /* a long row */
    budget /= b->dims[d];
    mult[d] = below(4) ? 1 : 1 + below(3);
    sstart[d] = below(3);
    dstart[d] = below(3);
    sdims[d] = sstart[d] + b->dims[d] + below(3);
    ddims[d] = dstart[d] + b->dims[d] * mult[d] + below(3);
  }
  int64_t sm = 1, dm = 1;
  for (uint32_t d = b->rank; d-- > 0;) {
    b->src_strides[d] = sm;
    b->dst_strides[d] = dm * mult[d];
    b->src_off += sstart[d] * sm;
    b->dst_off += dstart[d] * dm;
    sm *= sdims[d];
    dm *= ddims[d];
  }
  *src_n = sm;
  *dst_n = dm;
}

/* The contract: a plain loop over the box (value: fill). */
static void reference(uint8_t *dst, const uint8_t *src, const uint8_t *value,
                      const backend_box *b) {
  int64_t n = 1;
  for (uint32_t d = 0; d < b->rank; d++) n *= b->dims[d];
  for (int64_t e = 0; e < n; e++) {
    int64_t rem = e, doff = b->dst_off, soff = b->src_off;
    for (uint32_t d = b->rank; d-- > 0;) {
      int64_t i = rem % b->dims[d];
      rem /= b->dims[d];
      doff += i * b->dst_strides[d];
      soff += i * b->src_strides[d];
    }
    memcpy(dst + doff * b->esize, value ? value : src + soff * b->esize, b->esize);
  }
}

/* The kernel's semantics over its parameter block (cuda_copy.c's source,
 * one thread per element, in C). */
static void emulate(const cuda_copy_desc *d, uint8_t *dst, const uint8_t *src) {
  int r = (int)d->rank;
  int64_t inner = r > 0 ? d->dims[r - 1] : 1, es = d->esize;
  int64_t dsi = r > 0 ? d->ds[r - 1] : 0, ssi = r > 0 ? d->ss[r - 1] : 0;
  for (int64_t e = 0; e < d->n; e++) {
    int64_t row = e / inner, j = e - row * inner;
    int64_t doff = d->dst_off + j * dsi, soff = d->src_off + j * ssi;
    for (int k = r - 2; k >= 0; k--) {
      int64_t q = row / d->dims[k], i = row - q * d->dims[k];
      row = q;
      doff += i * d->ds[k];
      soff += i * d->ss[k];
    }
    memcpy(dst + doff * es, d->fill ? d->value : src + soff * es, (size_t)es);
  }
}

TEST(desc_emulated_equals_the_loop) {
  int widened = 0, cases = 0;
  for (int c = 0; c < 400; c++) {
    backend_box b;
    int64_t sn, dn;
    random_box(&b, &sn, &dn);
    size_t sbytes = (size_t)sn * b.esize, dbytes = (size_t)dn * b.esize;
    /* 16-aligned buffers, sometimes shifted by one element */
    size_t sal = (sbytes + 127) & ~(size_t)63, dal = (dbytes + 127) & ~(size_t)63;
    uint8_t *sbuf = aligned_alloc(64, sal), *dbuf = aligned_alloc(64, dal);
    uint8_t *want = malloc(dbytes + 64);
    if (!sbuf || !dbuf || !want) abort();
    size_t shift = below(4) ? 0 : b.esize;
    uint8_t *src = sbuf + shift, *dst = dbuf + shift;
    for (size_t i = 0; i < sbytes; i++) src[i] = (uint8_t)next();
    for (size_t i = 0; i < dbytes; i++) dst[i] = (uint8_t)next();
    memcpy(want, dst, dbytes);
    bool fill = below(3) == 0;
    uint8_t value[16];
    for (int i = 0; i < 16; i++) value[i] = (uint8_t)next();
    reference(want, src, fill ? value : NULL, &b);
    cuda_copy_desc d;
    hlo_status st = cuda_copy_make_desc(&b, dst, fill ? NULL : src, fill ? value : NULL, &d);
    CHECK(!st);
    hlo_status_free(st);
    widened += d.esize > b.esize;
    emulate(&d, dst, fill ? NULL : src);
    bool same = memcmp(dst, want, dbytes) == 0;
    if (!same)
      fprintf(stderr, "case %d: rank %u esize %u (desc esize %lld) fill %d differs\n", c, b.rank,
              b.esize, (long long)d.esize, fill);
    CHECK(same);
    cases++;
    free(sbuf);
    free(dbuf);
    free(want);
  }
  printf("desc: %d random boxes, %d widened\n", cases, widened);
  CHECK(widened > 0);
}

TEST(desc_fast_path_and_errors) {
  /* a [4, 256] f32 slice out of [64, 256] at row 3: 64 uint4 per row */
  static float src[64 * 256], dst[4 * 256];
  backend_box b = {.rank = 2, .esize = 4, .dims = {4, 256}, .src_off = 3 * 256,
                   .dst_strides = {256, 1}, .src_strides = {256, 1}};
  cuda_copy_desc d;
  hlo_status st = cuda_copy_make_desc(&b, dst, src, NULL, &d);
  CHECK(!st);
  hlo_status_free(st);
  CHECK_EQ_INT(d.esize, 16);
  CHECK_EQ_INT(d.dims[1], 64);
  CHECK_EQ_INT(d.ds[0], 64);
  CHECK_EQ_INT(d.src_off, 3 * 64);
  CHECK_EQ_INT(d.n, 4 * 64);
  CHECK_EQ_INT(d.aligned16, ((uintptr_t)src % 16 == 0 && (uintptr_t)dst % 16 == 0));
  /* a fill of i16 7s: the value repeated to 16 bytes */
  int16_t seven = 7;
  backend_box f = {.rank = 1, .esize = 2, .dims = {64}, .dst_strides = {1}};
  st = cuda_copy_make_desc(&f, dst, NULL, &seven, &d);
  CHECK(!st);
  hlo_status_free(st);
  CHECK_EQ_INT(d.esize, 16);
  CHECK_EQ_INT(d.fill, 1);
  int16_t v[8];
  memcpy(v, d.value, sizeof v);
  for (int i = 0; i < 8; i++) CHECK_EQ_INT(v[i], 7);
  /* an odd row offset: no widening past the offset's alignment */
  b.src_off = 3 * 256 + 1;
  st = cuda_copy_make_desc(&b, dst, src, NULL, &d);
  CHECK(!st);
  hlo_status_free(st);
  CHECK_EQ_INT(d.esize, 4);
  /* errors */
  backend_box bad = b;
  bad.rank = BACKEND_BOX_MAX_RANK + 1;
  st = cuda_copy_make_desc(&bad, dst, src, NULL, &d);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  bad = b;
  bad.esize = 3;
  st = cuda_copy_make_desc(&bad, dst, src, NULL, &d);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  /* start indices read on the device: their strides widen with the
   * element (row stride 256 f32 = 64 uint4); a column index (stride 1)
   * keeps 4-byte elements; a bad index size is refused */
  static int32_t i0 = 3, i1 = 0;
  b.src_off = 0;
  b.ndyn = 2, b.dyn_size = 4, b.dyn_signed = true;
  b.dyn_index[0] = &i0, b.dyn_index[1] = &i1;
  b.dyn_max[0] = 60, b.dyn_max[1] = 0;
  b.dyn_stride[0] = 256, b.dyn_stride[1] = 0;
  st = cuda_copy_make_desc(&b, dst, src, NULL, &d);
  CHECK(!st);
  hlo_status_free(st);
  CHECK_EQ_INT(d.esize, 16);
  CHECK_EQ_INT(d.ndyn, 2);
  CHECK_EQ_INT(d.dyn_stride[0], 64);
  CHECK_EQ_INT(d.dyn_max[0], 60);
  CHECK(d.dyn_ptr[0] == (uint64_t)(uintptr_t)&i0);
  b.dyn_stride[1] = 1, b.dyn_max[1] = 3;
  st = cuda_copy_make_desc(&b, dst, src, NULL, &d);
  CHECK(!st);
  hlo_status_free(st);
  CHECK_EQ_INT(d.esize, 4);
  CHECK_EQ_INT(d.dyn_stride[0], 256);
  bad = b;
  bad.dyn_size = 3;
  st = cuda_copy_make_desc(&bad, dst, src, NULL, &d);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
}

/* gather_rows' reference: the contract's loop. */
static void gather_reference(uint8_t *out, const uint8_t *src, const int32_t *idx,
                             const backend_rows *r) {
  for (int64_t i = 0; i < r->nidx; i++) {
    int64_t v = idx[i] < 0 ? 0 : idx[i] > r->nrows - 1 ? r->nrows - 1 : idx[i];
    memcpy(out + i * r->row_bytes, src + ((i / r->per_batch) * r->nrows + v) * r->row_bytes,
           (size_t)r->row_bytes);
  }
}

TEST(gather_desc) {
  static uint8_t buf[1024] __attribute__((aligned(16)));
  backend_rows r = {.nidx = 6, .per_batch = 3, .nrows = 5, .row_bytes = 512, .idx_size = 4,
                    .idx_signed = true};
  cuda_gather_desc d;
  hlo_status st = cuda_gather_make_desc(&r, buf, buf + 512, &d);
  CHECK(!st);
  CHECK_EQ_INT(d.wsize, 16);
  CHECK_EQ_INT(d.words, 32);
  st = cuda_gather_make_desc(&r, buf + 4, buf, &d);
  CHECK(!st);
  CHECK_EQ_INT(d.wsize, 4);
  r.row_bytes = 6;
  st = cuda_gather_make_desc(&r, buf, buf, &d);
  CHECK(!st);
  CHECK_EQ_INT(d.wsize, 2);
  CHECK_EQ_INT(d.words, 3);
  r.idx_size = 3;
  st = cuda_gather_make_desc(&r, buf, buf, &d);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  r.idx_size = 4;
  r.per_batch = 0;
  st = cuda_gather_make_desc(&r, buf, buf, &d);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
}

TEST(scatter_desc) {
  static uint8_t buf[1024] __attribute__((aligned(16)));
  backend_rows r = {.nidx = 6, .per_batch = 6, .nrows = 5, .row_bytes = 512, .idx_size = 4,
                    .idx_signed = true, .add = true, .dtype = HLO_F32};
  cuda_gather_desc d;
  hlo_status st = cuda_scatter_make_desc(&r, buf, buf + 512, &d);
  CHECK(!st);
  CHECK_EQ_INT(d.wsize, 4);
  CHECK_EQ_INT(d.words, 128);
  CHECK_EQ_INT(d.unused0, 1);
  r.add = false;
  st = cuda_scatter_make_desc(&r, buf, buf + 512, &d);
  CHECK(!st);
  CHECK_EQ_INT(d.wsize, 16);
  CHECK_EQ_INT(d.unused0, 0);
  r.add = true;
  r.dtype = HLO_BF16;
  st = cuda_scatter_make_desc(&r, buf, buf, &d);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
  r.dtype = HLO_F64;
  r.row_bytes = 12;
  st = cuda_scatter_make_desc(&r, buf, buf, &d);
  CHECK(st && hlo_status_code_of(st) == HLO_INVALID_ARGUMENT);
  hlo_status_free(st);
}

/* scatter_rows' reference: the contract's loop (f32 add or set). */
static void scatter_reference(uint8_t *out, const uint8_t *upd, const int32_t *idx,
                              const backend_rows *r) {
  for (int64_t i = 0; i < r->nidx; i++) {
    if (idx[i] < 0 || idx[i] >= r->nrows) continue;
    uint8_t *o = out + ((i / r->per_batch) * r->nrows + idx[i]) * r->row_bytes;
    const uint8_t *u = upd + i * r->row_bytes;
    if (!r->add) memcpy(o, u, (size_t)r->row_bytes);
    else
      for (int64_t k = 0; k < r->row_bytes / 4; k++) ((float *)o)[k] += ((const float *)u)[k];
  }
}

/* ------------------------------------------------------------ a GPU */

TEST(gpu) {
  const backend *be = NULL;
  hlo_status st = backend_cuda(&be);
  if (st) {
    printf("gpu: skipped: no GPU (%s)\n", hlo_status_message(st));
    hlo_status_free(st);
    return;
  }
  CHECK(be->copy_box == cuda_copy_box && be->fill_box == cuda_fill_box);
  int bad = 0, cases = 0;
  for (int c = 0; c < 300 && !bad; c++) {
    backend_box b;
    int64_t sn, dn;
    random_box(&b, &sn, &dn);
    size_t sbytes = (size_t)sn * b.esize, dbytes = (size_t)dn * b.esize;
    uint8_t *src = malloc(sbytes), *init = malloc(dbytes), *want = malloc(dbytes),
            *got = malloc(dbytes);
    if (!src || !init || !want || !got) abort();
    for (size_t i = 0; i < sbytes; i++) src[i] = (uint8_t)next();
    for (size_t i = 0; i < dbytes; i++) init[i] = (uint8_t)next();
    memcpy(want, init, dbytes);
    bool fill = below(3) == 0;
    uint8_t value[16];
    for (int i = 0; i < 16; i++) value[i] = (uint8_t)next();
    reference(want, src, fill ? value : NULL, &b);
    /* a copy's source offset read on the device at times (dynamic_slice's
     * start index: backend_box ndyn), in 4 or 8 bytes, the value past its
     * bound at times (clamped back to it) */
    bool dyn = !fill && below(2) == 0;
    int64_t ival[1] = {0};
    if (dyn) {
      int64_t stride = b.src_off % 4 == 0 && b.src_off ? 4 : 1;
      int64_t k = b.src_off / stride;
      b.ndyn = 1, b.dyn_size = below(2) ? 4 : 8, b.dyn_signed = true;
      b.dyn_max[0] = k, b.dyn_stride[0] = stride;
      b.src_off -= k * stride;
      ival[0] = k + (below(3) == 0 ? 5 : 0);
    }
    uint8_t *di = dyn ? be->alloc(8) : NULL;
    if (dyn && di) {
      int32_t i32 = (int32_t)ival[0];
      st = be->copy(di, b.dyn_size == 4 ? (const void *)&i32 : (const void *)ival, b.dyn_size);
      CHECK(!st);
      hlo_status_free(st);
      b.dyn_index[0] = di;
    }
    /* device buffers shifted by one element at times (unaligned paths) */
    size_t shift = below(4) ? 0 : b.esize;
    uint8_t *ds = be->alloc(sbytes + 16), *dd = be->alloc(dbytes + 16);
    CHECK(ds && dd && (!dyn || di));
    if (ds && dd && (!dyn || di)) {
      st = be->copy(ds + shift, src, sbytes);
      if (!st) st = be->copy(dd + shift, init, dbytes);
      if (!st) st = fill ? be->fill_box(dd + shift, value, &b)
                         : be->copy_box(dd + shift, ds + shift, &b);
      if (!st) st = be->synchronize();
      if (!st) st = be->copy(got, dd + shift, dbytes);
      if (st) fprintf(stderr, "case %d: %s\n", c, hlo_status_message(st));
      CHECK(!st);
      hlo_status_free(st);
      if (memcmp(got, want, dbytes) != 0) {
        fprintf(stderr, "case %d: rank %u esize %u fill %d shift %zu differs\n", c, b.rank,
                b.esize, fill, shift);
        bad++;
      }
      cases++;
    }
    be->free(ds);
    be->free(dd);
    be->free(di);
    free(src);
    free(init);
    free(want);
    free(got);
  }
  CHECK_EQ_INT(bad, 0);
  printf("gpu: %d random boxes\n", cases);
  /* gather_rows: random tables, rows of 1..67 bytes, indices out of range
   * (clamped) */
  CHECK(be->gather_rows == cuda_gather_rows);
  for (int c = 0; c < 100 && !bad; c++) {
    backend_rows r = {.nidx = 1 + below(300), .per_batch = 0, .nrows = 1 + below(40),
                      .row_bytes = 1 + below(67), .idx_size = 4, .idx_signed = true};
    if (below(2)) r.row_bytes = 16 * (1 + below(32));
    int64_t batches = 1 + below(4);
    r.per_batch = r.nidx;
    r.nidx *= batches;
    size_t sbytes = (size_t)(batches * r.nrows * r.row_bytes);
    size_t obytes = (size_t)(r.nidx * r.row_bytes);
    uint8_t *src = malloc(sbytes), *want = malloc(obytes), *got = malloc(obytes);
    int32_t *idx = malloc((size_t)r.nidx * 4);
    if (!src || !want || !got || !idx) abort();
    for (size_t i = 0; i < sbytes; i++) src[i] = (uint8_t)next();
    for (int64_t i = 0; i < r.nidx; i++) idx[i] = (int32_t)below(r.nrows + 6) - 3;
    gather_reference(want, src, idx, &r);
    uint8_t *ds = be->alloc(sbytes), *dout = be->alloc(obytes);
    uint8_t *di = be->alloc((size_t)r.nidx * 4);
    CHECK(ds && dout && di);
    if (ds && dout && di) {
      st = be->copy(ds, src, sbytes);
      if (!st) st = be->copy(di, idx, (size_t)r.nidx * 4);
      if (!st) st = be->gather_rows(dout, ds, di, &r);
      if (!st) st = be->synchronize();
      if (!st) st = be->copy(got, dout, obytes);
      if (st) fprintf(stderr, "gather case %d: %s\n", c, hlo_status_message(st));
      CHECK(!st);
      hlo_status_free(st);
      if (memcmp(got, want, obytes) != 0) {
        fprintf(stderr, "gather case %d differs\n", c);
        bad++;
      }
    }
    be->free(ds);
    be->free(dout);
    be->free(di);
    free(src);
    free(want);
    free(got);
    free(idx);
  }
  CHECK_EQ_INT(bad, 0);
  /* scatter_rows: f32 add (rows repeated: the order matters) and set
   * (unique rows, or repeated: the last wins), indices out of range
   * skipped; lists longer than a block (several chunks of the leader's
   * search), rows wider than a block, and (the last case) a list past
   * SCATTER_ROWS_MAX (the serial kernel) */
  CHECK(be->scatter_rows == cuda_scatter_rows);
  for (int c = 0; c < 101 && !bad; c++) {
    bool add = c % 2 == 0, big = c == 100, repeat = c % 4 == 1;
    int64_t batches = big ? 1 : 1 + below(3), nrows = big ? 64 : 1 + below(20);
    int64_t per = big ? 40000 : c % 5 == 0 ? 257 + below(700) : 1 + below(50);
    backend_rows r = {.nidx = 0, .per_batch = add || repeat ? per : 1 + below(nrows),
                      .nrows = nrows,
                      .row_bytes = big ? 8 : 4 * (c % 7 == 0 ? 257 + below(300) : 1 + below(40)),
                      .idx_size = 4, .idx_signed = true, .add = add, .dtype = HLO_F32};
    r.nidx = r.per_batch * batches;
    size_t obytes = (size_t)(batches * nrows * r.row_bytes);
    size_t ubytes = (size_t)(r.nidx * r.row_bytes);
    uint8_t *out = malloc(obytes), *upd = malloc(ubytes), *want = malloc(obytes),
            *got = malloc(obytes);
    int32_t *idx = malloc((size_t)r.nidx * 4);
    if (!out || !upd || !want || !got || !idx) abort();
    for (size_t i = 0; i < obytes / 4; i++) ((float *)out)[i] = (float)below(1000) * 0.37f;
    for (size_t i = 0; i < ubytes / 4; i++) ((float *)upd)[i] = (float)below(1000) * 0.011f;
    for (int64_t i = 0; i < r.nidx; i++)
      idx[i] = add || repeat ? (int32_t)below(nrows + 4) - 2 : (int32_t)(i % r.per_batch);
    if (!add && r.nidx > 1) idx[0] = (int32_t)nrows; /* skipped */
    memcpy(want, out, obytes);
    scatter_reference(want, upd, idx, &r);
    uint8_t *dout = be->alloc(obytes), *du = be->alloc(ubytes);
    uint8_t *di = be->alloc((size_t)r.nidx * 4);
    CHECK(dout && du && di);
    if (dout && du && di) {
      st = be->copy(dout, out, obytes);
      if (!st) st = be->copy(du, upd, ubytes);
      if (!st) st = be->copy(di, idx, (size_t)r.nidx * 4);
      if (!st) st = be->scatter_rows(dout, du, di, &r);
      if (!st) st = be->synchronize();
      if (!st) st = be->copy(got, dout, obytes);
      if (st) fprintf(stderr, "scatter case %d: %s\n", c, hlo_status_message(st));
      CHECK(!st);
      hlo_status_free(st);
      if (memcmp(got, want, obytes) != 0) {
        fprintf(stderr, "scatter case %d (add %d) differs\n", c, add);
        bad++;
      }
    }
    be->free(dout);
    be->free(du);
    be->free(di);
    free(out);
    free(upd);
    free(want);
    free(got);
    free(idx);
  }
  CHECK_EQ_INT(bad, 0);
}

TEST_MAIN()
