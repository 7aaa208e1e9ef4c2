/* nodes.c — the `nodes` and `edges` sections: repetition and groups, node
 * bodies (kernel, memset, memcpy), arguments, and references to other nodes.
 *
 * Two passes: the first walks every file's `nodes` and creates each node
 * (so its full name is known), the second lowers each node's body, so that
 * an edge may name a node defined later or in another file.
 *
 * References:  ref := part ('.' part)*    part := NAME ('[' expr ']')*
 * are looked up in the writer's innermost group instance first, then outward
 * (docs/language.md, "Name lookup").
 */
#include "front.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- small text helpers ---------------------------------------------------- */

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_alnum(char c) { return is_alpha(c) || (c >= '0' && c <= '9'); }

static size_t skip_ws(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

static size_t ident_end(const char *s, size_t i, size_t len)
{
    if (i >= len || !is_alpha(s[i]))
        return i;
    while (i < len && is_alnum(s[i]))
        i++;
    return i;
}

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

static const char *suggest_from(const char *word, const char *const *names,
                                size_t n)
{
    return n ? cudag__suggest(word, names, n) : NULL;
}

/* A suggestion among the names of one namespace (an array of structs whose
 * name is at name_off), gathered on the error path only. */
static const char *suggest_in(cudag__lower *lw, const void *arr, uint32_t n,
                              size_t stride, size_t name_off, const char *word)
{
    /* A repeated mistake in a 100 000-node graph would otherwise search
     * every node once per report: the first few errors get the search. */
    if (n > 4096 && lw->big_searches++ >= 4)
        return NULL;
    const char **names = cudag__malloc((n + 1) * sizeof *names);
    if (!names)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        names[i] = *(const char *const *)((const char *)arr + i * stride +
                                          name_off);
    const char *best = suggest_from(word, names, n);
    cudag__free(names);
    return best;
}

#define SUGGEST(lw, arr, n, T, word)                                            \
    suggest_in((lw), (lw)->g->arr, (lw)->g->n, sizeof(T), offsetof(T, name),    \
               (word))
#define suggest_node(lw, w) SUGGEST(lw, nodes, nnodes, cudag__node, w)
#define suggest_buffer(lw, w) SUGGEST(lw, buffers, nbuffers, cudag__buffer, w)
#define suggest_sig(lw, w) SUGGEST(lw, sigs, nsigs, cudag__sig, w)

#define DYM(best) (best) ? " (did you mean '" : "", (best) ? (best) : "", \
                  (best) ? "'?)" : ""

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
    size_t e = ident_end(s, 0, len);
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
    size_t i = skip_ws(s, e + 1, len - 1);
    size_t ve = ident_end(s, i, len - 1);
    size_t in = skip_ws(s, ve, len - 1);
    if (ve == i || ve - i > CUDAG__MAX_NAME || in + 2 > len - 1 ||
        s[in] != 'i' || s[in + 1] != 'n' || (in + 2 < len - 1 && is_alnum(s[in + 2])))
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
    cudag__scope sc = {lw->g, env};
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

static const char *const kernel_keys[] = {"kernel", "grid", "block", "smem",
                                          "args", "after"};
static const char *const memset_keys[] = {"memset", "value", "count", "after"};
static const char *const memcpy_keys[] = {"memcpy", "from", "count", "after"};
static const char *const any_node_keys[] = {
    "kernel", "memset", "memcpy", "grid", "block", "smem",
    "args", "after", "value", "from", "count"};
#define NKEYS(a) (sizeof(a) / sizeof *(a))

/* A mapping is a node when it says what it runs; it is a group when none of
 * its keys looks like a node's, so that a typo ("kernal:") gets a node error
 * with a suggestion rather than an odd group. */
static bool looks_like_node(const cudag__doc *v)
{
    for (uint32_t i = 0; i < v->n; i++) {
        const char *k = v->items[2 * i]->str;
        for (size_t j = 0; j < NKEYS(any_node_keys); j++)
            if (strcmp(k, any_node_keys[j]) == 0)
                return true;
        if (v->items[2 * i + 1]->type == CUDAG__DOC_SCALAR &&
            cudag__suggest(k, any_node_keys, 3))
            return true;
    }
    return false;
}

typedef struct walk {
    unsigned rdepth;            /* repetitions around this level */
    uint64_t instances;         /* nodes and groups made, against the limit */
    uint64_t lowered;           /* YAML nodes the bodies will lower, copies
                                   included: bounds the second pass */
} walk;

static int add_instance(cudag__lower *lw, walk *w, const cudag__doc *k,
                        const cudag__doc *v, const char *full,
                        const cudag__binding *env, const char *prefix,
                        uint32_t group);

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
        if (parse_key(lw, k, env, &blen, &r) != CUDAG_OK)
            continue;
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
        if (v->type == CUDAG__DOC_MAP && looks_like_node(v)) {
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
    if (v->type != CUDAG__DOC_MAP)
        return cudag__lerr(lw, CUDAG_EKEY, v->pos,
                           "node '%s' must be a mapping (a kernel, memset or "
                           "memcpy node, or a group of nodes), not %s",
                           full, cudag__doc_what(v));
    cudag_error e;
    if (!looks_like_node(v)) {
        uint32_t gi;
        if (cudag__add_group(lw->g, full, group, &gi, &e) != CUDAG_OK)
            return cudag__lerr(lw, e.code, k->pos, "%s", e.message);
        char *inner = cudag__arena_cat(&lw->scratch, full, strlen(full), ".", 1);
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

/* Resolves the reference text s[0..len) at pos (a scalar whose text starts
 * at s), written inside a node called `self` in group prefix `prefix`. */
static int resolve(cudag__lower *lw, const cudag__doc *sc, size_t off,
                   size_t len, const char *prefix, const cudag__binding *env,
                   const char *self, uint32_t *out)
{
    const char *s = sc->str + off;
    part parts[MAX_PARTS];
    unsigned np = 0;
    size_t i = skip_ws(s, 0, len);
    size_t end = len;
    while (end > i && (s[end - 1] == ' ' || s[end - 1] == '\t'))
        end--;
    cudag__scope scope = {lw->g, env};
    for (;;) {
        size_t e = ident_end(s, i, end);
        if (e == i || np == MAX_PARTS) {
            cudag__lerr(lw, CUDAG_EKEY, cudag__doc_pos_at(sc, off + i),
                        np == MAX_PARTS ? "reference has too many parts"
                                        : "expected a node name");
            return REF_ERROR;
        }
        part *p = &parts[np++];
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
            break;
        if (s[i] != '.') {
            cudag__lerr(lw, CUDAG_EKEY, cudag__doc_pos_at(sc, off + i),
                        "unexpected '%c' in a node name", s[i]);
            return REF_ERROR;
        }
        i++;
    }

    /* Try the writer's group instance, then each enclosing one. */
    size_t plen = strlen(prefix);
    char name[CUDAG__MAX_FULL_NAME + 64];
    for (;;) {
        size_t n = plen < sizeof name ? plen : 0;
        memcpy(name, prefix, n);
        bool fits = true;
        for (unsigned j = 0; j < np && fits; j++) {
            const part *p = &parts[j];
            if (n + p->len + 2 >= sizeof name) {
                fits = false;
                break;
            }
            memcpy(name + n, s + p->off, p->len);
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
                                    cudag__doc_pos_at(sc, off + p->idx_off[x]),
                                    "index %lld is out of range for '%s' "
                                    "(%lld..%lld)",
                                    (long long)p->idx[x], name,
                                    (long long)rg->lo, (long long)rg->hi);
                        return REF_ERROR;
                    }
                }
                if (n + 24 >= sizeof name) {
                    fits = false;
                    break;
                }
                n += put_index(name + n, p->idx[x]);
            }
            if (j + 1 < np && fits)
                name[n++] = '.';
            name[n] = '\0';
        }
        uint32_t node = fits ? cudag__find_node(lw->g, name) : CUDAG__NONE;
        if (node != CUDAG__NONE) {
            *out = node;
            return REF_FOUND;
        }
        if (plen == 0)
            break;
        /* Drop the innermost group: "a[1].b[2]." → "a[1]." → "". */
        size_t cut = plen - 1;
        while (cut > 0 && prefix[cut - 1] != '.')
            cut--;
        plen = cut;
    }
    /* Not found anywhere: name it as written, fully evaluated, at the top. */
    size_t n = 0;
    for (unsigned j = 0; j < np && n < sizeof name - 32; j++) {
        n += (size_t)snprintf(name + n, sizeof name - n, "%s%.*s",
                              j ? "." : "", (int)parts[j].len, s + parts[j].off);
        for (unsigned x = 0; x < parts[j].nidx && n < sizeof name - 24; x++)
            n += (size_t)snprintf(name + n, sizeof name - n, "[%lld]",
                                  (long long)parts[j].idx[x]);
    }
    const char *best = suggest_node(lw, name);
    if (!best && *prefix) {
        char full[sizeof name * 2];
        snprintf(full, sizeof full, "%s%s", prefix, name);
        best = suggest_node(lw, full);
    }
    cudag__lerr(lw, CUDAG_EUNKNOWN, cudag__doc_pos_at(sc, off + skip_ws(s, 0, len)),
                "unknown node '%s'%s%s%s", name, DYM(best));
    return REF_ERROR;
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
                    k->str, DYM(best));
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
        const cudag__doc *it = after->type == CUDAG__DOC_SEQ ? after->items[i] : after;
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

