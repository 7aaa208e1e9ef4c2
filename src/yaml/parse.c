/* parse.c — YAML text to a document tree, through libyaml's event parser.
 *
 * Accepted input: one YAML document (an empty stream is an empty file) whose
 * nodes are scalars, sequences and mappings with scalar keys.  On top of what
 * libyaml checks:
 *   - anchors and aliases: an alias shares the anchored node; an alias to a
 *     node that is still open (a recursive structure) is an error;
 *   - merge keys: `<<: *map` or `<<: [*a, *b]` in a mapping inserts the pairs
 *     of the merged mappings whose keys the mapping does not write itself,
 *     earlier merged mappings winning over later ones, at the place of `<<`;
 *   - a key written twice in one mapping is an error;
 *   - limits: file size, nesting depth, and the size of the tree with
 *     aliases expanded (a "billion laughs" file is refused in bounded memory,
 *     since nothing is copied to measure it).
 * Positions are converted from libyaml's 0-based marks here, and only here.
 */
#include "yaml/parse.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>
#include <yaml.h>

typedef struct frame {
    cudag__doc *node;
    cudag__doc **items;         /* growing children (2 per pair in a map) */
    uint32_t n, cap;
    const char *anchor;         /* anchor of this container, if any */
    bool flow;                  /* a flow sequence, [a, b] */
} frame;

typedef struct anchor {
    const char *name;
    cudag__doc *node;           /* NULL while the anchored node is open */
} anchor;

typedef struct parser {
    cudag__arena *a;
    const char *file;
    cudag__diag *d;
    frame stack[CUDAG__MAX_DEPTH + 1];
    uint32_t depth;
    anchor *anchors;
    uint32_t nanchors, canchors;
    cudag__map anchor_map;      /* anchor name → index into anchors */
    cudag__doc *root;
    uint32_t made;              /* nodes created (an alias creates none) */
    uint64_t merged;            /* pairs offered by merge keys, all maps */
} parser;

static cudag__pos mark_pos(const parser *p, yaml_mark_t m)
{
    cudag__pos pos = {p->file, (uint32_t)m.line + 1, (uint32_t)m.column + 1};
    return pos;
}

/* The byte of text at mark m.  libyaml counts m.index in characters, not
 * bytes, after a byte order mark it skips: before any non-ASCII character
 * the two agree, after one they do not. */
static size_t mark_byte(const char *text, size_t len, yaml_mark_t m)
{
    size_t at = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    for (size_t i = 0; i < m.index && at < len; i++)
        at += (size_t)cudag__char_bytes(text + at, len - at);
    return at;
}

static int oom(parser *p, cudag__pos pos)
{
    return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, pos,
                         "out of memory");
}

/* Anchors may be redefined later in a file (YAML allows it): the newest
 * definition wins for the aliases that follow. */
static int anchor_open(parser *p, const char *name, cudag__pos pos)
{
    char *copy = cudag__arena_strdup(p->a, name);
    anchor *an = copy ? cudag__vec_push((void **)&p->anchors, &p->nanchors,
                                        &p->canchors, sizeof *an)
                      : NULL;
    if (!an)
        return oom(p, pos);
    an->name = copy;
    if (cudag__map_put(&p->anchor_map, copy, p->nanchors - 1) != CUDAG_OK) {
        p->nanchors--;
        return oom(p, pos);
    }
    return CUDAG_OK;
}

static void anchor_close(parser *p, const char *name, cudag__doc *node)
{
    uint32_t i;
    if (name && cudag__map_get(&p->anchor_map, name, &i))
        p->anchors[i].node = node;
}

