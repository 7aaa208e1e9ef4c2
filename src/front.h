/* front.h — what lower.c and nodes.c share while turning document trees into
 * IR.  Nothing outside the YAML front end includes this. */
#ifndef CUDAG_FRONT_H
#define CUDAG_FRONT_H

#include "expr.h"
#include "lower.h"
#include "parse.h"

/* One parsed file, in lowering order: a file's includes come before it. */
typedef struct cudag__file {
    const char *path;           /* as shown in positions */
    const char *dir;            /* where its relative paths start */
    const char *real;           /* canonical path: include-once, cycles */
    const cudag__doc *root;     /* NULL for an empty file */
} cudag__file;

struct cudag__source {
    cudag__arena arena;         /* texts, trees, paths: everything below */
    cudag__file *files;
    uint32_t nfiles, cfiles;
    const char **defines;       /* NULL-terminated copies of the options' */
    unsigned flags;
};

/* A -D define, matched against the variables as they are lowered. */
typedef struct cudag__define {
    const char *name;
    const char *expr;
    size_t len;
    cudag__pos pos;             /* of the expression, in "<command line>" */
    bool used;
} cudag__define;

/* A node whose name is known and whose body is lowered in a second pass, so
 * that edges and references may name nodes defined later. */
typedef struct cudag__pending {
    uint32_t node;
    const cudag__doc *body;
    const cudag__binding *env;  /* repetition indices of this copy */
    const char *prefix;         /* "layer[3]." — its group, or "" */
    uint32_t file;
} cudag__pending;

/* The range of a repetition, by the full name of its base ("layer",
 * "row[2].col"), for the rule that lets a chain fall off its ends. */
typedef struct cudag__range {
    int64_t lo, hi;
} cudag__range;

typedef struct cudag__lower {
    cudag_graph *g;
    cudag__source *src;
    cudag__diag *d;
    cudag__define *defs;
    uint32_t ndefs;
    uint32_t file;              /* index of the file being lowered */
    cudag__pending *pend;
    uint32_t npend, cpend;
    cudag__range *ranges;
    uint32_t nranges, cranges;
    cudag__map range_map;       /* base name → index into ranges */
    cudag__arena scratch;       /* bindings, prefixes: freed after lowering */
    /* The last node body whose keys passed, and its kind: the copies of a
     * repeated node share one body, checked once. */
    const cudag__doc *shaped;
    cudag_node_kind shaped_kind;
    /* Suggestions searched over a large namespace so far: each costs a pass
     * over every name, so only the first few errors get one. */
    unsigned big_searches;
} cudag__lower;

/* Reports an error at pos; returns its code (for one-line failures). */
int cudag__lerr(cudag__lower *lw, int code, cudag__pos pos, const char *fmt,
                ...) CUDAG__PRINTF(4, 5);

/* True if n is of type t; otherwise reports "<what> must be <t>, not <n>". */
bool cudag__want(cudag__lower *lw, const cudag__doc *n, cudag__doc_type t,
                 const char *what);

/* True for a key starting "x-": free for the user, ignored everywhere. */
bool cudag__free_key(const cudag__doc *k);

/* Reports each key of map not in allowed[] (keys starting "x-" are free),
 * with a suggestion.  Returns the number of unknown keys. */
unsigned cudag__check_keys(cudag__lower *lw, const cudag__doc *map,
                           const char *const *allowed, size_t n,
                           const char *what);

/* Evaluates a scalar node as an integer expression in scope env. */
int cudag__eval(cudag__lower *lw, const cudag__doc *n,
                const cudag__binding *env, int64_t *out);

/* Parses a number written as a float (1e-5, -0.5, 2.0, inf is refused).
 * Returns true and sets *out if s is one. */
bool cudag__parse_float(const char *s, size_t len, double *out);

/* The second half of lowering, in nodes.c: the `nodes` and `edges` sections
 * of every file. */
int cudag__lower_nodes(cudag__lower *lw);

#endif /* CUDAG_FRONT_H */
