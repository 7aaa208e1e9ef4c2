/* parse.h — the document tree that parse.c builds from YAML text: scalars,
 * sequences and mappings with their source positions.  Aliases share the
 * anchored node (the tree is a DAG), merge keys are already applied, and
 * duplicate keys are already refused. */
#ifndef CUDAG_PARSE_H
#define CUDAG_PARSE_H

#include "base/alloc.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cudag__doc_type {
    CUDAG__DOC_SCALAR,
    CUDAG__DOC_SEQ,
    CUDAG__DOC_MAP
} cudag__doc_type;

typedef struct cudag__doc cudag__doc;
struct cudag__doc {
    cudag__doc_type type;
    bool plain;                 /* a scalar written without quotes or block */
    cudag__pos pos;             /* where the node starts */
    const char *str;            /* SCALAR: the value, NUL-terminated */
    uint32_t len;               /* SCALAR: its length */
    uint32_t n;                 /* SEQ: items; MAP: pairs */
    cudag__doc **items;         /* SEQ: n items; MAP: key0, value0, key1, … */
    uint64_t weight;            /* nodes below and including this one, with
                                   aliases expanded (saturating) */
};

/*
 * Parses one YAML document from text[0..len).  Everything is allocated in
 * arena a (owned by the caller); `file` is the name used in positions and
 * must live as long as the arena.  On success *root is the document (NULL for
 * an empty file).  On error reports to d and returns the code; *root is NULL.
 */
int cudag__parse(cudag__arena *a, const char *file, const char *text,
                 size_t len, cudag__doc **root, cudag__diag *d);

/* The value for `key` in a mapping, or NULL. */
const cudag__doc *cudag__doc_get(const cudag__doc *map, const char *key);

/* The position of the character at byte `off` of a scalar, for errors inside
 * it: exact for single-line scalars without escapes (the column counts the
 * characters before it); a multi-line scalar gives its own start. */
cudag__pos cudag__doc_pos_at(const cudag__doc *s, size_t off);

/* "a scalar", "a sequence", "a mapping": for messages. */
const char *cudag__doc_what(const cudag__doc *n);

/* ---- sources ---------------------------------------------------------- */

typedef struct cudag__source cudag__source;

/* One parsed file, in lowering order: a file's includes come before it. */
typedef struct cudag__file {
    const char *path;           /* as shown in positions */
    const char *dir;            /* where its relative paths start */
    const char *real;           /* canonical path: include-once, cycles */
    const cudag__doc *root;     /* NULL for an empty file */
    /* Found in an include directory rather than next to the file that
     * includes it: an installed manifest, whose module files may not be
     * built on this machine. */
    bool installed;
} cudag__file;

struct cudag__source {
    cudag__arena arena;         /* texts, trees, paths: everything below */
    cudag__file *files;
    uint32_t nfiles, cfiles;
    /* Child-graph files, read on first use (front/files.c), by path. */
    cudag__file *children;
    uint32_t nchildren, cchildren;
    const char **defines;       /* NULL-terminated copies of the options' */
    unsigned flags;
};

/* Frees a source and everything in its arena; accepts NULL. */
void cudag__source_free(cudag__source *s);

#endif /* CUDAG_PARSE_H */
