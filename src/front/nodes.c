/* nodes.c — the `nodes` and `edges` sections: repetition and groups, which
 * kind a node body is (each kind reads its own body: kind.h), `after`, and
 * references to other nodes; also the front end's step for a sub-graph (a
 * conditional node's body), whose references stay inside it.
 *
 * Two passes: the first walks every file's `nodes` and creates each node
 * (so its full name is known), the second lowers each node's body, so that
 * an edge may name a node defined later or in another file.
 *
 * References:  ref := part ('.' part)*    part := NAME ('[' expr ']')*
 * are looked up in the writer's innermost group instance first, then outward
 * (docs/language.md, "Name lookup").
 */
#include "front/nodes.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "ir/graph.h"
#include "yaml/expr.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The index of the ']' matching the '[' at s[open], or len. */
static size_t match_bracket(const char *s, size_t open, size_t len)
{
    unsigned depth = 0;
    for (size_t i = open; i < len; i++) {
        if (s[i] == '[' || s[i] == '(')
            depth++;
        else if ((s[i] == ']' || s[i] == ')') && --depth == 0)
            return s[i] == ']' ? i : len;
    }
    return len;
}

/* Writes "[x]" at out (room for 24 bytes) and returns its length: names of
 * repeated nodes are made by the hundred thousand, and printf's machinery
 * was a quarter of lowering them. */
static size_t put_index(char *out, int64_t x)
{
    char digits[24];
    size_t n = 0;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t k = 0;
    out[k++] = '[';
    if (x < 0)
        out[k++] = '-';
    while (n)
        out[k++] = digits[--n];
    out[k++] = ']';
    return k;
}

/* ---- pass 1: names, groups and repetition --------------------------------- */

typedef struct repeat {
    bool on;
    char var[CUDAG__MAX_NAME + 1];
    int64_t lo, hi;
} repeat;

/* Splits a node key "name" or "name[VAR in A..B]" / "name[VAR in N]". */
static int parse_key(cudag__lower *lw, const cudag__doc *k,
                     const cudag__binding *env, size_t *base_len, repeat *r)
{
    const char *s = k->str;
    size_t len = k->len;
    size_t e = cudag__ident_end(s, 0, len);
    memset(r, 0, sizeof *r);
    *base_len = e;
    if (e > CUDAG__MAX_NAME)
        return cudag__lerr(lw, CUDAG_ELIMIT, k->pos,
                           "node name longer than %u bytes", CUDAG__MAX_NAME);
    if (e == 0)
        return cudag__lerr(lw, CUDAG_EKEY, k->pos,
                           "'%s' is not a valid node name", s);
    if (e == len)
        return CUDAG_OK;
    if (s[e] != '[' || s[len - 1] != ']')
        return cudag__lerr(lw, CUDAG_EKEY, cudag__doc_pos_at(k, e),
                           "'%s' is not a valid node name (a repeated node "
                           "is written 'name[i in 0..N]')",
                           s);
    size_t i = cudag__skip_ws(s, e + 1, len - 1);
    size_t ve = cudag__ident_end(s, i, len - 1);
    size_t in = cudag__skip_ws(s, ve, len - 1);
    if (ve == i || ve - i > CUDAG__MAX_NAME || in + 2 > len - 1 ||
        s[in] != 'i' || s[in + 1] != 'n' ||
        (in + 2 < len - 1 && cudag__is_alnum(s[in + 2])))
        return cudag__lerr(lw, CUDAG_EKEY, cudag__doc_pos_at(k, e + 1),
                           "a repetition is written '[VAR in A..B]' or "
                           "'[VAR in N]'");
    memcpy(r->var, s + i, ve - i);
    r->var[ve - i] = '\0';
    size_t a = in + 2, end = len - 1;
    /* The range's ".." is the first one outside parentheses. */
    size_t dots = end;
    unsigned depth = 0;
    for (size_t j = a; j + 1 < end; j++) {
        if (s[j] == '(')
            depth++;
        else if (s[j] == ')' && depth)
            depth--;
        else if (!depth && s[j] == '.' && s[j + 1] == '.') {
            dots = j;
            break;
        }
    }
    cudag__scope sc = cudag__scope_of(lw, env);
    int rc;
    if (dots == end) {
        r->lo = 0;
        rc = cudag__expr_eval(s + a, end - a, cudag__doc_pos_at(k, a), &sc,
                              lw->d, &r->hi);
    } else {
        rc = cudag__expr_eval(s + a, dots - a, cudag__doc_pos_at(k, a), &sc,
                              lw->d, &r->lo);
        if (rc == CUDAG_OK)
            rc = cudag__expr_eval(s + dots + 2, end - dots - 2,
                                  cudag__doc_pos_at(k, dots + 2), &sc, lw->d,
                                  &r->hi);
    }
    if (rc != CUDAG_OK)
        return rc;
    if (r->hi < r->lo)
        return cudag__lerr(lw, CUDAG_ERANGE, cudag__doc_pos_at(k, a),
                           "empty range %lld..%lld (the end comes first)",
                           (long long)r->lo, (long long)r->hi);
    if ((uint64_t)(r->hi - r->lo) > CUDAG__MAX_NODES)
        return cudag__lerr(lw, CUDAG_ELIMIT, cudag__doc_pos_at(k, a),
                           "%lld copies is more than the %u nodes a graph may "
                           "have",
                           (long long)(r->hi - r->lo), CUDAG__MAX_NODES);
    r->on = true;
    return CUDAG_OK;
}

