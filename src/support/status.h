/* status.h — making and passing errors (hlo_status) inside hlo.
 *
 * A status is NULL on success. An error carries a code, a message, an
 * optional location in the user's program with a copy of that source line,
 * and notes added on the way up (HLO_RETURN_IF_ERROR's context). */
#ifndef HLO_SUPPORT_STATUS_H
#define HLO_SUPPORT_STATUS_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "hlo/hlo.h"

/* A source buffer: the text of one file as parsed. Owned by whoever parsed
 * it (the module's arena); statuses copy what they need. */
typedef struct hlo_source {
  const char *name;   /* file name as given by the user, "-" for stdin */
  const char *text;
  size_t len;
  uint32_t first_line; /* line number of text[0] in the file (1 unless the
                          text is one piece of a --split-input-file file) */
} hlo_source;

/* A location in the user's program. line and col count from 1; line == 0
 * means unknown. `src` may be NULL (then no source line is shown). */
typedef struct hlo_loc {
  const hlo_source *src;
  uint32_t line, col;
} hlo_loc;

/* A new error with code and printf-style message; no location. Never NULL:
 * when out of memory, a static "out of memory" status is returned (freeing it
 * is a no-op). */
hlo_status status_new(hlo_status_code code, const char *fmt, ...) HLO_PRINTF(2, 3);
/* The same, located at `loc` (copies the source line). `loc` may be NULL. */
hlo_status status_at(hlo_status_code code, const hlo_loc *loc,
                     const char *fmt, ...) HLO_PRINTF(3, 4);
/* status_at taking a va_list. */
hlo_status status_vat(hlo_status_code code, const hlo_loc *loc,
                      const char *fmt, va_list ap);
/* Appends a note line ("note: while running @main") to `s`; returns `s`. */
hlo_status status_note(hlo_status s, const char *fmt, ...) HLO_PRINTF(2, 3);
/* Gives `s`, an error with no location, the location `loc` (NULL or line 0:
 * none); an error already located is left as it is. Returns `s`. */
hlo_status status_locate(hlo_status s, const hlo_loc *loc);
/* Location of an error (NULL when it has none). Lent. */
const hlo_loc *status_loc(hlo_status s);
/* The file name the error points at, or NULL. Lent. */
const char *status_file(hlo_status s);

/* Returns from the enclosing function with the status of `expr` if it failed,
 * adding a note formatted from the remaining arguments. */
#define HLO_RETURN_IF_ERROR(expr, ...)                 \
  do {                                                 \
    hlo_status _st = (expr);                           \
    if (_st) return status_note(_st, __VA_ARGS__);     \
  } while (0)
/* Returns the status of `expr` if it failed, unchanged. */
#define HLO_TRY(expr)                                  \
  do {                                                 \
    hlo_status _st = (expr);                           \
    if (_st) return _st;                               \
  } while (0)
#endif
