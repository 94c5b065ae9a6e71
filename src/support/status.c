/* status.c — hlo_status: errors with locations, source lines and notes. */
#include "support/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/strbuf.h"

struct hlo_status_s {
  hlo_status_code code;
  char *message;
  char *file;        /* NULL when unlocated */
  hlo_loc loc;       /* loc.src is cleared: the source may not outlive us */
  char *line_text;   /* copy of the source line, or NULL */
  char *notes;       /* "note: ...\n" lines, or NULL */
};

static struct hlo_status_s oom_status = {HLO_RESOURCE_EXHAUSTED, "out of memory",
                                         NULL, {NULL, 0, 0}, NULL, NULL};

static char *dup_str(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

/* Copies the source line of `loc` (at most 400 bytes) into the status. */
static void copy_line(struct hlo_status_s *st, const hlo_loc *loc) {
  const hlo_source *src = loc->src;
  if (!src || !src->text || loc->line == 0) return;
  const char *p = src->text, *end = src->text + src->len;
  for (uint32_t line = src->first_line ? src->first_line : 1; line < loc->line && p < end; p++)
    if (*p == '\n') line++;
  const char *e = p;
  while (e < end && *e != '\n') e++;
  if (e > p && e[-1] == '\r') e--;
  if (e - p > 400) e = p + 400;
  st->line_text = dup_str(p, (size_t)(e - p));
}

/* Gives st the location `loc` (when it has a line): line, column, file name
 * and source line. */
static void set_loc(struct hlo_status_s *st, const hlo_loc *loc) {
  if (!loc || !loc->line) return;
  st->loc.line = loc->line;
  st->loc.col = loc->col;
  if (loc->src && loc->src->name) st->file = dup_str(loc->src->name, strlen(loc->src->name));
  copy_line(st, loc);
}

hlo_status status_vat(hlo_status_code code, const hlo_loc *loc, const char *fmt,
                      va_list ap) {
  struct hlo_status_s *st = calloc(1, sizeof *st);
  if (!st) return &oom_status;
  st->code = code;
  strbuf b;
  sb_init(&b);
  sb_vprintf(&b, fmt, ap);
  st->message = sb_take(&b);
  if (!st->message) { free(st); return &oom_status; }
  set_loc(st, loc);
  return st;
}

hlo_status status_locate(hlo_status s, const hlo_loc *loc) {
  if (s && s != &oom_status && !s->loc.line) set_loc(s, loc);
  return s;
}

hlo_status status_at(hlo_status_code code, const hlo_loc *loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hlo_status s = status_vat(code, loc, fmt, ap);
  va_end(ap);
  return s;
}

hlo_status status_new(hlo_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hlo_status s = status_vat(code, NULL, fmt, ap);
  va_end(ap);
  return s;
}

hlo_status status_note(hlo_status s, const char *fmt, ...) {
  if (!s || s == &oom_status) return s;
  strbuf b;
  sb_init(&b);
  if (s->notes) sb_puts(&b, s->notes);
  sb_puts(&b, "note: ");
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&b, fmt, ap);
  va_end(ap);
  sb_putc(&b, '\n');
  char *n = sb_take(&b);
  if (n) { free(s->notes); s->notes = n; }
  return s;
}

const hlo_loc *status_loc(hlo_status s) {
  return s && s->loc.line ? &s->loc : NULL;
}
const char *status_file(hlo_status s) { return s ? s->file : NULL; }

hlo_status_code hlo_status_code_of(hlo_status s) { return s ? s->code : HLO_OK; }
const char *hlo_status_message(hlo_status s) { return s ? s->message : "ok"; }

const char *hlo_status_code_name(hlo_status_code c) {
  switch (c) {
    case HLO_OK: return "ok";
    case HLO_INVALID_ARGUMENT: return "invalid argument";
    case HLO_PARSE_ERROR: return "parse error";
    case HLO_VERIFY_ERROR: return "verification error";
    case HLO_UNIMPLEMENTED: return "unimplemented";
    case HLO_OUT_OF_RANGE: return "out of range";
    case HLO_RESOURCE_EXHAUSTED: return "resource exhausted";
    case HLO_NOT_FOUND: return "not found";
    case HLO_UNAVAILABLE: return "unavailable";
    case HLO_FAILED_CHECK: return "check failed";
    case HLO_INTERNAL: return "internal error";
  }
  return "unknown";
}

void hlo_status_print(hlo_status s, FILE *f) {
  if (!s) return;
  if (s->loc.line)
    fprintf(f, "%s:%u:%u: ", s->file ? s->file : "<input>", s->loc.line, s->loc.col);
  fprintf(f, "error: %s\n", s->message);
  if (s->line_text) {
    fprintf(f, "%s\n", s->line_text);
    size_t n = strlen(s->line_text);
    for (uint32_t i = 1; i < s->loc.col; i++)
      fputc(i - 1 < n && s->line_text[i - 1] == '\t' ? '\t' : ' ', f);
    fputs("^\n", f);
  }
  if (s->notes) fputs(s->notes, f);
}

void hlo_status_free(hlo_status s) {
  if (!s || s == &oom_status) return;
  free(s->message);
  free(s->file);
  free(s->line_text);
  free(s->notes);
  free(s);
}