/* ---- arguments -------------------------------------------------------------- */

/* "buf", "buf + expr" or "buf+expr": a buffer and an element offset.  Returns
 * false (nothing reported) when the text does not start with a buffer name. */
static bool buffer_ref(cudag__lower *lw, const cudag__doc *sc,
                       const cudag__binding *env, uint32_t *buf,
                       uint64_t *offset, int *rc)
{
    const char *s = sc->str;
    size_t i = skip_ws(s, 0, sc->len);
    size_t e = ident_end(s, i, sc->len);
    if (e == i || e - i > CUDAG__MAX_NAME)
        return false;
    char name[CUDAG__MAX_NAME + 1];
    memcpy(name, s + i, e - i);
    name[e - i] = '\0';
    uint32_t b = cudag__find_buffer(lw->g, name);
    if (b == CUDAG__NONE)
        return false;
    *buf = b;
    *offset = 0;
    *rc = CUDAG_OK;
    size_t j = skip_ws(s, e, sc->len);
    if (j == sc->len)
        return true;
    if (s[j] != '+') {
        *rc = cudag__lerr(lw, CUDAG_EEXPR, cudag__doc_pos_at(sc, j),
                          "after buffer '%s' only '+ OFFSET' (in elements) "
                          "may follow",
                          name);
        return true;
    }
    int64_t off;
    cudag__scope scope = {lw->g, env};
    size_t x = skip_ws(s, j + 1, sc->len);
    *rc = cudag__expr_eval(s + x, sc->len - x, cudag__doc_pos_at(sc, x),
                           &scope, lw->d, &off);
    if (*rc == CUDAG_OK && off < 0)
        *rc = cudag__lerr(lw, CUDAG_ERANGE, cudag__doc_pos_at(sc, x),
                          "a buffer offset must not be negative (%lld)",
                          (long long)off);
    if (*rc == CUDAG_OK)
        *offset = (uint64_t)off;
    return true;
}

