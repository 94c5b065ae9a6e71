/* dotcheck.c — checks that a Graphviz DOT file (what `hlo dot` writes) is
 * well formed, without graphviz: one `digraph NAME { ... }`, strings closed,
 * braces and brackets balanced, statements of the forms `ID [attrs];`,
 * `A -> B [attrs];`, `KEY=VALUE;`, `node|edge|graph [attrs];`,
 * `subgraph ID { ... }`; every node declared once; every edge's ends
 * declared. Prints "nodes N edges E clusters C" (clusters: subgraphs named
 * cluster_*) and exits 0, or prints the first problem with its line and
 * exits 1.
 *
 * Usage: dotcheck FILE [--clusters N]   (N: the cluster count required) */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_EOF, T_ID, T_STR, T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK, T_ARROW, T_EQ,
               T_SEMI, T_COMMA, T_BAD } tok_kind;

typedef struct lexer {
  const char *p, *end;
  int line;
  tok_kind kind;
  const char *tok;
  size_t len;
  const char *err;
} lexer;

static void next(lexer *L) {
  for (;;) {
    while (L->p < L->end && isspace((unsigned char)*L->p)) {
      if (*L->p == '\n') L->line++;
      L->p++;
    }
    if (L->p + 1 < L->end && L->p[0] == '/' && L->p[1] == '/') {
      while (L->p < L->end && *L->p != '\n') L->p++;
      continue;
    }
    break;
  }
  L->tok = L->p;
  L->len = 1;
  if (L->p >= L->end) { L->kind = T_EOF; L->len = 0; return; }
  char c = *L->p;
  const char *single = "{}[]=;,";
  const tok_kind kinds[] = {T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK, T_EQ, T_SEMI, T_COMMA};
  const char *s = strchr(single, c);
  if (s && c) { L->kind = kinds[s - single]; L->p++; return; }
  if (c == '-' && L->p + 1 < L->end && L->p[1] == '>') { L->kind = T_ARROW; L->p += 2; L->len = 2; return; }
  if (c == '"') {
    const char *q = L->p + 1;
    while (q < L->end && *q != '"') {
      if (*q == '\n') L->line++;
      if (*q == '\\' && q + 1 < L->end) q++;
      q++;
    }
    if (q >= L->end) { L->kind = T_BAD; L->err = "unterminated string"; return; }
    L->kind = T_STR;
    L->len = (size_t)(q + 1 - L->p);
    L->p = q + 1;
    return;
  }
  if (isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-') {
    const char *q = L->p;
    while (q < L->end && (isalnum((unsigned char)*q) || *q == '_' || *q == '.' ||
                          (*q == '-' && !(q + 1 < L->end && q[1] == '>'))))
      q++;
    L->kind = T_ID;
    L->len = (size_t)(q - L->p);
    L->p = q;
    return;
  }
  L->kind = T_BAD;
  L->err = "unexpected character";
}

/* The declared node names (a simple list: files are small). */
typedef struct names {
  char **v;
  size_t n, cap;
} names;

static int names_has(const names *s, const char *t, size_t len) {
  for (size_t i = 0; i < s->n; i++)
    if (strlen(s->v[i]) == len && !memcmp(s->v[i], t, len)) return 1;
  return 0;
}

static int names_add(names *s, const char *t, size_t len) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    char **v = realloc(s->v, cap * sizeof *v);
    if (!v) return 0;
    s->v = v;
    s->cap = cap;
  }
  char *c = malloc(len + 1);
  if (!c) return 0;
  memcpy(c, t, len);
  c[len] = 0;
  s->v[s->n++] = c;
  return 1;
}

typedef struct edge_end {
  char *name;
  int line;
} edge_end;

/* Reports `what` (or the lexer's own error at a bad token) at the current line. */
static int fail(const lexer *L, const char *what) {
  if (L->kind == T_BAD && L->err) what = L->err;
  fprintf(stderr, "dotcheck: line %d: %s (at '%.*s')\n", L->line, what,
          (int)(L->len > 40 ? 40 : L->len), L->tok ? L->tok : "");
  return 1;
}

