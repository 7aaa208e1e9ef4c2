/* files.h — the front end's files: a graph file and its includes read into
 * a source (files.c). */
#ifndef CUDAG_FRONT_FILES_H
#define CUDAG_FRONT_FILES_H

#include "cudag.h"

#include <stddef.h>

typedef struct cudag__arena cudag__arena;
typedef struct cudag__diag cudag__diag;
typedef struct cudag__lower cudag__lower;
typedef struct cudag__doc cudag__doc;
typedef struct cudag__file cudag__file;
typedef struct cudag__source cudag__source;

/* dir/name in arena a; name itself when it is absolute or dir is empty or
 * ".".  NULL: no memory. */
char *cudag__path_join(cudag__arena *a, const char *dir, const char *name);

/* A copy of the NULL-terminated list in arena a (an empty one for NULL).
 * NULL: no memory. */
const char **cudag__copy_list(cudag__arena *a, const char *const *list);

/* Reads the file `path` (or text/len when text is not NULL, named path) and
 * everything it includes into a new source, in lowering order, with the
 * defines and flags of opts (may be NULL).  Every error goes to d.  On error
 * *out is NULL and nothing is allocated; else the caller frees *out with
 * cudag__source_free. */
int cudag__load_source(const char *path, const char *text, size_t len,
                       const cudag_options *opts, cudag__source **out,
                       cudag__diag *d);

/* lw->read_graph (yaml/lowering.h): the child graph file that `name` names,
 * relative to dir, into *out: read and parsed into lw's source on first use,
 * as kept there after (a loaded graph never reads it again).  Reports at
 * name's position and returns the code. */
int cudag__read_child_graph(cudag__lower *lw, const char *dir,
                            const cudag__doc *name, cudag__file *out);

#endif /* CUDAG_FRONT_FILES_H */