static int add_child(parser *p, cudag__doc *child)
{
    if (p->depth == 0) {
        p->root = child;
        return CUDAG_OK;
    }
    frame *f = &p->stack[p->depth - 1];
    if (f->n == f->cap) {
        uint32_t ncap = f->cap ? f->cap * 2 : 8;
        cudag__doc **ni = cudag__arena_alloc(p->a, ncap * sizeof *ni);
        if (!ni)
            return oom(p, child->pos);
        if (f->n)
            memcpy(ni, f->items, f->n * sizeof *ni);
        f->items = ni;      /* the old array stays in the arena: amortised */
        f->cap = ncap;
    }
    f->items[f->n++] = child;
    return CUDAG_OK;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int check_weight(parser *p, const cudag__doc *n)
{
    if (n->weight > CUDAG__MAX_EXPANDED)
        return cudag__report(
            p->d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, n->pos,
            "the document expands to more than %u nodes through aliases "
            "(an alias bomb?)",
            CUDAG__MAX_EXPANDED);
    return CUDAG_OK;
}

static bool is_merge_key(const cudag__doc *k)
{
    return k->type == CUDAG__DOC_SCALAR && k->plain && k->len == 2 &&
           k->str[0] == '<' && k->str[1] == '<';
}

/* Applies merge keys and refuses duplicate keys in the mapping being
 * closed.  A mapping's keys are checked with a hash set so a 100 000-node
 * `nodes:` mapping stays linear. */
/* Phase 1 of finish_map: every key is a scalar.  Sets *has_merge when one is
 * a merge key '<<'. */
static int map_keys_scalar(parser *p, const frame *f, bool *has_merge)
{
    *has_merge = false;
    for (uint32_t i = 0; i < f->n / 2; i++) {
        const cudag__doc *k = f->items[2 * i];
        if (k->type != CUDAG__DOC_SCALAR)
            return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, k->pos,
                                 "a mapping key must be a scalar, not %s",
                                 cudag__doc_what(k));
        if (is_merge_key(k))
            *has_merge = true;
    }
    return CUDAG_OK;
}

/* Phase 2: no key twice.  A mapping with merge keys or more than 8 pairs
 * gets its keys in *seen (key → pair index), which the merge needs. */
static int map_no_duplicates(parser *p, const frame *f, bool has_merge,
                             cudag__map *seen)
{
    uint32_t npairs = f->n / 2;
    /* Most mappings are a node's few keys: compare them pairwise and save
     * building a hash set, which only a big mapping needs. */
    if (!has_merge && npairs <= 8) {
        for (uint32_t i = 1; i < npairs; i++)
            for (uint32_t j = 0; j < i; j++)
                if (strcmp(f->items[2 * i]->str, f->items[2 * j]->str) == 0)
                    return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_EDUP,
                                         f->items[2 * i]->pos,
                                         "duplicate key '%s' (first at line "
                                         "%u)",
                                         f->items[2 * i]->str,
                                         f->items[2 * j]->pos.line);
        return CUDAG_OK;
    }
    for (uint32_t i = 0; i < npairs; i++) {
        cudag__doc *k = f->items[2 * i];
        if (is_merge_key(k))
            continue;
        uint32_t prev;
        if (cudag__map_get(seen, k->str, &prev)) {
            const cudag__doc *pk = f->items[2 * prev];
            return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_EDUP, k->pos,
                                 "duplicate key '%s' (first at line %u)",
                                 k->str, pk->pos.line);
        }
        if (cudag__map_put(seen, k->str, i) != CUDAG_OK)
            return oom(p, k->pos);
    }
    return CUDAG_OK;
}

/* Phase 3a: the pairs the merge keys offer (*extra), each value checked to
 * be a mapping or a list of them, counted against the document's limit. */