/* Skips an attribute list `[k=v, k=v; ...]` (the '[' is current). */
static int attr_list(lexer *L) {
  next(L);
  while (L->kind != T_RBRACK) {
    if (L->kind != T_ID && L->kind != T_STR) return fail(L, "expected an attribute name");
    next(L);
    if (L->kind != T_EQ) return fail(L, "expected '=' in an attribute list");
    next(L);
    if (L->kind != T_ID && L->kind != T_STR) return fail(L, "expected an attribute value");
    next(L);
    if (L->kind == T_COMMA || L->kind == T_SEMI) next(L);
  }
  next(L);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--clusters") == 0)) {
    fprintf(stderr, "usage: dotcheck FILE [--clusters N]\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  size_t k;
  while (text && (k = fread(text + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) { cap *= 2; char *t = realloc(text, cap); if (!t) { free(text); text = NULL; } else text = t; }
  }
  fclose(f);
  if (!text) { fprintf(stderr, "dotcheck: out of memory\n"); return 1; }
  lexer L = {text, text + n, 1, T_EOF, NULL, 0, NULL};
  names nodes = {0};
  edge_end *ends = NULL;
  size_t num_ends = 0, cap_ends = 0, num_edges = 0;
  long clusters = 0;
  int depth = 0, rc = 0;
  next(&L);
  if (L.kind != T_ID || L.len != 7 || memcmp(L.tok, "digraph", 7)) { rc = fail(&L, "expected 'digraph'"); goto done; }
  next(&L);
  if (L.kind == T_ID || L.kind == T_STR) next(&L);
  if (L.kind != T_LBRACE) { rc = fail(&L, "expected '{' after the graph's name"); goto done; }
  depth = 1;
  next(&L);
  while (depth > 0) {
    if (L.kind == T_BAD) { rc = fail(&L, L.err); goto done; }
    if (L.kind == T_EOF) { rc = fail(&L, "unbalanced braces: end of file inside the graph"); goto done; }
    if (L.kind == T_SEMI) { next(&L); continue; }
    if (L.kind == T_RBRACE) { depth--; next(&L); continue; }
    if (L.kind == T_LBRACE) { rc = fail(&L, "'{' without subgraph"); goto done; }
    if (L.kind != T_ID && L.kind != T_STR) { rc = fail(&L, "expected a statement"); goto done; }
    const char *id = L.tok;
    size_t idlen = L.len;
    int idline = L.line;
    if (L.kind == T_ID && idlen == 8 && !memcmp(id, "subgraph", 8)) {
      next(&L);
      if (L.kind == T_ID || L.kind == T_STR) {
        const char *nm = L.kind == T_STR ? L.tok + 1 : L.tok;
        if (!strncmp(nm, "cluster", 7)) clusters++;
        next(&L);
      }
      if (L.kind != T_LBRACE) { rc = fail(&L, "expected '{' after subgraph"); goto done; }
      depth++;
      next(&L);
      continue;
    }
    int is_kw = L.kind == T_ID && ((idlen == 4 && (!memcmp(id, "node", 4) || !memcmp(id, "edge", 4))) ||
                                   (idlen == 5 && !memcmp(id, "graph", 5)));
    next(&L);
    if (is_kw) {
      if (L.kind != T_LBRACK) { rc = fail(&L, "expected '[' after node/edge/graph"); goto done; }
      if ((rc = attr_list(&L))) goto done;
      continue;
    }
    if (L.kind == T_EQ) {           /* graph attribute KEY=VALUE */
      next(&L);
      if (L.kind != T_ID && L.kind != T_STR) { rc = fail(&L, "expected a value after '='"); goto done; }
      next(&L);
      continue;
    }
    if (L.kind == T_ARROW) {        /* A -> B [-> C ...] [attrs] */
      const char *t = id;
      size_t tl = idlen;
      for (;;) {
        if (num_ends + 2 > cap_ends) {
          cap_ends = cap_ends ? cap_ends * 2 : 512;
          edge_end *e = realloc(ends, cap_ends * sizeof *e);
          if (!e) { rc = fail(&L, "out of memory"); goto done; }
          ends = e;
        }
        ends[num_ends].name = strndup(t, tl);
        ends[num_ends++].line = idline;
        if (L.kind != T_ARROW) break;
        next(&L);
        if (L.kind != T_ID && L.kind != T_STR) { rc = fail(&L, "expected a node after '->'"); goto done; }
        t = L.tok;
        tl = L.len;
        idline = L.line;
        num_edges++;
        next(&L);
      }
      if (L.kind == T_LBRACK && (rc = attr_list(&L))) goto done;
      continue;
    }
    /* a node statement */
    if (names_has(&nodes, id, idlen)) { rc = fail(&L, "node declared twice"); goto done; }
    if (!names_add(&nodes, id, idlen)) { rc = fail(&L, "out of memory"); goto done; }
    if (L.kind == T_LBRACK && (rc = attr_list(&L))) goto done;
  }
  if (L.kind != T_EOF) { rc = fail(&L, "text after the graph's closing brace"); goto done; }
  for (size_t i = 0; i < num_ends; i++)
    if (!names_has(&nodes, ends[i].name, strlen(ends[i].name))) {
      fprintf(stderr, "dotcheck: line %d: edge end '%s' is not a declared node\n", ends[i].line,
              ends[i].name);
      rc = 1;
      goto done;
    }
  printf("nodes %zu edges %zu clusters %ld\n", nodes.n, num_edges, clusters);
  if (argc == 4 && clusters != atol(argv[3])) {
    fprintf(stderr, "dotcheck: %ld clusters, want %s\n", clusters, argv[3]);
    rc = 1;
  }
done:
  for (size_t i = 0; i < nodes.n; i++) free(nodes.v[i]);
  free(nodes.v);
  for (size_t i = 0; i < num_ends; i++) free(ends[i].name);
  free(ends);
  free(text);
  return rc;
}