static int lower_arg(cudag__lower *lw, const cudag__doc *v,
                     const cudag__binding *env, cudag_type want,
                     cudag__arg *a)
{
    a->pos = v->pos;
    if (v->type != CUDAG__DOC_SCALAR)
        return cudag__lerr(lw, CUDAG_EARGS, v->pos,
                           "an argument must be a scalar, not %s",
                           cudag__doc_what(v));
    int rc;
    if (buffer_ref(lw, v, env, &a->buffer, &a->offset, &rc)) {
        a->kind = CUDAG_ARG_BUFFER;
        return rc;
    }
    if (v->plain && (strcmp(v->str, "null") == 0 || strcmp(v->str, "~") == 0)) {
        a->kind = CUDAG_ARG_NULL;
        return CUDAG_OK;
    }
    if (want == CUDAG_TYPE_PTR) {
        size_t i = skip_ws(v->str, 0, v->len);
        size_t e = ident_end(v->str, i, v->len);
        char name[CUDAG__MAX_NAME + 1];
        size_t n = e - i < CUDAG__MAX_NAME ? e - i : CUDAG__MAX_NAME;
        memcpy(name, v->str + i, n);
        name[n] = '\0';
        if (n) {
            const char *best = suggest_buffer(lw, name);
            return cudag__lerr(lw, CUDAG_EUNKNOWN, cudag__doc_pos_at(v, i),
                               "unknown buffer '%s'%s%s%s", name, DYM(best));
        }
        /* A number for a pointer: lowered as an integer, the checker says
         * what is wrong with it. */
    }
    double f;
    if (cudag__parse_float(v->str, v->len, &f)) {
        a->kind = CUDAG_ARG_FLOAT;
        a->f = f;
        return CUDAG_OK;
    }
    a->kind = CUDAG_ARG_INT;
    return cudag__eval(lw, v, env, &a->i);
}

