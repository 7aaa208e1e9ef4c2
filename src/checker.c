/* checker.c — one checking pass's context and its reports (checker.h): the
 * errors and warnings of check.c and of each node kind's check step. */
#include "checker.h"

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
