/* plan_access.c — the access sets of a checked graph as JSON, for
 * `cudag plan --json` (cudag_plan_access in cudag.h): per node of the tree,
 * the bytes of each buffer it may read and may write (src/check/access.c). */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/text.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "check/access.h"
#include "check/order.h"

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

static void put_string(cudag__sb *b, const char *s)
{
    cudag__sb_puts(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            cudag__sb_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            cudag__sb_printf(b, "\\u%04x", ch);
        else
            cudag__sb_printf(b, "%c", ch);
    }
    cudag__sb_puts(b, "\"");
}

/* One node's object: {"node": NAME, "access": [...]}. */
static bool put_node(cudag__sb *b, const cudag_graph *g, uint32_t v)
{
    cudag__accset s;
    memset(&s, 0, sizeof s);
    cudag__node_access(&s, g, v);
    if (s.oom) {
        cudag__free(s.a);
        return false;
    }
    const cudag__node *n = &g->nodes[v];
    cudag__sb_puts(b, "{\"node\": ");
    put_string(b, n->name);
    cudag__sb_puts(b, ", \"access\": [");
    for (uint32_t i = 0; i < s.n; i++) {
        const cudag__access *a = &s.a[i];
        cudag__sb_puts(b, i ? ", {\"buffer\": " : "{\"buffer\": ");
        put_string(b, g->buffers[a->buffer].name);
        cudag__sb_printf(b, ", \"mode\": \"%s\", \"bytes\": [%llu, %llu], "
                            "\"extent\": \"%s\"",
                         cudag__access_mode_name(a->mode),
                         (unsigned long long)a->lo, (unsigned long long)a->hi,
                         a->unknown ? "to the end" : "exact");
        if (a->who != n) {
            cudag__sb_puts(b, ", \"by\": ");
            put_string(b, a->who->name);
        }
        cudag__sb_puts(b, "}");
    }
    cudag__sb_puts(b, "]");
    /* The edges `order: program` inferred into this node, and why. */
    bool any = false;
    const cudag__topo *t = &g->topo;
    for (uint32_t j = t->in_start[v]; j < t->in_start[v + 1]; j++) {
        const cudag__edge *e = &g->edges[t->in_edge[j]];
        if (!e->inferred)
            continue;
        cudag__sb_puts(b, any ? ", " : ", \"inferred\": [");
        any = true;
        cudag__sb_puts(b, "{\"from\": ");
        put_string(b, g->nodes[e->from].name);
        cudag__sb_printf(b, ", \"kind\": \"%s\", \"why\": \"%s\", ",
                         cudag_edge_kind_name(e->kind),
                         cudag__hazard_name(e->inferred));
        if (e->why_buffer == CUDAG__NONE) {
            cudag__sb_puts(b, "\"condition\": ");
            put_string(b, g->conds[e->why_lo].name);
            cudag__sb_puts(b, "}");
            continue;
        }
        cudag__sb_puts(b, "\"buffer\": ");
        put_string(b, g->buffers[e->why_buffer].name);
        cudag__sb_printf(b, ", \"bytes\": [%llu, %llu], \"extent\": \"%s\"}",
                         (unsigned long long)e->why_lo,
                         (unsigned long long)e->why_hi,
                         e->why_unknown ? "to the end" : "exact");
    }
    if (any)
        cudag__sb_puts(b, "]");
    cudag__sb_puts(b, "}");
    cudag__free(s.a);
    return true;
}

int cudag_plan_access(const cudag_graph *g, char **json, cudag_error *err)
{
    cudag__error_clear(err);
    if (json)
        *json = NULL;
    if (!g || !json)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_plan_access: %s is NULL",
                              g ? "json" : "graph");
    int rc = cudag__need_root(g, "cudag_plan_access", "plan graph", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!g->checked)
        return cudag__fail_at(err, CUDAG_ESTATE, CUDAG__NOPOS,
                              "cudag_plan_access: graph '%s' has not passed "
                              "cudag_check()",
                              g->name);
    cudag__sb b = {NULL, 0, 0, false};
    cudag__sb_puts(&b, "[");
    bool ok = true;
    const char *sep = "";
    for (uint32_t t = 0; t < cudag__tree_ngraphs(g) && ok; t++) {
        const cudag_graph *h = cudag__tree_graph(g, t);
        for (uint32_t v = 0; v < h->nnodes && ok; v++) {
            cudag__sb_puts(&b, sep);
            sep = ", ";
            ok = put_node(&b, h, v);
        }
    }
    cudag__sb_puts(&b, "]");
    char *text = cudag__sb_finish(&b);
    if (!ok || !text) {
        cudag__free(text);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory listing the accesses of graph "
                              "'%s'",
                              g->name);
    }
    *json = text;
    return CUDAG_OK;
}