#define NKEYS(a) (sizeof(a) / sizeof *(a))

/* Every key a node body may have, each once: the kinds' names first, then
 * their other keys in table order. */
typedef struct node_keys {
    const char *key[64];
    size_t n, nnames;
} node_keys;

/* The keys that select kind k: its select list, or its name. */
static const char *const *selectors(const cudag__kind_ops *k, size_t *n)
{
    /* A kind only the C API makes (no YAML form) has none. */
    *n = !k->read_yaml ? 0 : k->select ? k->nselect : 1;
    return k->select ? k->select : &k->name;
}

static void gather_keys(node_keys *nk)
{
    size_t nkinds;
    const cudag__kind_ops *const *kinds = cudag__kinds(&nkinds);
    nk->n = 0;
    for (size_t i = 0; i < nkinds; i++) {
        size_t ns;
        const char *const *sel = selectors(kinds[i], &ns);
        for (size_t j = 0; j < ns && nk->n < NKEYS(nk->key); j++)
            nk->key[nk->n++] = sel[j];
    }
    nk->nnames = nk->n;
    for (size_t i = 0; i < nkinds; i++)
        for (size_t j = 0; kinds[i]->read_yaml && j < kinds[i]->nkeys; j++) {
            const char *k = kinds[i]->keys[j];
            size_t m = 0;
            while (m < nk->n && strcmp(nk->key[m], k) != 0)
                m++;
            if (m == nk->n && nk->n < NKEYS(nk->key))
                nk->key[nk->n++] = k;
        }
}

/* "'kernel', 'memset', …  or 'switch'" (quoted) or "kernel, memset, … or
 * switch": the keys that select a kind, joined for a message, the last pair
 * by `conj`. */
