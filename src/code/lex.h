/* lex.h — the lexer of CUDA C++ source shared by the declaration reader
 * (decls.c) and the include scan (headers.c): tokens with their place. */
#ifndef CUDAG_LEX_H
#define CUDAG_LEX_H


#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CUDAG__T_ID, CUDAG__T_NUM, CUDAG__T_STR, CUDAG__T_CHR, CUDAG__T_PUNCT };

typedef struct cudag__tok {
    uint32_t off, len;          /* in the text */
    uint32_t line, col;
    uint8_t kind;
    uint8_t text;               /* which text */
    bool bol;                   /* first token of its line */
} cudag__tok;

typedef struct cudag__lexer {
    const char *s;
    size_t n, i;
    uint32_t line, col;
} cudag__lexer;

/* Moves past one character, counting lines and columns. */
void cudag__lex_adv(cudag__lexer *lx);

/* Skips spaces, comments and backslash-newlines; true if a newline passed.
 * With stop_at_newline it stops before a newline (a directive's end). */
bool cudag__lex_skip_space(cudag__lexer *lx, bool stop_at_newline);

/* Lexes one token at lx->i (which is not a space); false at the end. */
bool cudag__lex_one(cudag__lexer *lx, cudag__tok *t);

#endif /* CUDAG_LEX_H */