static int map_merge_size(parser *p, const frame *f, uint64_t *extra)
{
    *extra = 0;
    for (uint32_t i = 0; i < f->n / 2; i++) {
        const cudag__doc *k = f->items[2 * i], *v = f->items[2 * i + 1];
        if (!is_merge_key(k))
            continue;
        if (v->type == CUDAG__DOC_MAP) {
            *extra += v->n;
            continue;
        }
        if (v->type != CUDAG__DOC_SEQ)
            return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, v->pos,
                                 "a merge key '<<' takes a mapping or a "
                                 "list of mappings, not %s",
                                 cudag__doc_what(v));
        for (uint32_t j = 0; j < v->n; j++) {
            if (v->items[j]->type != CUDAG__DOC_MAP)
                return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX,
                                     v->items[j]->pos,
                                     "a merge key '<<' takes mappings, "
                                     "not %s",
                                     cudag__doc_what(v->items[j]));
            *extra += v->items[j]->n;
        }
    }
    /* Counted over the whole document: the result is sized for every
     * offered pair, and each costs a lookup. */
    p->merged += *extra;
    if (p->merged > CUDAG__MAX_EXPANDED)
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ELIMIT,
                             f->node->pos, "merge keys add more than %u pairs",
                             CUDAG__MAX_EXPANDED);
    return CUDAG_OK;
}

/* Phase 3b: the pairs with the merge keys replaced by the pairs they offer
 * (explicit keys and earlier merges win), in *out[0..*nout). */
static int map_merge(parser *p, const frame *f, cudag__map *seen,
                     uint64_t extra, cudag__doc ***out, uint32_t *nout)
{
    cudag__doc **o = cudag__arena_alloc(p->a, (f->n + 2 * extra) * sizeof *o);
    if (!o)
        return oom(p, f->node->pos);
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->n / 2; i++) {
        cudag__doc *k = f->items[2 * i], *v = f->items[2 * i + 1];
        if (!is_merge_key(k)) {
            o[n++] = k;
            o[n++] = v;
            continue;
        }
        uint32_t nsrc = v->type == CUDAG__DOC_MAP ? 1 : v->n;
        for (uint32_t s = 0; s < nsrc; s++) {
            const cudag__doc *src = v->type == CUDAG__DOC_MAP ? v : v->items[s];
            for (uint32_t j = 0; j < src->n; j++) {
                cudag__doc *mk = src->items[2 * j];
                if (cudag__map_get(seen, mk->str, NULL))
                    continue;
                if (cudag__map_put(seen, mk->str, UINT32_MAX) != CUDAG_OK)
                    return oom(p, mk->pos);
                o[n++] = mk;
                o[n++] = src->items[2 * j + 1];
            }
        }
    }
    *out = o;
    *nout = n;
    return CUDAG_OK;
}

static int finish_map(parser *p, frame *f)
{
    cudag__doc *m = f->node;
    bool has_merge;
    int rc = map_keys_scalar(p, f, &has_merge);
    if (rc != CUDAG_OK)
        return rc;
    cudag__map seen = {0};
    cudag__doc **out = f->items;
    uint32_t nout = f->n;
    uint64_t extra = 0;
    rc = map_no_duplicates(p, f, has_merge, &seen);
    if (rc == CUDAG_OK && has_merge)
        rc = map_merge_size(p, f, &extra);
    if (rc == CUDAG_OK && has_merge)
        rc = map_merge(p, f, &seen, extra, &out, &nout);
    cudag__map_free(&seen);
    if (rc != CUDAG_OK)
        return rc;
    m->items = out;
    m->n = nout / 2;
    m->weight = 1;
    for (uint32_t i = 0; i < nout; i++)
        m->weight = sat_add(m->weight, out[i]->weight);
    return check_weight(p, m);
}

/* Every node counts against the expansion limit as it is made: the
 * expanded tree is never smaller than the nodes written, and a 64 MiB file
 * of tiny items is refused after 4 Mi of them, not after gigabytes. */
static int count_node(parser *p, cudag__pos pos)
{
    if (++p->made > CUDAG__MAX_EXPANDED)
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, pos,
                             "the document has more than %u nodes",
                             CUDAG__MAX_EXPANDED);
    return CUDAG_OK;
}

static cudag__doc *new_node(parser *p, cudag__doc_type t, cudag__pos pos)
{
    cudag__doc *n = cudag__arena_alloc(p->a, sizeof *n);
    if (n) {
        n->type = t;
        n->pos = pos;
        n->weight = 1;
    }
    return n;
}

