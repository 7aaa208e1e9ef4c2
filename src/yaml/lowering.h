/* lowering.h — what the YAML front end's files (front/, nodes.c and the node
 * kinds' YAML readers) share while turning document trees into IR; the
 * shared helpers are in yaml/lowering.c, below all of them. */
#ifndef CUDAG_FRONT_H
#define CUDAG_FRONT_H

#include "cudag.h"
#include "base/alloc.h"
#include "base/attrs.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "ir/graph.h"
#include "yaml/expr.h"
#include "yaml/parse.h"

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

/* The namespaces of declarations (cudag__lower.bad). */
typedef enum cudag__ns {
    CUDAG__NS_VAR,
    CUDAG__NS_MODULE,
    CUDAG__NS_SIG,
    CUDAG__NS_BUFFER,
    CUDAG__NS_NODE,
    CUDAG__NS_COND,             /* conditions named but never declared */
    CUDAG__NS_COUNT
} cudag__ns;

/* A -D define, matched against the variables as they are lowered. */
typedef struct cudag__define {
    const char *name;
    const char *expr;
    size_t len;
    cudag__pos pos;             /* of the expression, in "<command line>" */
    bool used;
    bool call;                  /* given by cudag_exec_set_var, not -D */
} cudag__define;

/* A node whose name is known and whose body is lowered in a second pass, so
 * that edges and references may name nodes defined later. */