static void lower_args(cudag__lower *lw, const cudag__pending *p,
                       const cudag__doc *args, cudag__kernel *k,
                       const cudag__sig *sig)
{
    cudag_graph *g = lw->g;
    const char *self = g->nodes[p->node].name;
    k->args_pos = args ? args->pos : g->nodes[p->node].pos;
    if (!args || (args->type == CUDAG__DOC_SCALAR && args->len == 0))
        return;
    if (args->type == CUDAG__DOC_SCALAR) {
        cudag__lerr(lw, CUDAG_EARGS, args->pos,
                    "args must be a list or a mapping by parameter name");
        return;
    }
    uint32_t n = args->n;
    bool named = args->type == CUDAG__DOC_MAP;
    if (named && !sig)
        return;     /* the unknown kernel was reported already */
    if (named)
        n = sig->nparams;
    if (n > CUDAG__MAX_ARGS) {
        cudag__lerr(lw, CUDAG_ELIMIT, args->pos, "more than %u arguments",
                    CUDAG__MAX_ARGS);
        return;
    }
    cudag__arg *a = cudag__arena_alloc(&g->arena, (n + 1) * sizeof *a);
    if (!a) {
        cudag__lerr(lw, CUDAG_ENOMEM, args->pos, "out of memory");
        return;
    }
    bool ok = true;
    if (!named) {
        for (uint32_t i = 0; i < n; i++) {
            cudag_type want = sig && i < sig->nparams ? sig->types[i]
                                                      : CUDAG_TYPE_NONE;
            if (lower_arg(lw, args->items[i], p->env, want, &a[i]) != CUDAG_OK)
                ok = false;
        }
    } else {
        bool *seen = cudag__calloc(n + 1, sizeof *seen);
        if (!seen) {
            cudag__lerr(lw, CUDAG_ENOMEM, args->pos, "out of memory");
            return;
        }
        for (uint32_t i = 0; i < args->n; i++) {
            const cudag__doc *key = args->items[2 * i];
            if (cudag__free_key(key))
                continue;
            uint32_t j = 0;
            while (j < n && strcmp(sig->pnames[j], key->str) != 0)
                j++;
            if (j == n) {
                const char *best = suggest_from(key->str, sig->pnames, n);
                cudag__lerr(lw, CUDAG_EARGS, key->pos,
                            "kernel '%s' has no parameter '%s'%s%s%s",
                            sig->name, key->str, DYM(best));
                ok = false;
                continue;
            }
            seen[j] = true;
            if (lower_arg(lw, args->items[2 * i + 1], p->env, sig->types[j],
                          &a[j]) != CUDAG_OK)
                ok = false;
        }
        for (uint32_t j = 0; j < n && ok; j++)
            if (!seen[j]) {
                cudag__lerr(lw, CUDAG_EARGS, args->pos,
                            "node '%s': missing argument '%s' (%s) of kernel "
                            "'%s'",
                            self, sig->pnames[j], cudag_type_name(sig->types[j]),
                            sig->name);
                ok = false;
            }
        cudag__free(seen);
    }
    if (ok) {
        k->args = a;
        k->nargs = n;
    } else {
        /* Errors were reported, and a graph with lowering errors is never
         * checked, so the node is left without arguments. */
        k->args = NULL;
        k->nargs = 0;
    }
}

/* grid/block: EXPR or [X, Y, Z] with 1 to 3 entries. */
static int lower_dims(cudag__lower *lw, const cudag__doc *v,
                      const cudag__binding *env, const char *what,
                      int64_t out[3])
{
    out[0] = out[1] = out[2] = 1;
    if (v->type == CUDAG__DOC_SCALAR)
        return cudag__eval(lw, v, env, &out[0]);
    if (v->type != CUDAG__DOC_SEQ || v->n < 1 || v->n > 3)
        return cudag__lerr(lw, CUDAG_EKEY, v->pos,
                           "%s must be a number or a list of 1 to 3 numbers",
                           what);
    for (uint32_t i = 0; i < v->n; i++) {
        int rc = cudag__eval(lw, v->items[i], env, &out[i]);
        if (rc != CUDAG_OK)
            return rc;
    }
    return CUDAG_OK;
}

