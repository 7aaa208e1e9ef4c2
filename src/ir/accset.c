/* accset.c — the list of byte ranges a node may read and write (accset.h),
 * below the kinds so that each kind's access step can fill one. */
#include "ir/accset.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stdint.h>

void cudag__access_add(cudag__accset *s, const cudag_graph *g,
                       uint32_t buffer, uint64_t off, uint64_t count,
                       unsigned mode, bool unknown, const cudag__node *who,
                       cudag__pos pos)
{
    if (buffer >= g->nbuffers || count == 0 || mode == 0)
        return;
    const cudag__buffer *b = &g->buffers[buffer];
    if (off >= b->count)
        return;
    uint64_t end = count > b->count - off ? b->count : off + count;
    uint64_t es = cudag_type_size(b->type);
    cudag__access *a = cudag__vec_push((void **)&s->a, &s->n, &s->cap,
                                       sizeof *a);
    if (!a) {
        s->oom = true;
        return;
    }
    a->buffer = buffer;
    a->mode = (uint8_t)mode;
    a->unknown = unknown;
    a->lo = off * es;
    a->hi = end * es;
    a->who = who;
    a->pos = pos;
}

const char *cudag__access_mode_name(unsigned mode)
{
    return mode == CUDAG__ACC_READ    ? "read"
           : mode == CUDAG__ACC_WRITE ? "write"
                                      : "read-write";
}

/* cudag_set_param_access stores the public values as they are. */
_Static_assert((int)CUDAG__ACC_READ == (int)CUDAG_ACCESS_READ &&
                   (int)CUDAG__ACC_WRITE == (int)CUDAG_ACCESS_WRITE &&
                   (int)CUDAG__ACC_RW == (int)CUDAG_ACCESS_READ_WRITE,
               "accset.h's modes are cudag.h's");
