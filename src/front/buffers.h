/* buffers.h — the `buffers` and `conditions` sections (buffers.c). */
#ifndef CUDAG_FRONT_BUFFERS_H
#define CUDAG_FRONT_BUFFERS_H


typedef struct cudag__lower cudag__lower;
typedef struct cudag__file cudag__file;

/* Lowers f's `buffers` into lw->g; a wrong one is reported and marked
 * bad. */
void cudag__lower_buffers(cudag__lower *lw, const cudag__file *f);

/* Lowers f's `conditions` into lw->g; a wrong one is reported. */
void cudag__lower_conditions(cudag__lower *lw, const cudag__file *f);

#endif /* CUDAG_FRONT_BUFFERS_H */