static void lower_kernel(cudag__lower *lw, const cudag__pending *p)
{
    cudag__node *n = &lw->g->nodes[p->node];
    const cudag__doc *b = p->body;
    n->kind = CUDAG_NODE_KERNEL;
    cudag__kernel *k = &n->u.k;
    const cudag__doc *kern = cudag__doc_get(b, "kernel");
    const cudag__doc *grid = cudag__doc_get(b, "grid");
    const cudag__doc *block = cudag__doc_get(b, "block");
    const cudag__doc *smem = cudag__doc_get(b, "smem");
    const cudag__sig *sig = NULL;
    k->sig = CUDAG__NONE;
    k->sig_pos = kern->pos;
    if (cudag__want(lw, kern, CUDAG__DOC_SCALAR, "kernel")) {
        k->sig = cudag__find_sig(lw->g, kern->str);
        if (k->sig == CUDAG__NONE) {
            const char *best = suggest_sig(lw, kern->str);
            cudag__lerr(lw, CUDAG_EUNKNOWN, kern->pos, "unknown kernel '%s'%s%s%s",
                        kern->str, DYM(best));
        } else {
            sig = &lw->g->sigs[k->sig];
        }
    }
    if (!grid || !block)
        cudag__lerr(lw, CUDAG_EKEY, n->pos, "kernel node '%s' needs '%s'",
                    n->name, grid ? "block" : "grid");
    if (grid) {
        k->grid_pos = grid->pos;
        lower_dims(lw, grid, p->env, "grid", k->grid);
    }
    if (block) {
        k->block_pos = block->pos;
        lower_dims(lw, block, p->env, "block", k->block);
    }
    if (smem) {
        k->smem_pos = smem->pos;
        cudag__eval(lw, smem, p->env, &k->smem);
    }
    lower_args(lw, p, cudag__doc_get(b, "args"), k, sig);
}

/* memset: BUF [+ OFF]  /  memcpy: BUF [+ OFF], from: BUF [+ OFF] */
static bool target(cudag__lower *lw, const cudag__doc *v,
                   const cudag__binding *env, const char *what, uint32_t *buf,
                   uint64_t *off)
{
    if (!cudag__want(lw, v, CUDAG__DOC_SCALAR, what))
        return false;
    int rc;
    if (buffer_ref(lw, v, env, buf, off, &rc))
        return rc == CUDAG_OK;
    size_t i = skip_ws(v->str, 0, v->len);
    size_t e = ident_end(v->str, i, v->len);
    char name[CUDAG__MAX_NAME + 1];
    size_t n = e - i < CUDAG__MAX_NAME ? e - i : CUDAG__MAX_NAME;
    memcpy(name, v->str + i, n);
    name[n] = '\0';
    const char *best = n ? suggest_buffer(lw, name) : NULL;
    cudag__lerr(lw, CUDAG_EUNKNOWN, cudag__doc_pos_at(v, i),
                "%s needs a buffer, and '%s' is none%s%s%s", what,
                n ? name : v->str, DYM(best));
    return false;
}

static void lower_count(cudag__lower *lw, const cudag__pending *p,
                        const cudag__doc *count, uint64_t dflt, uint64_t *out)
{
    *out = dflt;
    int64_t c;
    if (!count || cudag__eval(lw, count, p->env, &c) != CUDAG_OK)
        return;
    if (c < 1) {
        cudag__lerr(lw, CUDAG_ERANGE, count->pos,
                    "count must be at least 1, not %lld", (long long)c);
        return;
    }
    *out = (uint64_t)c;
}

static void lower_memset(cudag__lower *lw, const cudag__pending *p)
{
    cudag__node *n = &lw->g->nodes[p->node];
    const cudag__doc *b = p->body;
    n->kind = CUDAG_NODE_MEMSET;
    cudag__memset *m = &n->u.set;
    m->buffer = CUDAG__NONE;
    if (!target(lw, cudag__doc_get(b, "memset"), p->env, "memset", &m->buffer,
                &m->offset))
        return;
    const cudag__buffer *buf = &lw->g->buffers[m->buffer];
    uint64_t rest = m->offset < buf->count ? buf->count - m->offset : 0;
    lower_count(lw, p, cudag__doc_get(b, "count"), rest, &m->count);
    const cudag__doc *value = cudag__doc_get(b, "value");
    if (!value) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos, "memset node '%s' needs 'value'",
                    n->name);
        return;
    }
    m->value_pos = value->pos;
    int64_t iv;
    if (value->type == CUDAG__DOC_SCALAR &&
        cudag__parse_float(value->str, value->len, &m->value))
        return;
    if (cudag__eval(lw, value, p->env, &iv) == CUDAG_OK)
        m->value = (double)iv;
}