static int on_start(parser *p, cudag__doc_type t, const yaml_event_t *ev,
                    const yaml_char_t *anchor_name)
{
    cudag__pos pos = mark_pos(p, ev->start_mark);
    if (p->depth >= CUDAG__MAX_DEPTH)
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, pos,
                             "nesting deeper than %u levels", CUDAG__MAX_DEPTH);
    int rc = count_node(p, pos);
    if (rc != CUDAG_OK)
        return rc;
    cudag__doc *n = new_node(p, t, pos);
    if (!n)
        return oom(p, pos);
    frame *f = &p->stack[p->depth++];
    memset(f, 0, sizeof *f);
    f->node = n;
    f->flow = t == CUDAG__DOC_SEQ &&
              ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
    if (anchor_name) {
        rc = anchor_open(p, (const char *)anchor_name, pos);
        if (rc != CUDAG_OK)
            return rc;
        f->anchor = p->anchors[p->nanchors - 1].name;
    }
    return CUDAG_OK;
}

/* The ',' and the '(' of a plain scalar, in the sum of its '(' less its ')'.
 * Only what is plain can have been split by YAML. */
static int open_parens(const cudag__doc *n)
{
    int depth = 0;
    if (n->type != CUDAG__DOC_SCALAR || !n->plain)
        return 0;
    for (uint32_t i = 0; i < n->len; i++)
        depth += n->str[i] == '(' ? 1 : n->str[i] == ')' ? -1 : 0;
    return depth;
}

/* The hint every split or cut entry of a flow collection gets, at the
 * split: the same words as an unknown key '256)' of a flow map's (yaml/lowering.c). */
#define SPLIT_HINT "a ',' inside {...} or [...] splits an expression; quote it"

/* An entry of a flow list whose '(' its ',' left open, as in
 * `args: [x, min(N, 4096)]`, which YAML reads as "min(N" and "4096)": one
 * error at the split, saying what to quote, instead of one for each half
 * (an unbalanced '(' and an argument too many). */
static int check_flow_split(parser *p, const frame *f)
{
    for (uint32_t i = 0; i + 1 < f->n; i++) {
        int depth = open_parens(f->items[i]);
        if (depth <= 0 || f->items[i + 1]->type != CUDAG__DOC_SCALAR ||
            !f->items[i + 1]->plain)
            continue;
        /* The whole expression, for the hint: up to the entry that closes
         * it (or the end of the list), shortened where it is long. */
        char whole[128];
        int w = snprintf(whole, sizeof whole, "%s", f->items[i]->str);
        for (uint32_t j = i + 1; j < f->n && depth > 0 && w >= 0 &&
                                 (size_t)w < sizeof whole;
             j++) {
            w += snprintf(whole + w, sizeof whole - (size_t)w, ", %s",
                          f->items[j]->type == CUDAG__DOC_SCALAR
                              ? f->items[j]->str
                              : "...");
            depth += open_parens(f->items[j]);
        }
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_EEXPR,
                             f->items[i + 1]->pos,
                             "'%s' is the rest of '%s': " SPLIT_HINT
                             " (\"%.60s\") or use block style",
                             f->items[i + 1]->str, f->items[i]->str, whole);
    }
    return CUDAG_OK;
}

static int on_end(parser *p)
{
    frame *f = &p->stack[--p->depth];
    cudag__doc *n = f->node;
    int rc;
    if (n->type == CUDAG__DOC_MAP) {
        rc = finish_map(p, f);
    } else {
        n->items = f->items;
        n->n = f->n;
        for (uint32_t i = 0; i < f->n; i++)
            n->weight = sat_add(n->weight, f->items[i]->weight);
        rc = check_weight(p, n);
        if (rc == CUDAG_OK && f->flow)
            rc = check_flow_split(p, f);
    }
    if (rc != CUDAG_OK)
        return rc;
    anchor_close(p, f->anchor, n);
    return add_child(p, n);
}