static const char *kind_names(const node_keys *nk, char *buf, size_t cap,
                              bool quoted, const char *conj)
{
    size_t len = 0;
    const char *q = quoted ? "'" : "";
    buf[0] = '\0';
    for (size_t i = 0; i < nk->nnames && len < cap; i++) {
        const char *sep = i == 0 ? "" : i + 1 < nk->nnames ? ", " : conj;
        int n = snprintf(buf + len, cap - len, "%s%s%s%s", sep, q,
                         nk->key[i], q);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return buf;
}

/* A mapping is a node when it says what it runs; it is a group when none of
 * its keys looks like a node's, so that a typo ("kernal:") gets a node error
 * with a suggestion rather than an odd group. */
static bool looks_like_node(const node_keys *nk, const cudag__doc *v)
{
    for (uint32_t i = 0; i < v->n; i++) {
        const char *k = v->items[2 * i]->str;
        for (size_t j = 0; j < nk->n; j++)
            if (strcmp(k, nk->key[j]) == 0)
                return true;
        if (v->items[2 * i + 1]->type == CUDAG__DOC_SCALAR &&
            cudag__suggest(k, nk->key, nk->nnames))
            return true;
    }
    return false;
}

typedef struct walk {
    const node_keys *nk;
    unsigned rdepth;            /* repetitions around this level */
    uint64_t instances;         /* nodes and groups made, against the limit */
    uint64_t lowered;           /* YAML nodes the bodies will lower, copies
                                   included: bounds the second pass */
} walk;

static int add_instance(cudag__lower *lw, walk *w, const cudag__doc *k,
                        const cudag__doc *v, const char *full,
                        const cudag__binding *env, const char *prefix,
                        uint32_t group);

/* Marks a node key that was reported wrong (or whose range names a bad
 * variable): its full text and its base name within prefix, so that
 * references to it, or to copies of it, say nothing more. */
static void mark_bad_key(cudag__lower *lw, const char *prefix,
                         const cudag__doc *k)
{
    size_t pl = strlen(prefix);
    size_t e = cudag__ident_end(k->str, 0, k->len);
    const char *whole = cudag__arena_cat(&lw->scratch, prefix, pl, k->str,
                                         k->len);
    const char *base = cudag__arena_cat(&lw->scratch, prefix, pl, k->str, e);
    if (whole)
        cudag__mark_bad(lw, CUDAG__NS_NODE, whole);
    if (base && e)
        cudag__mark_bad(lw, CUDAG__NS_NODE, base);
}

static void walk_nodes(cudag__lower *lw, walk *w, const cudag__doc *map,
                       const char *prefix, const cudag__binding *env,
                       uint32_t group)
{
    for (uint32_t i = 0; i < map->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = map->items[2 * i], *v = map->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        size_t blen;
        repeat r;
        if (parse_key(lw, k, env, &blen, &r) != CUDAG_OK) {
            mark_bad_key(lw, prefix, k);
            continue;
        }
        char *base = cudag__arena_cat(&lw->scratch, prefix, strlen(prefix),
                                      k->str, blen);
        if (!base) {
            cudag__lerr(lw, CUDAG_ENOMEM, k->pos, "out of memory");
            return;
        }
        if (!r.on) {
            add_instance(lw, w, k, v, base, env, prefix, group);
            continue;
        }
        if (w->rdepth >= CUDAG__MAX_REPEAT_DEPTH) {
            cudag__lerr(lw, CUDAG_ELIMIT, k->pos,
                        "repetitions nested deeper than %u",
                        CUDAG__MAX_REPEAT_DEPTH);
            continue;
        }
        uint32_t ri;
        if (cudag__map_get(&lw->range_map, base, NULL)) {
            cudag__lerr(lw, CUDAG_EDUP, k->pos, "duplicate node '%s'", base);
            continue;
        }
        cudag__range *rg = cudag__vec_push((void **)&lw->ranges, &lw->nranges,
                                           &lw->cranges, sizeof *rg);
        ri = lw->nranges - 1;
        if (!rg || cudag__map_put(&lw->range_map, base, ri) != CUDAG_OK) {
            cudag__lerr(lw, CUDAG_ENOMEM, k->pos, "out of memory");
            return;
        }
        rg->lo = r.lo;
        rg->hi = r.hi;
        const char *var = cudag__arena_strdup(&lw->scratch, r.var);
        /* Copies of one repeated node share a group, so DOT draws them as
         * one cluster; copies of a repeated group are groups already. */
        uint32_t copies = group;
        if (v->type == CUDAG__DOC_MAP && looks_like_node(w->nk, v)) {
            cudag_error e;
            if (cudag__add_group(lw->g, base, group, &copies, &e) != CUDAG_OK) {
                cudag__lerr(lw, e.code, k->pos, "%s", e.message);
                return;
            }
        }
        /* The copies of one node are known in number: their names go into
         * the map without rehashing on the way.  A range past the node
         * limit reserves nothing; the limit is reported as copies are
         * added. */
        if (copies != group && r.hi > r.lo &&
            r.hi - r.lo <= CUDAG__MAX_NODES - lw->g->nnodes &&
            cudag__map_reserve(&lw->g->node_map,
                               lw->g->nnodes + (uint32_t)(r.hi - r.lo)) !=
                CUDAG_OK) {
            cudag__lerr(lw, CUDAG_ENOMEM, k->pos, "out of memory");
            return;
        }
        w->rdepth++;
        for (int64_t x = r.lo; x < r.hi && !cudag__diag_full(lw->d); x++) {
            cudag__binding *b = cudag__arena_alloc(&lw->scratch, sizeof *b);
            size_t bl = strlen(base);
            char *full = cudag__arena_alloc(&lw->scratch, bl + 24);
            if (full) {
                memcpy(full, base, bl);
                full[bl + put_index(full + bl, x)] = '\0';
            }
            if (!b || !full || !var) {
                cudag__lerr(lw, CUDAG_ENOMEM, k->pos, "out of memory");
                break;
            }
            b->name = var;
            b->value = x;
            b->up = env;
            if (add_instance(lw, w, k, v, full, b, prefix, copies) != CUDAG_OK)
                break;
        }
        w->rdepth--;
    }
}

static int add_instance(cudag__lower *lw, walk *w, const cudag__doc *k,
                        const cudag__doc *v, const char *full,
                        const cudag__binding *env, const char *prefix,
                        uint32_t group)
{
    if (++w->instances > CUDAG__MAX_NODES)
        return cudag__lerr(lw, CUDAG_ELIMIT, k->pos,
                           "more than %u nodes and groups", CUDAG__MAX_NODES);
    if (strlen(full) > CUDAG__MAX_FULL_NAME)
        return cudag__lerr(lw, CUDAG_ELIMIT, k->pos,
                           "node name longer than %u bytes",
                           CUDAG__MAX_FULL_NAME);
    char names[256];
    if (v->type != CUDAG__DOC_MAP) {
        cudag__mark_bad(lw, CUDAG__NS_NODE, full);
        /* `args:` written under `nodes:` rather than under its node is a
         * node's key indented too little, not a node. */
        for (size_t j = 0; j < w->nk->n; j++)
            if (strcmp(k->str, w->nk->key[j]) == 0)
                return cudag__lerr(lw, CUDAG_EKEY, k->pos,
                                   "'%s' is a key of a node, not a node: it "
                                   "looks like an indentation mistake (indent "
                                   "it as far as the node's other keys)",
                                   k->str);
        return cudag__lerr(lw, CUDAG_EKEY, v->pos,
                           "node '%s' must be a mapping (a %s node, or a "
                           "group of nodes), not %s",
                           full,
                           kind_names(w->nk, names, sizeof names, false,
                                      " or "),
                           cudag__doc_what(v));
    }
    cudag_error e;
    if (!looks_like_node(w->nk, v)) {
        uint32_t gi;
        if (cudag__add_group(lw->g, full, group, &gi, &e) != CUDAG_OK)
            return cudag__lerr(lw, e.code, k->pos, "%s", e.message);
        char *inner =
            cudag__arena_cat(&lw->scratch, full, strlen(full), ".", 1);
        if (!inner)
            return cudag__lerr(lw, CUDAG_ENOMEM, k->pos, "out of memory");
        walk_nodes(lw, w, v, inner, env, gi);
        return CUDAG_OK;
    }
    /* Each copy lowers its whole description again: a few bytes of
     * repetition around a big aliased list would make hours of work. */
    w->lowered += v->weight;
    if (w->lowered > CUDAG__MAX_LOWERED)
        return cudag__lerr(lw, CUDAG_ELIMIT, k->pos,
                           "the nodes' descriptions, each copy counted, add "
                           "up to more than %u YAML nodes",
                           CUDAG__MAX_LOWERED);
    cudag__node *n;
    if (cudag__add_node(lw->g, full, k->pos, &n, &e) != CUDAG_OK)
        return cudag__lerr(lw, e.code, k->pos, "%s", e.message);
    n->group = group;
    cudag__pending *p = cudag__vec_push((void **)&lw->pend, &lw->npend,
                                        &lw->cpend, sizeof *p);
    if (!p)
        return cudag__lerr(lw, CUDAG_ENOMEM, k->pos, "out of memory");
    p->g = lw->g;
    p->node = lw->g->nnodes - 1;
    p->body = v;
    p->env = env;
    p->prefix = prefix;
    p->file = lw->file;
    return CUDAG_OK;
}

/* ---- references ------------------------------------------------------------- */

enum { REF_FOUND, REF_DROPPED, REF_ERROR };

/* One component of a reference: a name and its evaluated indices. */
typedef struct part {
    size_t off, len;            /* the name, within the reference text */
    int64_t idx[CUDAG__MAX_REPEAT_DEPTH];
    size_t idx_off[CUDAG__MAX_REPEAT_DEPTH];
    unsigned nidx;
} part;

#define MAX_PARTS 32

/* A reference split into its parts, indices evaluated. */
typedef struct noderef {
    const char *s;              /* the reference text, within the scalar */
    size_t off;                 /* s - sc->str */
    part parts[MAX_PARTS];
    unsigned np;
} noderef;

/* Splits the reference text at r->s[0..len) into parts and evaluates their
 * indices in env.  REF_FOUND when it parses, else REF_ERROR (reported). */
static int parse_ref(cudag__lower *lw, const cudag__doc *sc, size_t len,
                     const cudag__binding *env, noderef *r)
{
    const char *s = r->s;
    size_t off = r->off;
    size_t i = cudag__skip_ws(s, 0, len);
    size_t end = len;
    while (end > i && (s[end - 1] == ' ' || s[end - 1] == '\t'))
        end--;
    cudag__scope scope = cudag__scope_of(lw, env);
    r->np = 0;
    for (;;) {
        size_t e = cudag__ident_end(s, i, end);
        if (e == i || r->np == MAX_PARTS) {
            cudag__lerr(lw, CUDAG_EKEY, cudag__doc_pos_at(sc, off + i),
                        r->np == MAX_PARTS ? "reference has too many parts"
                                           : "expected a node name");
            return REF_ERROR;
        }
        part *p = &r->parts[r->np++];
        p->off = i;
        p->len = e - i;
        p->nidx = 0;
        i = e;
        while (i < end && s[i] == '[') {
            size_t close = match_bracket(s, i, end);
            if (close == end || p->nidx == CUDAG__MAX_REPEAT_DEPTH) {
                cudag__lerr(lw, CUDAG_EKEY, cudag__doc_pos_at(sc, off + i),
                            "unbalanced '[' in a node name");
                return REF_ERROR;
            }
            p->idx_off[p->nidx] = i + 1;
            if (cudag__expr_eval(s + i + 1, close - i - 1,
                                 cudag__doc_pos_at(sc, off + i + 1), &scope,
                                 lw->d, &p->idx[p->nidx]) != CUDAG_OK)
                return REF_ERROR;
            p->nidx++;
            i = close + 1;
        }
        if (i == end)
            return REF_FOUND;
        if (s[i] != '.') {
            cudag__lerr(lw, CUDAG_EKEY, cudag__doc_pos_at(sc, off + i),
                        "unexpected '%.*s' in a node name",
                        cudag__char_bytes(s + i, end - i), s + i);
            return REF_ERROR;
        }
        i++;
    }
}

/* Looks the parsed reference up in group prefix[0..plen) ("a[1].b[2]."):
 * writes the full name into name[cap] and returns REF_FOUND with *out set,
 * REF_DROPPED for an index that falls off the end of the repetition `self`
 * is in, REF_ERROR for an index out of range (reported), or -1 when no node
 * has that name. */
static int lookup_in(cudag__lower *lw, const cudag__doc *sc, const noderef *r,
                     const char *prefix, size_t plen, const char *self,
                     char *name, size_t cap, uint32_t *out)
{
    size_t n = plen < cap ? plen : 0;
    memcpy(name, prefix, n);
    for (unsigned j = 0; j < r->np; j++) {
        const part *p = &r->parts[j];
        if (n + p->len + 2 >= cap)
            return -1;
        memcpy(name + n, r->s + p->off, p->len);
        n += p->len;
        name[n] = '\0';
        for (unsigned x = 0; x < p->nidx; x++) {
            /* "Falling off the end" of the repetition one is inside. */
            uint32_t ri;
            if (cudag__map_get(&lw->range_map, name, &ri)) {
                const cudag__range *rg = &lw->ranges[ri];
                if (p->idx[x] < rg->lo || p->idx[x] >= rg->hi) {
                    size_t bl = strlen(name);
                    if (strncmp(self, name, bl) == 0 && self[bl] == '[')
                        return REF_DROPPED;
                    cudag__lerr(lw, CUDAG_ERANGE,
                                cudag__doc_pos_at(sc, r->off + p->idx_off[x]),
                                "index %lld is out of range for '%s' "
                                "(%lld..%lld)",
                                (long long)p->idx[x], name, (long long)rg->lo,
                                (long long)rg->hi);
                    return REF_ERROR;
                }
            }
            if (n + 24 >= cap)
                return -1;
            n += put_index(name + n, p->idx[x]);
        }
        if (j + 1 < r->np)
            name[n++] = '.';
        name[n] = '\0';
    }
    uint32_t node = cudag__find_node(lw->g, name);
    if (node == CUDAG__NONE)
        return -1;
    *out = node;
    return REF_FOUND;
}

/* The length of the group prefix around prefix[0..plen) (not empty): the
 * innermost group dropped, "a[1].b[2]." → "a[1]." → "". */
static size_t enclosing(const char *prefix, size_t plen)
{
    size_t cut = plen - 1;
    while (cut > 0 && prefix[cut - 1] != '.')
        cut--;
    return cut;
}

/* The name of the node that holds sub-graph h. */
static const char *owner_name(const cudag_graph *h)
{
    return h->parent->nodes[h->owner].name;
}

/* A reference to node `full`, which is in graph `in` of the tree but not in
 * the graph being lowered: an edge would cross a body's border. */
static int report_elsewhere(cudag__lower *lw, cudag__pos pos, const char *full,
                            const cudag_graph *in, uint32_t node)
{
    const cudag_graph *g = lw->g;
    if (g->parent && in == g->parent && node == g->owner)
        return cudag__lerr(lw, CUDAG_EEDGE, pos,
                           "node '%s' runs this body, so nothing in the "
                           "body can wait for it",
                           full);
    if (g->parent && !cudag__graph_within(in, g))
        return cudag__lerr(lw, CUDAG_EEDGE, pos,
                           "node '%s' is outside the body of '%s': edges "
                           "stay within one body (an edge to the body goes "
                           "to '%s')",
                           full, owner_name(g), owner_name(g));
    /* Inside a body below this graph: name the outermost one. */
    const cudag_graph *b = in;
    while (b->parent != g)
        b = b->parent;
    return cudag__lerr(lw, CUDAG_EEDGE, pos,
                       "node '%s' is inside the body of '%s': edges stay "
                       "within one body (connect to '%s' instead)",
                       full, owner_name(b), owner_name(b));
}

/* Reports a reference that names no node: as written, fully evaluated,
 * with a suggestion. */
static int report_unknown(cudag__lower *lw, const cudag__doc *sc,
                          const noderef *r, size_t len, const char *prefix)
{
    char name[CUDAG__MAX_FULL_NAME + 64];
    size_t n = 0;
    for (unsigned j = 0; j < r->np && n < sizeof name - 32; j++) {
        const part *p = &r->parts[j];
        n += (size_t)snprintf(name + n, sizeof name - n, "%s%.*s",
                              j ? "." : "", (int)p->len, r->s + p->off);
        for (unsigned x = 0; x < p->nidx && n < sizeof name - 24; x++)
            n += (size_t)snprintf(name + n, sizeof name - n, "[%lld]",
                                  (long long)p->idx[x]);
    }
    cudag__pos pos =
        cudag__doc_pos_at(sc, r->off + cudag__skip_ws(r->s, 0, len));
    /* A node of another graph of the tree, tried as resolve() would. */
    const cudag_graph *root = lw->g->root;
    for (size_t plen = strlen(prefix); root->nsubs;) {
        char full[sizeof name * 2];
        snprintf(full, sizeof full, "%.*s%s", (int)plen, prefix, name);
        uint32_t at;
        const cudag_graph *in = cudag__tree_find(root, full, &at);
        if (in && in != lw->g) {
            report_elsewhere(lw, pos, full, in, at);
            return REF_ERROR;
        }
        if (plen == 0)
            break;
        plen = enclosing(prefix, plen);
    }
    const char *best = cudag__suggest_node(lw, name);
    if (!best && *prefix) {
        char full[sizeof name * 2];
        snprintf(full, sizeof full, "%s%s", prefix, name);
        best = cudag__suggest_node(lw, full);
    }
    cudag__lerr(lw, CUDAG_EUNKNOWN, pos, "unknown node '%s'%s%s%s", name,
                CUDAG__DYM(best));
    return REF_ERROR;
}

/* True when the reference text s[0..len), looked up from group prefix as
 * references are, names a node whose key was reported wrong (mark_bad_key):
 * as written, or, by_base, by its first name (a repetition that failed). */
static bool names_bad_node(cudag__lower *lw, const char *s, size_t len,
                           const char *prefix, bool by_base)
{
    if (lw->bad[CUDAG__NS_NODE].len == 0)
        return false;
    size_t i = cudag__skip_ws(s, 0, len), end = len;
    while (end > i && (s[end - 1] == ' ' || s[end - 1] == '\t'))
        end--;
    size_t first = cudag__ident_end(s, i, end);
    size_t plen = strlen(prefix);
    for (;;) {
        char *whole = cudag__arena_cat(&lw->scratch, prefix, plen, s + i,
                                       end - i);
        char *base = cudag__arena_cat(&lw->scratch, prefix, plen, s + i,
                                      first - i);
        if ((whole && cudag__is_bad(lw, CUDAG__NS_NODE, whole)) ||
            (by_base && base && first > i &&
             cudag__is_bad(lw, CUDAG__NS_NODE, base)))
            return true;
        if (plen == 0)
            return false;
        size_t cut = plen - 1;
        while (cut > 0 && prefix[cut - 1] != '.')
            cut--;
        plen = cut;
    }
}

/* Resolves the reference text s[0..len) at pos (a scalar whose text starts
 * at s), written inside a node called `self` in group prefix `prefix`. */
static int resolve(cudag__lower *lw, const cudag__doc *sc, size_t off,
                   size_t len, const char *prefix, const cudag__binding *env,
                   const char *self, uint32_t *out)
{
    noderef r;
    r.s = sc->str + off;
    r.off = off;
    if (names_bad_node(lw, r.s, len, prefix, false))
        return REF_ERROR;   /* that node's mistake was reported */
    if (parse_ref(lw, sc, len, env, &r) != REF_FOUND)
        return REF_ERROR;
    /* Try the writer's group instance, then each enclosing one. */
    size_t plen = strlen(prefix);
    char name[CUDAG__MAX_FULL_NAME + 64];
    for (;;) {
        int rc = lookup_in(lw, sc, &r, prefix, plen, self, name, sizeof name,
                           out);
        if (rc >= 0)
            return rc;
        if (plen == 0)
            break;
        plen = enclosing(prefix, plen);
    }
    if (names_bad_node(lw, r.s, len, prefix, true))
        return REF_ERROR;
    return report_unknown(lw, sc, &r, len, prefix);
}

static bool parse_kind(cudag__lower *lw, const cudag__doc *k,
                       cudag_edge_kind *out)
{
    static const char *const kinds[] = {"full", "programmatic", "launch_order"};
    if (k->type == CUDAG__DOC_SCALAR) {
        for (int i = 0; i < 3; i++)
            if (strcmp(k->str, kinds[i]) == 0) {
                *out = (cudag_edge_kind)i;
                return true;
            }
        const char *best = cudag__suggest(k->str, kinds, 3);
        cudag__lerr(lw, CUDAG_EKEY, k->pos,
                    "unknown edge kind '%s'%s%s%s (full, programmatic or "
                    "launch_order)",
                    k->str, CUDAG__DYM(best));
        return false;
    }
    cudag__lerr(lw, CUDAG_EKEY, k->pos,
                "an edge kind must be a scalar, not %s", cudag__doc_what(k));
    return false;
}

static void add_edge(cudag__lower *lw, uint32_t from, uint32_t to,
                     cudag_edge_kind kind, cudag__pos pos)
{
    cudag_error e;
    if (cudag__add_edge(lw->g, from, to, kind, pos, &e) != CUDAG_OK)
        cudag__lerr(lw, e.code, pos, "%s", e.message);
}

/* after: NAME | [NAME | {NAME: KIND}, …] */
static void lower_after(cudag__lower *lw, const cudag__pending *p,
                        const cudag__doc *after)
{
    const char *self = lw->g->nodes[p->node].name;
    uint32_t n = after->type == CUDAG__DOC_SEQ ? after->n : 1;
    if (after->type == CUDAG__DOC_MAP)
        n = 1;
    for (uint32_t i = 0; i < n; i++) {
        const cudag__doc *it =
            after->type == CUDAG__DOC_SEQ ? after->items[i] : after;
        const cudag__doc *ref = it;
        cudag_edge_kind kind = CUDAG_EDGE_FULL;
        if (it->type == CUDAG__DOC_MAP) {
            if (it->n != 1) {
                cudag__lerr(lw, CUDAG_EKEY, it->pos,
                            "an entry of 'after' is a name or one "
                            "'name: kind' pair");
                continue;
            }
            ref = it->items[0];
            if (!parse_kind(lw, it->items[1], &kind))
                continue;
        } else if (it->type != CUDAG__DOC_SCALAR) {
            cudag__lerr(lw, CUDAG_EKEY, it->pos,
                        "an entry of 'after' is a name or one 'name: kind' "
                        "pair, not %s",
                        cudag__doc_what(it));
            continue;
        }
        uint32_t from;
        if (resolve(lw, ref, 0, ref->len, p->prefix, p->env, self, &from) ==
            REF_FOUND)
            add_edge(lw, from, p->node, kind, ref->pos);
    }
}

/* Which kind of node a body describes, after checking its keys; NULL (and
 * reported) when they are wrong. */
static const cudag__kind_ops *body_kind(cudag__lower *lw,
                                        const cudag__pending *p,
                                        const node_keys *nk)
{
    const cudag__doc *b = p->body;
    if (b == lw->shaped)
        return cudag__kind(lw->shaped_kind);
    const cudag__node *n = &lw->g->nodes[p->node];
    size_t nkinds, found = 0;
    const cudag__kind_ops *const *kinds = cudag__kinds(&nkinds);
    const cudag__kind_ops *kind = NULL;
    for (size_t i = 0; i < nkinds; i++) {
        size_t ns;
        const char *const *sel = selectors(kinds[i], &ns);
        size_t j = 0;
        while (j < ns && !cudag__doc_get(b, sel[j]))
            j++;
        if (j < ns) {
            kind = kinds[i];
            found++;
        }
    }
    char names[256];
    if (found > 1) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos,
                    "node '%s' has more than one of %s", n->name,
                    kind_names(nk, names, sizeof names, true, " and "));
        return NULL;
    }
    if (!kind) {
        unsigned bad = cudag__check_keys(lw, b, nk->key, nk->n, "a node");
        if (!bad)
            cudag__lerr(lw, CUDAG_EKEY, n->pos, "node '%s' needs one of %s",
                        n->name,
                        kind_names(nk, names, sizeof names, true, " or "));
        return NULL;
    }
    if (cudag__check_keys(lw, b, kind->keys, kind->nkeys, kind->what))
        return NULL;
    lw->shaped = b;
    lw->shaped_kind = kind->kind;
    return kind;
}