static void lower_memcpy(cudag__lower *lw, const cudag__pending *p)
{
    cudag__node *n = &lw->g->nodes[p->node];
    const cudag__doc *b = p->body;
    n->kind = CUDAG_NODE_MEMCPY;
    cudag__memcpy *m = &n->u.cpy;
    const cudag__doc *from = cudag__doc_get(b, "from");
    if (!from) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos, "memcpy node '%s' needs 'from'",
                    n->name);
        return;
    }
    m->dst = m->src = CUDAG__NONE;
    if (!target(lw, cudag__doc_get(b, "memcpy"), p->env, "memcpy", &m->dst,
                &m->dst_offset) ||
        !target(lw, from, p->env, "from", &m->src, &m->src_offset))
        return;
    const cudag__buffer *src = &lw->g->buffers[m->src];
    uint64_t rest = m->src_offset < src->count ? src->count - m->src_offset : 0;
    lower_count(lw, p, cudag__doc_get(b, "count"), rest, &m->count);
}

/* Which kind of node a body describes, after checking its keys; -1 (and
 * reported) when they are wrong. */
static int body_kind(cudag__lower *lw, const cudag__pending *p)
{
    const cudag__doc *b = p->body;
    if (b == lw->shaped)
        return (int)lw->shaped_kind;
    const cudag__node *n = &lw->g->nodes[p->node];
    bool is_k = cudag__doc_get(b, "kernel") != NULL;
    bool is_s = cudag__doc_get(b, "memset") != NULL;
    bool is_c = cudag__doc_get(b, "memcpy") != NULL;
    if (is_k + is_s + is_c > 1) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos,
                    "node '%s' has more than one of 'kernel', 'memset' and "
                    "'memcpy'",
                    n->name);
        return -1;
    }
    if (!is_k && !is_s && !is_c) {
        unsigned bad = cudag__check_keys(lw, b, any_node_keys,
                                         NKEYS(any_node_keys), "a node");
        if (!bad)
            cudag__lerr(lw, CUDAG_EKEY, n->pos,
                        "node '%s' needs one of 'kernel', 'memset' or 'memcpy'",
                        n->name);
        return -1;
    }
    cudag_node_kind kind = is_k ? CUDAG_NODE_KERNEL
                           : is_s ? CUDAG_NODE_MEMSET : CUDAG_NODE_MEMCPY;
    unsigned bad = is_k ? cudag__check_keys(lw, b, kernel_keys,
                                            NKEYS(kernel_keys), "a kernel node")
                   : is_s ? cudag__check_keys(lw, b, memset_keys,
                                              NKEYS(memset_keys), "a memset node")
                          : cudag__check_keys(lw, b, memcpy_keys,
                                              NKEYS(memcpy_keys), "a memcpy node");
    if (bad)
        return -1;
    lw->shaped = b;
    lw->shaped_kind = kind;
    return (int)kind;
}

static void lower_body(cudag__lower *lw, const cudag__pending *p)
{
    int kind = body_kind(lw, p);
    if (kind < 0)
        return;
    if (kind == CUDAG_NODE_KERNEL)
        lower_kernel(lw, p);
    else if (kind == CUDAG_NODE_MEMSET)
        lower_memset(lw, p);
    else
        lower_memcpy(lw, p);
    const cudag__doc *after = cudag__doc_get(p->body, "after");
    if (after)
        lower_after(lw, p, after);
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
    walk w = {0, 0, 0};
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
        lower_body(lw, &lw->pend[i]);
    for (uint32_t i = 0; i < src->nfiles && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *edges = cudag__doc_get(src->files[i].root, "edges");
        if (edges)
            lower_edges(lw, edges);
    }
    return lw->d->nerr ? lw->d->first_code : CUDAG_OK;
}
