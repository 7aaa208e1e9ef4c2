/* text.c — the text buffer that output writers append to, and the string
 * helpers (edit distance and suggestions, UTF-8 columns, identifiers): text
 * made or measured, apart from the containers and the diagnostics. */
#include "base/text.h"
#include "base/alloc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- text buffer --------------------------------------------------- */

static bool sb_reserve(cudag__sb *b, size_t more)
{
    if (b->oom)
        return false;
    if (more < b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (more >= cap - b->len) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *p = cudag__realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void cudag__sb_puts(cudag__sb *b, const char *s)
{
    size_t n = strlen(s);
    if (!sb_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

void cudag__sb_printf(cudag__sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if (!sb_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cudag__sb_dot_escape(cudag__sb *b, const char *s)
{
    char tmp[2] = {0, 0};
    for (; *s; s++) {
        if (*s == '"')
            cudag__sb_puts(b, "\\\"");
        else if (*s == '\\')
            cudag__sb_puts(b, "\\\\");
        else if ((unsigned char)*s < 0x20 || *s == 0x7f)
            continue;
        else {
            tmp[0] = *s;
            cudag__sb_puts(b, tmp);
        }
    }
}

char *cudag__sb_finish(cudag__sb *b)
{
    char *p = NULL;
    if (b->oom || !sb_reserve(b, 0)) {
        cudag__free(b->p);
    } else {
        p = b->p;
        p[b->len] = '\0';  /* text may never have been appended */
    }
    memset(b, 0, sizeof *b);
    return p;
}

/* ---- strings --------------------------------------------------------- */

size_t cudag__edit_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    /* The distance is at least the difference in length: most names of a
     * large namespace are ruled out without the dynamic program. */
    if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) >= cap)
        return cap;
    /* Optimal string alignment: insertions, deletions, substitutions and
     * swaps of two adjacent letters ("axyp" for "axpy") cost one each. */
    size_t r0[65], r1[65], r2[65];
    size_t *pp = r0, *prev = r1, *row = r2;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    size_t prev_best = 0;
    for (size_t i = 1; i <= la; i++) {
        size_t best = row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = prev[j - 1] + cost;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            row[j] = v;
            if (v < best)
                best = v;
        }
        /* A swap reaches back two rows: stop once both are past the cap. */
        if (best >= cap && prev_best >= cap)
            return cap;
        prev_best = best;
        size_t *t = pp;
        pp = prev;
        prev = row;
        row = t;
    }
    return prev[lb] < cap ? prev[lb] : cap;
}

const char *cudag__suggest(const char *word, const char *const *cands,
                           size_t n)
{
    /* A typo is at most about a third of the word wrong, and at most 3
     * edits; a one-letter word has no plausible typo of another name. */
    size_t len = strlen(word);
    size_t cap = (len + 1) / 3;
    if (cap > 3)
        cap = 3;
    if (cap == 0)
        return NULL;
    const char *best = NULL;
    size_t bestd = cap + 1;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i])
            continue;
        size_t d = cudag__edit_distance(word, cands[i], bestd);
        if (d < bestd && d <= cap) {
            bestd = d;
            best = cands[i];
        }
    }
    return best;
}

uint32_t cudag__columns(const char *s, size_t n)
{
    uint32_t cols = 0;
    for (size_t i = 0; i < n; i++)
        cols += ((unsigned char)s[i] & 0xC0) != 0x80;
    return cols;
}

int cudag__char_bytes(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    size_t i = 1;
    while (i < want && i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
        i++;
    return (int)i;
}

bool cudag__is_ident(const char *s, size_t n)
{
    if (n == 0 || n > CUDAG__MAX_NAME)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}
