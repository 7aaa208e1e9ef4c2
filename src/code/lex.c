/* lex.c — the tokens of CUDA C++ source as the declaration reader and the
 * include scan need them: identifiers, numbers, strings, characters and
 * punctuation, with comments, backslash-newlines and line starts known.  Its
 * own file: decls.c and headers.c both lex, and neither needs the other. */
#include "code/lex.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

static bool is_id0(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (unsigned char)c >= 0x80;
}

static bool is_id(char c) { return is_id0(c) || (c >= '0' && c <= '9'); }

void cudag__lex_adv(cudag__lexer *lx)
{
    if (lx->s[lx->i] == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->i++;
}

/* Skips spaces, comments and backslash-newlines; true if a newline passed. */
bool cudag__lex_skip_space(cudag__lexer *lx, bool stop_at_newline)
{
    bool nl = false;
    while (lx->i < lx->n) {
        char c = lx->s[lx->i];
        if (c == '\\' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '\n') {
            cudag__lex_adv(lx);
            cudag__lex_adv(lx);
        } else if (c == '\n') {
            if (stop_at_newline)
                return true;
            nl = true;
            cudag__lex_adv(lx);
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' ||
                   c == '\v') {
            cudag__lex_adv(lx);
        } else if (c == '/' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '/') {
            while (lx->i < lx->n && lx->s[lx->i] != '\n') {
                if (lx->s[lx->i] == '\\' && lx->i + 1 < lx->n &&
                    lx->s[lx->i + 1] == '\n')
                    cudag__lex_adv(lx);
                cudag__lex_adv(lx);
            }
        } else if (c == '/' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '*') {
            cudag__lex_adv(lx);
            cudag__lex_adv(lx);
            while (lx->i < lx->n &&
                   !(lx->s[lx->i] == '*' && lx->i + 1 < lx->n &&
                     lx->s[lx->i + 1] == '/'))
                cudag__lex_adv(lx);
            if (lx->i < lx->n) {
                cudag__lex_adv(lx);
                cudag__lex_adv(lx);
            }
        } else {
            break;
        }
    }
    return nl;
}

/* Lexes one token at lx->i (which is not a space); false at the end. */
bool cudag__lex_one(cudag__lexer *lx, cudag__tok *t)
{
    if (lx->i >= lx->n)
        return false;
    t->off = (uint32_t)lx->i;
    t->line = lx->line;
    t->col = lx->col;
    const char *s = lx->s;
    char c = s[lx->i];
    if (is_id0(c)) {
        while (lx->i < lx->n && is_id(s[lx->i]))
            cudag__lex_adv(lx);
        size_t l = lx->i - t->off;
        /* A raw string: R"delim( … )delim", with an optional prefix. */
        if (lx->i < lx->n && s[lx->i] == '"' && s[lx->i - 1] == 'R' && l <= 3) {
            cudag__lex_adv(lx);
            size_t d0 = lx->i;
            while (lx->i < lx->n && s[lx->i] != '(' && lx->i - d0 < 16)
                cudag__lex_adv(lx);
            size_t dl = lx->i - d0;
            while (lx->i < lx->n) {
                if (s[lx->i] == ')' && lx->i + dl + 1 < lx->n &&
                    memcmp(s + lx->i + 1, s + d0, dl) == 0 &&
                    s[lx->i + 1 + dl] == '"') {
                    for (size_t k = 0; k < dl + 2; k++)
                        cudag__lex_adv(lx);
                    break;
                }
                cudag__lex_adv(lx);
            }
            t->kind = CUDAG__T_STR;
        } else if (lx->i < lx->n && (s[lx->i] == '"' || s[lx->i] == '\'') &&
                   l <= 2) {
            /* u8"…", L'…': the prefix belongs to the literal. */
            char q = s[lx->i];
            cudag__lex_adv(lx);
            while (lx->i < lx->n && s[lx->i] != q && s[lx->i] != '\n') {
                if (s[lx->i] == '\\' && lx->i + 1 < lx->n)
                    cudag__lex_adv(lx);
                cudag__lex_adv(lx);
            }
            if (lx->i < lx->n && s[lx->i] == q)
                cudag__lex_adv(lx);
            t->kind = q == '"' ? CUDAG__T_STR : CUDAG__T_CHR;
        } else {
            t->kind = CUDAG__T_ID;
        }
    } else if ((c >= '0' && c <= '9') ||
               (c == '.' && lx->i + 1 < lx->n && s[lx->i + 1] >= '0' &&
                s[lx->i + 1] <= '9')) {
        /* pp-number: digits, letters, dots, quotes, and signs after e/p. */
        while (lx->i < lx->n) {
            char d = s[lx->i];
            if (is_id(d) || d == '.' ||
                (d == '\'' && lx->i + 1 < lx->n && is_id(s[lx->i + 1])))
                cudag__lex_adv(lx);
            else if ((d == '+' || d == '-') &&
                     strchr("eEpP", s[lx->i - 1]) != NULL)
                cudag__lex_adv(lx);
            else
                break;
        }
        t->kind = CUDAG__T_NUM;
    } else if (c == '"' || c == '\'') {
        cudag__lex_adv(lx);
        while (lx->i < lx->n && s[lx->i] != c && s[lx->i] != '\n') {
            if (s[lx->i] == '\\' && lx->i + 1 < lx->n)
                cudag__lex_adv(lx);
            cudag__lex_adv(lx);
        }
        if (lx->i < lx->n && s[lx->i] == c)
            cudag__lex_adv(lx);
        t->kind = c == '"' ? CUDAG__T_STR : CUDAG__T_CHR;
    } else {
        t->kind = CUDAG__T_PUNCT;
        if ((c == ':' && lx->i + 1 < lx->n && s[lx->i + 1] == ':') ||
            (c == '-' && lx->i + 1 < lx->n && s[lx->i + 1] == '>')) {
            cudag__lex_adv(lx);
        } else if (c == '.' && lx->i + 2 < lx->n && s[lx->i + 1] == '.' &&
                   s[lx->i + 2] == '.') {
            cudag__lex_adv(lx);
            cudag__lex_adv(lx);
        }
        cudag__lex_adv(lx);
    }
    t->len = (uint32_t)(lx->i - t->off);
    return true;
}