static int on_scalar(parser *p, const yaml_event_t *ev)
{
    cudag__pos pos = mark_pos(p, ev->start_mark);
    const yaml_char_t *anchor_name = ev->data.scalar.anchor;
    size_t len = ev->data.scalar.length;
    if (len > UINT32_MAX - 1)
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, pos,
                             "scalar too long");
    int rc = count_node(p, pos);
    if (rc != CUDAG_OK)
        return rc;
    cudag__doc *n = new_node(p, CUDAG__DOC_SCALAR, pos);
    char *s =
        n ? cudag__arena_strndup(p->a, (const char *)ev->data.scalar.value, len)
          : NULL;
    if (!s)
        return oom(p, pos);
    n->str = s;
    n->len = (uint32_t)len;
    /* A scalar tagged !!str is a string even when written plain. */
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               !(ev->data.scalar.tag &&
                 strcmp((const char *)ev->data.scalar.tag,
                        "tag:yaml.org,2002:str") == 0);
    if (memchr(s, '\0', len))
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, pos,
                             "a scalar contains a NUL character");
    if (anchor_name) {
        rc = anchor_open(p, (const char *)anchor_name, pos);
        if (rc != CUDAG_OK)
            return rc;
        anchor_close(p, p->anchors[p->nanchors - 1].name, n);
    }
    return add_child(p, n);
}

static int on_alias(parser *p, const yaml_event_t *ev)
{
    cudag__pos pos = mark_pos(p, ev->start_mark);
    const char *name = (const char *)ev->data.alias.anchor;
    uint32_t i;
    if (!cudag__map_get(&p->anchor_map, name, &i))
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_EUNKNOWN, pos,
                             "unknown anchor '*%s'", name);
    if (!p->anchors[i].node)
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, pos,
                             "alias '*%s' refers to a node that contains it",
                             name);
    return add_child(p, p->anchors[i].node);
}

/* libyaml's reader (encoding, control characters) reports a byte offset
 * instead of a mark: the position of that byte, counting columns in
 * characters as the marks do. */
static cudag__pos offset_pos(const parser *p, const char *text, size_t len,
                             size_t off)
{
    cudag__pos pos = {p->file, 1, 1};
    for (size_t i = 0; i < off && i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        /* LF, CR LF or a lone CR ends a line, as for libyaml. */
        bool eol = c == '\n' ||
                   (c == '\r' && !(i + 1 < len && text[i + 1] == '\n'));
        if (eol) {
            pos.line++;
            pos.col = 1;
        } else if ((c & 0xC0) != 0x80) {
            pos.col++;
        }
    }
    return pos;
}

static int syntax_error(parser *p, const yaml_parser_t *yp, const char *text,
                        size_t len)
{
    cudag__pos pos = mark_pos(p, yp->problem_mark);
    const char *problem = yp->problem ? yp->problem : "malformed YAML";
    if (yp->error == YAML_MEMORY_ERROR)
        return oom(p, pos);
    if (yp->error == YAML_READER_ERROR) {
        pos = offset_pos(p, text, len, yp->problem_offset);
        if (yp->problem_value >= 0)
            return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, pos,
                                 "YAML syntax error: %s (#x%X)", problem,
                                 (unsigned)yp->problem_value);
    }
    /* In a flow list or map, a '[' or '(' that YAML cannot place is a name
     * with an index (`after: [step[i-1]]`) or an expression that a ','
     * or a bracket cut: the quoting hint, not libyaml's words. */
    size_t at = mark_byte(text, len, yp->problem_mark);
    if (yp->error == YAML_PARSER_ERROR && yp->context &&
        strncmp(yp->context, "while parsing a flow", 20) == 0 && at < len) {
        /* The start of the word the mark is in or after, for its text. */
        size_t b = at;
        while (b > 0 && !strchr(" \t\r\n,[{", text[b - 1]))
            b--;
        size_t e = at;
        while (e < len && !strchr(" \t\r\n,]}", text[e]))
            e++;
        /* A name with an index closes its ']' too: step[i-1]. */
        if (e < len && text[e] == ']' && memchr(text + b, '[', e - b))
            e++;
        pos = mark_pos(p, yp->problem_mark);
        size_t back = cudag__columns(text + b, at - b);
        if (back <= yp->problem_mark.column) {
            yaml_mark_t m = yp->problem_mark;
            m.column -= back;
            pos = mark_pos(p, m);
        }
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, pos,
                             "YAML cannot read '%.*s' inside %s: a ',', "
                             "'[', ']', '{' or '}' there ends an entry; "
                             "quote it (\"%.*s\") or use block style",
                             (int)(e - b > 60 ? 60 : e - b), text + b,
                             strstr(yp->context, "sequence") ? "[...]"
                                                             : "{...}",
                             (int)(e - b > 60 ? 60 : e - b), text + b);
    }
    if (yp->context)
        return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, pos,
                             "YAML syntax error: %s %s (line %u)", problem,
                             yp->context, (unsigned)yp->context_mark.line + 1);
    return cudag__report(p->d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX, pos,
                         "YAML syntax error: %s", problem);
}

