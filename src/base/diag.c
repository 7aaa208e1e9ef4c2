/* diag.c — error values filled from a position and a format, and the
 * diagnostic sink (repeats dropped, errors counted, the first one kept): its
 * own file because it is the one place messages become cudag_error values. */
#include "base/diag.h"
#include "cudag.h"

#include <stdbool.h>
#include <stdint.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- diagnostics ------------------------------------------------------ */

static void fill(cudag_error *e, int sev, int code, cudag__pos pos,
                 const char *fmt, va_list ap)
{
    memset(e, 0, offsetof(cudag_error, file));
    e->code = code;
    e->severity = sev;
    e->file[0] = '\0';
    if (pos.file) {
        snprintf(e->file, sizeof e->file, "%s", pos.file);
        e->line = (int)pos.line;
        e->column = (int)pos.col;
    }
    vsnprintf(e->message, sizeof e->message, fmt, ap);
}

static int vfail_at(cudag_error *err, int code, cudag__pos pos,
                    const char *fmt, va_list ap)
{
    if (err) {
        fill(err, CUDAG_SEV_ERROR, code, pos, fmt, ap);
        err->count = 1;
    }
    return code;
}

int cudag__fail_at(cudag_error *err, int code, cudag__pos pos,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(err, code, pos, fmt, ap);
    va_end(ap);
    return code;
}

int cudag__vfail_call(cudag_error *err, cudag__pos pos, int result,
                      const char *name, const char *desc, const char *fmt,
                      va_list ap)
{
    if (!err)
        return CUDAG_ECUDA;
    char what[700];
    vsnprintf(what, sizeof what, fmt, ap);
    cudag__fail_at(err, CUDAG_ECUDA, pos, "%s: %s (%s)", what, name, desc);
    err->cuda_result = result;
    return CUDAG_ECUDA;
}

void cudag__error_clear(cudag_error *err)
{
    if (err) {
        memset(err, 0, offsetof(cudag_error, file));
        err->file[0] = '\0';
        err->message[0] = '\0';
    }
}

void cudag__error_prefix(cudag_error *err, cudag__pos pos, const char *fmt,
                         ...)
{
    if (!err)
        return;
    char pre[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre - 2, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t p = strlen(pre), m = strlen(err->message);
    if (p + 2 + m >= sizeof err->message)
        m = sizeof err->message - 1 - p - 2;
    memmove(err->message + p + 2, err->message, m);
    err->message[p + 2 + m] = '\0';
    memcpy(err->message, pre, p);
    err->message[p] = ':';
    err->message[p + 1] = ' ';
    err->file[0] = '\0';
    err->line = err->column = 0;
    if (pos.file) {
        snprintf(err->file, sizeof err->file, "%s", pos.file);
        err->line = (int)pos.line;
        err->column = (int)pos.col;
    }
}

void cudag__diag_init(cudag__diag *d, const cudag_options *opts,
                      cudag_error *first)
{
    memset(d, 0, sizeof *d);
    d->first = first;
    d->max_errors = 50;
    /* A size of 0 is taken as this version's struct, so a caller who
     * zero-initialised and forgot .size still gets the options it set. */
    if (opts && (opts->size == 0 ||
                 opts->size >= offsetof(cudag_options, flags) + sizeof(unsigned))) {
        d->fn = opts->diag;
        d->user = opts->diag_user;
        if (opts->max_errors)
            d->max_errors = opts->max_errors;
        d->flags = opts->flags;
    }
    cudag__error_clear(first);
}

int cudag__vreport(cudag__diag *d, cudag_severity sev, int code,
                   cudag__pos pos, const char *fmt, va_list ap)
{
    if (sev == CUDAG_SEV_WARNING && (d->flags & CUDAG_WERROR))
        sev = CUDAG_SEV_ERROR;
    if (sev == CUDAG_SEV_ERROR && d->nerr >= d->max_errors)
        return code;
    cudag_error e;
    fill(&e, sev, code, pos, fmt, ap);
    /* One mistake is one report.  Where it has a position, that and its
     * code identify it: the copies of a repeated node repeat it at the same
     * place, with their own names in the message ("unknown node
     * 'other[2]'").  Without one, the message does, up to a suggestion
     * (searched for only the first few times in a large namespace, so the
     * same mistake may come with or without one). */
    const char *end = strstr(e.message, " (did you mean '");
    if (!end)
        end = e.message + strlen(e.message);
    if (pos.line > 0)
        end = e.message;
    uint64_t sig = UINT64_C(1469598103934665603) ^ ((uint64_t)(unsigned)code << 8);
    for (const char *c = e.message; c < end; c++)
        sig = (sig ^ (unsigned char)*c) * UINT64_C(1099511628211);
    /* The file by its name, not its pointer: a child graph file is read
     * once per node that uses it, and a mistake in it is one mistake. */
    for (const char *c = pos.file; c && *c; c++)
        sig = (sig ^ (unsigned char)*c) * UINT64_C(1099511628211);
    sig ^= ((uint64_t)pos.line << 40) ^ ((uint64_t)pos.col << 20) ^
           (uint64_t)(unsigned)sev;
    for (unsigned i = 0; i < CUDAG__DIAG_RECENT && i < d->nrecent; i++)
        if (d->recent[i] == sig) {
            if (sev == CUDAG_SEV_ERROR)
                d->nrepeat++;
            return sev == CUDAG_SEV_ERROR ? code : CUDAG_OK;
        }
    d->recent[d->nrecent++ % CUDAG__DIAG_RECENT] = sig;
    if (sev == CUDAG_SEV_ERROR) {
        if (d->nerr++ == 0) {
            d->first_code = code;
            if (d->first)
                *d->first = e;
        }
    } else if (sev == CUDAG_SEV_WARNING) {
        d->nwarn++;
    }
    if (d->fn)
        d->fn(d->user, &e);
    return sev == CUDAG_SEV_ERROR ? code : CUDAG_OK;
}

int cudag__report(cudag__diag *d, cudag_severity sev, int code,
                  cudag__pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cudag__vreport(d, sev, code, pos, fmt, ap);
    va_end(ap);
    return r;
}

bool cudag__diag_full(const cudag__diag *d)
{
    return d->nerr >= d->max_errors || d->nrepeat >= d->max_errors;
}

int cudag__diag_finish(cudag__diag *d)
{
    if (d->first)
        d->first->count = (int)d->nerr;
    return d->nerr ? d->first_code : CUDAG_OK;
}
