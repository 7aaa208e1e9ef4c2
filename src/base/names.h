/* names.h — type names parsed back into cudag_type, beside names.c's table
 * of the public enumerations as text (cudag.h declares the public half). */
#ifndef CUDAG_NAMES_H
#define CUDAG_NAMES_H

#include "cudag.h"

#include <stdbool.h>
#include <stddef.h>

/* Parses a type name ("f32", "bf16", "ptr", …); CUDAG_TYPE_NONE if unknown. */
cudag_type cudag__type_parse(const char *s, size_t n);

/* True for the types a buffer's elements may have (not ptr, not cond). */
bool cudag__is_elem_type(cudag_type t);

#endif /* CUDAG_NAMES_H */
