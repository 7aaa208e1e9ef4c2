/* checker.c — one checking pass's context and its reports (checker.h): the
 * errors and warnings of check.c and of each node kind's check step. */
#include "kinds/checker.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>

#include <stdio.h>

int cudag__check_fail(cudag__checker *c, int code, cudag__pos pos,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cudag__vreport(c->d, CUDAG_SEV_ERROR, code, pos, fmt, ap);
    va_end(ap);
    if (r != CUDAG_OK && c->first == CUDAG_OK)
        c->first = r;
    c->broken = true;
    return r;
}

void cudag__check_warn(cudag__checker *c, int code, cudag__pos pos,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* CUDAG_WERROR turns a warning into an error: then it counts as one. */
    int r = cudag__vreport(c->d, CUDAG_SEV_WARNING, code, pos, fmt, ap);
    va_end(ap);
    if (r != CUDAG_OK && c->first == CUDAG_OK)
        c->first = r;
}

bool cudag__check_full(const cudag__checker *c)
{
    return cudag__diag_full(c->d);
}

void cudag__check_cond_node(cudag__checker *c, uint32_t node, uint32_t cond,
                            cudag__pos pos)
{
    cudag__cond_user *u = &c->cond_node[cond];
    const cudag__node *n = &c->g->nodes[node];
    if (u->g) {
        const cudag__pos *p = &u->pos;
        char where[600] = "";
        if (p->file && p->line)
            snprintf(where, sizeof where, " (at %s:%u:%u)", p->file, p->line,
                     p->col);
        cudag__check_fail(c, CUDAG_EDUP, cudag__pick(pos, n->pos),
                          "node '%s': condition '%s' is already read by node "
                          "'%s'%s; each conditional node needs a condition "
                          "of its own",
                          n->name, c->g->conds[cond].name,
                          u->g->nodes[u->node].name, where);
        return;
    }
    u->g = c->g;
    u->node = node;
    u->pos = cudag__pick(pos, n->pos);
}

void cudag__check_cond_setter(cudag__checker *c, uint32_t node,
                              uint32_t cond, cudag__pos pos, bool only_one,
                              int64_t k, cudag__pos k_pos)
{
    cudag__cond_setter *s = cudag__vec_push((void **)&c->setters,
                                            &c->nsetters, &c->csetters,
                                            sizeof *s);
    if (!s) {
        c->oom = true;
        return;
    }
    s->cond = cond;
    s->at.g = c->g;
    s->at.node = node;
    s->at.pos = pos;
    s->only_one = only_one;
    s->k = k;
    s->k_pos = k_pos;
}
