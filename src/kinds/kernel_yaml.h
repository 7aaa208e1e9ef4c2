/* kernel_yaml.h — what kernel.c takes from kernel_yaml.c: a kernel node
 * read from YAML, and a signature as text for messages. */
#ifndef CUDAG_KINDS_KERNEL_YAML_H
#define CUDAG_KINDS_KERNEL_YAML_H

#include "ir/graph.h"
#include "yaml/lowering.h"

#include <stddef.h>

/* The kernel node pending in p (its YAML body) lowered into its node: the
 * kernel (or the one a pick chooses), launch dimensions, shared memory,
 * cluster, priority and arguments.  Errors are reported through lw. */
void cudag__kernel_read_yaml(cudag__lower *lw, const cudag__pending *p);

/* "x: ptr, y: ptr, a: f32, n: i64" into buf (cap bytes), cut short with
 * "..." if it is long. */
void cudag__kernel_sig_text(const cudag__sig *s, char *buf, size_t cap);

#endif