static void lower_body(cudag__lower *lw, uint32_t i, const node_keys *nk)
{
    /* A copy: a kind that lowers a sub-graph adds pending nodes, which may
     * move the array. */
    cudag__pending p = lw->pend[i];
    cudag_graph *outer = lw->g;
    lw->g = p.g;
    const cudag__kind_ops *kind = body_kind(lw, &p, nk);
    if (kind) {
        lw->g->nodes[p.node].kind = kind->kind;
        kind->read_yaml(lw, &p);
        const cudag__doc *after = cudag__doc_get(p.body, "after");
        if (after)
            lower_after(lw, &p, after);
    }
    lw->g = outer;
}

/* lw->lower_sub (yaml/lowering.h): both passes over a body's nodes, then its
 * pending entries are done and dropped, so that the outer pass goes on
 * where it was. */
static void lower_sub(cudag__lower *lw, cudag_graph *sub, const cudag__doc *map,
                      const cudag__binding *env)
{
    walk *w = lw->walk;
    cudag_graph *outer = lw->g;
    uint32_t first = lw->npend;
    if (++w->instances > CUDAG__MAX_NODES) {
        cudag__lerr(lw, CUDAG_ELIMIT, map->pos,
                    "more than %u nodes, groups and bodies",
                    CUDAG__MAX_NODES);
        return;
    }
    lw->g = sub;
    walk_nodes(lw, w, map, sub->prefix, env, CUDAG__NONE);
    for (uint32_t i = first; i < lw->npend && !cudag__diag_full(lw->d); i++)
        lower_body(lw, i, w->nk);
    lw->npend = first;
    lw->g = outer;
}