typedef struct cudag__pending {
    cudag_graph *g;             /* the graph the node is in (a sub-graph's
                                   nodes are lowered while its owner is) */
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

typedef struct cudag__lower cudag__lower;
struct cudag__lower {
    cudag_graph *g;             /* the graph being lowered into: the root,
                                   or a sub-graph during lower_sub */
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
    /* Per namespace, the names of declarations that were reported as wrong
     * and left out of the graph (keys live in the source or the scratch
     * arena).  A use of one says nothing: one mistake, one error. */
    cudag__map bad[CUDAG__NS_COUNT];
    /* The front end's step for a sub-graph (kind.h, "Sub-graphs"): lowers
     * the nodes of the mapping `map` (a body: nodes, groups, repetition)
     * into `sub` with both passes, `env` being the repetition indices
     * around it.  Reports through lw; lw->g is sub meanwhile. */
    void (*lower_sub)(cudag__lower *lw, cudag_graph *sub, const cudag__doc *map,
                      const cudag__binding *env);
    void *walk;                 /* nodes.c's state of the whole pass */
    /* front/'s step for a child-graph node (kinds/child.c): reads and
     * parses the graph file `name` names, relative to dir, into *out (in
     * the source's arena).  Reports at name's position. */
    int (*read_graph)(cudag__lower *lw, const char *dir,
                      const cudag__doc *name, cudag__file *out);
    /* The child-graph files being lowered, outermost first (a cycle is one
     * met again).  While nchild > 0 the root's variables are out of scope:
     * a child sees only its own, bound as repetition indices are. */
    const cudag__file *child[CUDAG__MAX_SUB_DEPTH + 1];
    unsigned nchild;
    /* Errors reported checking variables' bounds (yaml/bounds.c): a value
     * out of them, a bound that does not evaluate.  The load stops after
     * the graph's own variables when there is one. */
    unsigned nbounds;
    /* The graph's variables whose bounds are checked once every variable
     * has its value (cudag__check_bounds' early record). */
    cudag__map waiting;
};

/* ---- yaml/lowering.c ----------------------------------------------------------- */

/* Reports an error at pos; returns its code (for one-line failures). */
int cudag__lerr(cudag__lower *lw, int code, cudag__pos pos, const char *fmt,
                ...) CUDAG__PRINTF(4, 5);

/* Reports the error value e (of a lower stage) where it points, or at
 * fallback when it has no position; returns its code. */
int cudag__lerr_error(cudag__lower *lw, const cudag_error *e,
                      cudag__pos fallback);

/* True if n is of type t; otherwise reports "<what> must be <t>, not <n>". */
bool cudag__want(cudag__lower *lw, const cudag__doc *n, cudag__doc_type t,
                 const char *what);

/* Checks the value of a file's `cudag:` key (the format version, 1);
 * returns CUDAG_OK, or CUDAG_EKEY after an error at the value.  One rule
 * for top-level, included and child graph files. */
int cudag__check_version(cudag__lower *lw, const cudag__doc *v);

/* True when key k is a valid name (cudag__is_ident) of a `what`
 * ("variable", "kernel", ...); otherwise reports why not. */
bool cudag__name_ok(cudag__lower *lw, const cudag__doc *k, const char *what);

/* True for a key starting "x-": free for the user, ignored everywhere. */
bool cudag__free_key(const cudag__doc *k);

/* Reports each key of map not in allowed[] (keys starting "x-" are free),
 * with a suggestion.  Returns the number of unknown keys. */
unsigned cudag__check_keys(cudag__lower *lw, const cudag__doc *map,
                           const char *const *allowed, size_t n,
                           const char *what);

/* Evaluates a scalar node as an integer expression in scope env.  Returns
 * CUDAG__EBAD, with nothing reported, where it names a variable that was
 * reported wrong. */
int cudag__eval(cudag__lower *lw, const cudag__doc *n,
                const cudag__binding *env, int64_t *out);

/* A YAML boolean scalar (true/false, yes/no, on/off): returns true and sets
 * *out if n is one. */
bool cudag__parse_bool(const cudag__doc *n, bool *out);

/* Evaluates a scalar node as an expression in double precision, for a
 * floating-point value (an f32 argument, a memset of an f16 buffer): every
 * number and variable is a double from the start, so 1/H is not 0. */
int cudag__eval_float(cudag__lower *lw, const cudag__doc *n,
                      const cudag__binding *env, double *out);

/* The scope expressions of lw are evaluated in: its graph's variables, the
 * repetition indices env, and the variables reported wrong. */
cudag__scope cudag__scope_of(const cudag__lower *lw, const cudag__binding *env);

/* Records that declaration `name` of namespace ns was reported wrong and
 * left out; name must outlive lowering (document text or lw's arenas).
 * Running out of memory only loses the record (a later use may then be
 * reported as unknown). */
void cudag__mark_bad(cudag__lower *lw, cudag__ns ns, const char *name);

/* True when `name` of namespace ns was reported wrong. */
bool cudag__is_bad(const cudag__lower *lw, cudag__ns ns, const char *name);

/* Parses a number written as a float (1e-5, -0.5, 2.0, inf is refused).
 * Returns true and sets *out if s is one. */
bool cudag__parse_float(const char *s, size_t len, double *out);

/* [A-Za-z0-9_]. */
bool cudag__is_alnum(char c);

/* The index of the first character at or after i in s[0..len) that is not a
 * space or tab. */
size_t cudag__skip_ws(const char *s, size_t i, size_t len);

/* The end of the name starting at s[i] (i itself when none starts there). */
size_t cudag__ident_end(const char *s, size_t i, size_t len);

/* Calls fn(ctx, name) on each name of a variable in the expression
 * s[0..len) (not those of functions: `min(`) until it returns true;
 * returns whether one did. */
bool cudag__each_name(const char *s, size_t len,
                      bool (*fn)(void *ctx, const char *name), void *ctx);

/* Of names[0..n), the likely typo of word, or NULL (cudag__suggest). */
const char *cudag__suggest_from(const char *word, const char *const *names,
                                size_t n);

/* A suggestion among the names of one namespace (an array of structs whose
 * name is at name_off), gathered on the error path only; a large namespace
 * is searched for the first few errors only.  NULL when none. */
const char *cudag__suggest_in(cudag__lower *lw, const void *arr, uint32_t n,
                              size_t stride, size_t name_off,
                              const char *word);

#define CUDAG__SUGGEST(lw, arr, n, T, word)                                    \
    cudag__suggest_in((lw), (lw)->g->arr, (lw)->g->n, sizeof(T),               \
                      offsetof(T, name), (word))
#define cudag__suggest_node(lw, w)                                             \
    CUDAG__SUGGEST(lw, nodes, nnodes, cudag__node, w)
#define cudag__suggest_buffer(lw, w)                                           \
    CUDAG__SUGGEST(lw, buffers, nbuffers, cudag__buffer, w)
#define cudag__suggest_sig(lw, w) CUDAG__SUGGEST(lw, sigs, nsigs, cudag__sig, w)

/* Reports `word` (at pos), which is no type of cudag's, and returns
 * CUDAG_ETYPE: "unknown type 'W'" for a kernel parameter, or, element, "'W'
 * is not an element type" for a buffer; with the cudag word for a C or
 * array-library spelling ('float*' → ptr, or f32 for a buffer's elements;
 * 'int' → i32, 'double' → f64, 'fp16' → f16) or else a likely typo, and the
 * list of the valid words. */
int cudag__bad_type(cudag__lower *lw, cudag__pos pos, const char *word,
                    bool element);

/* The three printf arguments of " (did you mean 'X'?)", or of nothing when
 * best is NULL, for a "%s%s%s". */
#define CUDAG__DYM(best)                                                       \
    (best) ? " (did you mean '" : "", (best) ? (best) : "",                    \
        (best) ? "'?)" : ""

/* "buf", "buf + expr" or "buf+expr": a buffer and an element offset.
 * Returns false (nothing reported) when the text does not start with a
 * buffer name; otherwise true, with *rc the status of the offset (reported
 * when it is bad), or CUDAG__EBAD (unreported) for a buffer reported wrong. */
bool cudag__buffer_ref(cudag__lower *lw, const cudag__doc *sc,
                       const cudag__binding *env, uint32_t *buf,
                       uint64_t *offset, int *rc);

/* The name at the start of scalar v's text (after spaces), cut to
 * CUDAG__MAX_NAME bytes, into name[]; returns its length (0 for none) and
 * sets *at to where it starts. */
size_t cudag__leading_name(const cudag__doc *v, char name[CUDAG__MAX_NAME + 1],
                           size_t *at);

/* The target of a memset or memcpy (`what` is the key: "memset", "from"):
 * BUF [+ OFF].  Returns false after reporting what is wrong. */
bool cudag__buffer_target(cudag__lower *lw, const cudag__doc *v,
                          const cudag__binding *env, const char *what,
                          uint32_t *buf, uint64_t *off);

/* A node's `count` (at least 1), or dflt when count is NULL or wrong (then
 * reported). */
void cudag__lower_count(cudag__lower *lw, const cudag__pending *p,
                        const cudag__doc *count, uint64_t dflt, uint64_t *out);

#endif /* CUDAG_FRONT_H */