int cudag__parse(cudag__arena *a, const char *file, const char *text,
                 size_t len, cudag__doc **root, cudag__diag *d)
{
    *root = NULL;
    cudag__pos start = {file, 1, 1};
    if (len > CUDAG__MAX_FILE_BYTES)
        return cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, start,
                             "file is larger than %u bytes",
                             CUDAG__MAX_FILE_BYTES);
    parser p;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.file = file;
    p.d = d;
    yaml_parser_t yp;
    if (!yaml_parser_initialize(&yp))
        return oom(&p, start);
    yaml_parser_set_input_string(&yp, (const unsigned char *)text, len);

    int rc = CUDAG_OK;
    unsigned docs = 0;
    bool done = false;
    while (!done && rc == CUDAG_OK) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&yp, &ev)) {
            rc = syntax_error(&p, &yp, text, len);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX,
                                   mark_pos(&p, ev.start_mark),
                                   "a cudag file holds one YAML document; "
                                   "this is a second one");
            break;
        case YAML_MAPPING_START_EVENT:
            rc =
                on_start(&p, CUDAG__DOC_MAP, &ev, ev.data.mapping_start.anchor);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(&p, CUDAG__DOC_SEQ, &ev,
                          ev.data.sequence_start.anchor);
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            rc = on_end(&p);
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(&p, &ev);
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(&p, &ev);
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&yp);
    cudag__free(p.anchors);
    cudag__map_free(&p.anchor_map);
    if (rc == CUDAG_OK)
        *root = p.root;
    return rc;
}

const cudag__doc *cudag__doc_get(const cudag__doc *map, const char *key)
{
    if (!map || map->type != CUDAG__DOC_MAP)
        return NULL;
    /* Called for every key of every repeated node: the first byte rules
     * out most keys without a call. */
    for (uint32_t i = 0; i < map->n; i++) {
        const char *k = map->items[2 * i]->str;
        if (k[0] == key[0] && strcmp(k, key) == 0)
            return map->items[2 * i + 1];
    }
    return NULL;
}

cudag__pos cudag__doc_pos_at(const cudag__doc *s, size_t off)
{
    cudag__pos pos = s->pos;
    if (s->type != CUDAG__DOC_SCALAR || memchr(s->str, '\n', s->len))
        return pos;
    /* A quoted scalar's text starts after its opening quote.  The offset is
     * in bytes, the column in characters (cudag_error.column). */
    pos.col += cudag__columns(s->str, off) + (s->plain ? 0 : 1);
    return pos;
}

const char *cudag__doc_what(const cudag__doc *n)
{
    switch (n->type) {
    case CUDAG__DOC_SCALAR:
        return "a scalar";
    case CUDAG__DOC_SEQ:
        return "a sequence";
    case CUDAG__DOC_MAP:
        return "a mapping";
    }
    return "a node";
}

void cudag__source_free(cudag__source *s)
{
    if (!s)
        return;
    cudag__free(s->files);
    cudag__free(s->children);
    cudag__arena_free(&s->arena);
    cudag__free(s);
}