/* ---- the edges section ------------------------------------------------------- */

/* "a -> b -> c": edges between consecutive names. */
static void lower_chain(cudag__lower *lw, const cudag__doc *sc,
                        cudag_edge_kind kind)
{
    const char *s = sc->str;
    size_t start = 0;
    uint32_t prev = CUDAG__NONE;
    bool prev_ok = false;
    unsigned names = 0;
    for (size_t i = 0; i <= sc->len; i++) {
        bool arrow = i + 1 < sc->len && s[i] == '-' && s[i + 1] == '>';
        if (i < sc->len && !arrow)
            continue;
        uint32_t cur;
        bool ok = resolve(lw, sc, start, i - start, "", NULL, "", &cur) ==
                  REF_FOUND;
        if (ok && prev_ok)
            add_edge(lw, prev, cur, kind, cudag__doc_pos_at(sc, start));
        names++;
        prev = cur;
        prev_ok = ok;
        start = i + 2;
        i++;
    }
    if (names < 2)
        cudag__lerr(lw, CUDAG_EKEY, sc->pos,
                    "an edge is written 'a -> b' (or a chain 'a -> b -> c')");
}

static void lower_edge_map(cudag__lower *lw, const cudag__doc *it)
{
    static const char *const keys[] = {"from", "to", "kind"};
    const cudag__doc *from = cudag__doc_get(it, "from");
    if (!from) {
        /* {"a -> b": kind} */
        cudag_edge_kind kind;
        if (it->n != 1) {
            cudag__lerr(lw, CUDAG_EKEY, it->pos,
                        "an edge is 'a -> b', {'a -> b': kind} or "
                        "{from: a, to: b, kind: k}");
            return;
        }
        if (parse_kind(lw, it->items[1], &kind))
            lower_chain(lw, it->items[0], kind);
        return;
    }
    if (cudag__check_keys(lw, it, keys, 3, "an edge"))
        return;
    const cudag__doc *to = cudag__doc_get(it, "to");
    const cudag__doc *kd = cudag__doc_get(it, "kind");
    cudag_edge_kind kind = CUDAG_EDGE_FULL;
    if (!to) {
        cudag__lerr(lw, CUDAG_EKEY, it->pos, "an edge with 'from' needs 'to'");
        return;
    }
    if ((kd && !parse_kind(lw, kd, &kind)) ||
        !cudag__want(lw, from, CUDAG__DOC_SCALAR, "from"))
        return;
    uint32_t f;
    if (resolve(lw, from, 0, from->len, "", NULL, "", &f) != REF_FOUND)
        return;
    uint32_t n = to->type == CUDAG__DOC_SEQ ? to->n : 1;
    for (uint32_t i = 0; i < n; i++) {
        const cudag__doc *t = to->type == CUDAG__DOC_SEQ ? to->items[i] : to;
        uint32_t ti;
        if (cudag__want(lw, t, CUDAG__DOC_SCALAR, "to") &&
            resolve(lw, t, 0, t->len, "", NULL, "", &ti) == REF_FOUND)
            add_edge(lw, f, ti, kind, t->pos);
    }
}

