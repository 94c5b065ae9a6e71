/* jsoncheck.c — checks that a file holds exactly one JSON value (RFC 8259:
 * objects, arrays, strings with their escapes, numbers, true/false/null;
 * nothing but white space after it) and prints the values at the paths
 * asked for, one per line: numbers, true/false/null as written, strings
 * without their quotes (escapes kept), objects and arrays as "{...}"/"[...]".
 * A path is keys and array indices separated by dots ("fusions.total",
 * "passes.0.name"). Exits 0 when the JSON is well formed and every path is
 * there; else prints the problem (with the byte offset) and exits 1.
 *
 * Usage: jsoncheck FILE [PATH...]   (FILE "-": standard input) */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct json_parser {
  const char *s, *p, *end;
  const char *err;
  int depth;
} json_parser;

static void ws(json_parser *J) {
  while (J->p < J->end && (*J->p == ' ' || *J->p == '\t' || *J->p == '\n' || *J->p == '\r')) J->p++;
}

static bool error(json_parser *J, const char *what) {
  if (!J->err) J->err = what;
  return false;
}

static bool value(json_parser *J);

static bool string(json_parser *J) {
  if (J->p >= J->end || *J->p != '"') return error(J, "expected a string");
  J->p++;
  while (J->p < J->end && *J->p != '"') {
    unsigned char c = (unsigned char)*J->p;
    if (c < 0x20) return error(J, "control character in a string");
    if (c == '\\') {
      J->p++;
      if (J->p >= J->end) break;
      char e = *J->p;
      if (e == 'u') {
        for (int i = 1; i <= 4; i++)
          if (J->p + i >= J->end || !isxdigit((unsigned char)J->p[i]))
            return error(J, "bad \\u escape");
        J->p += 4;
      } else if (!strchr("\"\\/bfnrt", e) || !e) {
        return error(J, "bad escape in a string");
      }
    }
    J->p++;
  }
  if (J->p >= J->end) return error(J, "unterminated string");
  J->p++;
  return true;
}

static bool digits(json_parser *J) {
  if (J->p >= J->end || !isdigit((unsigned char)*J->p)) return error(J, "expected a digit");
  while (J->p < J->end && isdigit((unsigned char)*J->p)) J->p++;
  return true;
}

static bool number(json_parser *J) {
  if (J->p < J->end && *J->p == '-') J->p++;
  if (J->p < J->end && *J->p == '0') J->p++;
  else if (!digits(J)) return false;
  if (J->p < J->end && *J->p == '.') { J->p++; if (!digits(J)) return false; }
  if (J->p < J->end && (*J->p == 'e' || *J->p == 'E')) {
    J->p++;
    if (J->p < J->end && (*J->p == '+' || *J->p == '-')) J->p++;
    if (!digits(J)) return false;
  }
  return true;
}

static bool literal(json_parser *J, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(J->end - J->p) < n || memcmp(J->p, w, n)) return error(J, "expected a value");
  J->p += n;
  return true;
}

static bool value(json_parser *J) {
  ws(J);
  if (J->p >= J->end) return error(J, "expected a value, found the end");
  if (++J->depth > 512) return error(J, "nested too deeply");
  bool ok;
  char c = *J->p;
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    J->p++;
    ws(J);
    ok = true;
    if (J->p < J->end && *J->p == close) J->p++;
    else {
      for (;;) {
        if (c == '{') {
          ws(J);
          if (!string(J)) { ok = false; break; }
          ws(J);
          if (J->p >= J->end || *J->p != ':') { ok = error(J, "expected ':'"); break; }
          J->p++;
        }
        if (!value(J)) { ok = false; break; }
        ws(J);
        if (J->p < J->end && *J->p == ',') { J->p++; continue; }
        if (J->p < J->end && *J->p == close) { J->p++; break; }
        ok = error(J, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
        break;
      }
    }
  } else if (c == '"') ok = string(J);
  else if (c == 't') ok = literal(J, "true");
  else if (c == 'f') ok = literal(J, "false");
  else if (c == 'n') ok = literal(J, "null");
  else ok = number(J);
  J->depth--;
  return ok;
}

/* The value at `path` within the (well-formed) value at J->p: sets J->p to
 * its start, or returns false. */
static bool find(json_parser *J, const char *path) {
  while (*path) {
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    ws(J);
    char c = J->p < J->end ? *J->p : 0;
    if (c != '{' && c != '[') return false;
    J->p++;
    long want = -1;
    if (c == '[') {
      char *e;
      want = strtol(path, &e, 10);
      if (e != path + n || want < 0) return false;
    }
    bool found = false;
    for (long i = 0;; i++) {
      ws(J);
      if (J->p < J->end && (*J->p == '}' || *J->p == ']')) return false;
      if (c == '{') {
        const char *k = J->p + 1;
        (void)string(J);
        size_t kl = (size_t)(J->p - 1 - k);
        ws(J);
        J->p++; /* ':' */
        if (kl == n && !memcmp(k, path, n)) found = true;
      } else if (i == want) {
        found = true;
      }
      if (found) break;
      (void)value(J);
      ws(J);
      if (J->p < J->end && *J->p == ',') J->p++;
      else return false;
    }
    path += n;
    if (*path == '.') path++;
  }
  ws(J);
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: jsoncheck FILE [PATH...]\n"); return 2; }
  FILE *f = strcmp(argv[1], "-") ? fopen(argv[1], "rb") : stdin;
  if (!f) { perror(argv[1]); return 1; }
  size_t cap = 1 << 16, n = 0, k;
  char *text = malloc(cap);
  while (text && (k = fread(text + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) {
      char *t = realloc(text, cap *= 2);
      if (!t) free(text);
      text = t;
    }
  }
  if (f != stdin) fclose(f);
  if (!text) { fprintf(stderr, "jsoncheck: out of memory\n"); return 1; }
  json_parser J = {text, text, text + n, NULL, 0};
  bool ok = value(&J);
  if (ok) {
    ws(&J);
    if (J.p != J.end) ok = error(&J, "text after the JSON value");
  }
  if (!ok) {
    fprintf(stderr, "jsoncheck: %s: byte %ld: %s\n", argv[1], (long)(J.p - J.s), J.err);
    free(text);
    return 1;
  }
  int rc = 0;
  for (int i = 2; i < argc; i++) {
    J.p = J.s;
    J.err = NULL;
    if (!find(&J, argv[i])) {
      fprintf(stderr, "jsoncheck: %s: no value at '%s'\n", argv[1], argv[i]);
      rc = 1;
      continue;
    }
    const char *v = J.p;
    if (*v == '{' || *v == '[') printf("%s\n", *v == '{' ? "{...}" : "[...]");
    else {
      (void)value(&J);
      if (*v == '"') printf("%.*s\n", (int)(J.p - v - 2), v + 1);
      else printf("%.*s\n", (int)(J.p - v), v);
    }
  }
  free(text);
  return rc;
}