static void lower_edges(cudag__lower *lw, const cudag__doc *edges)
{
    if (!cudag__want(lw, edges, CUDAG__DOC_SEQ, "edges"))
        return;
    for (uint32_t i = 0; i < edges->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *it = edges->items[i];
        if (it->type == CUDAG__DOC_SCALAR)
            lower_chain(lw, it, CUDAG_EDGE_FULL);
        else if (it->type == CUDAG__DOC_MAP)
            lower_edge_map(lw, it);
        else
            cudag__lerr(lw, CUDAG_EKEY, it->pos,
                        "an edge is 'a -> b', {'a -> b': kind} or "
                        "{from: a, to: b, kind: k}, not %s",
                        cudag__doc_what(it));
    }
}

int cudag__lower_nodes(cudag__lower *lw)
{
    cudag__source *src = lw->src;
    node_keys nk;
    gather_keys(&nk);
    walk w = {&nk, 0, 0, 0};
    lw->walk = &w;
    lw->lower_sub = lower_sub;
    for (uint32_t i = 0; i < src->nfiles && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *nodes = cudag__doc_get(src->files[i].root, "nodes");
        lw->file = i;
        if (nodes && cudag__want(lw, nodes, CUDAG__DOC_MAP, "nodes"))
            walk_nodes(lw, &w, nodes, "", NULL, CUDAG__NONE);
    }
    /* Over that bound the graph is refused: lowering the copies made so far
     * would only spend the time the bound is there to save. */
    if (w.lowered > CUDAG__MAX_LOWERED)
        return lw->d->first_code;
    for (uint32_t i = 0; i < lw->npend && !cudag__diag_full(lw->d); i++)
        lower_body(lw, i, &nk);
    for (uint32_t i = 0; i < src->nfiles && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *edges = cudag__doc_get(src->files[i].root, "edges");
        if (edges)
            lower_edges(lw, edges);
    }
    return lw->d->nerr ? lw->d->first_code : CUDAG_OK;
}
