/* bounds.h — a variable's entry in `vars`, plain (`B: 1`) or with bounds
 * (`B: {value: 1, min: 1, max: 16, multiple: 1}`), and the check of its
 * bounds once every variable has its value (bounds.c). */
#ifndef CUDAG_YAML_BOUNDS_H
#define CUDAG_YAML_BOUNDS_H

#include "base/map.h"
#include "yaml/expr.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"

#include <stddef.h>

/* The mapping form's keys: the value, then the bounds min, max and multiple
 * (the order of cudag__bounded's why). */
extern const char *const cudag__var_entry_keys[4];

/* The value of entry v, reporting nothing: v itself in the plain form, its
 * `value` (NULL without one) in the mapping form. */
const cudag__doc *cudag__var_entry_value(const cudag__doc *v);

/*
 * The value of variable key k's entry v: v itself in the plain form, or its
 * `value` in the mapping form.  Reports the mapping's mistakes as it meets
 * them (an unknown key, a bound that is not a scalar); returns NULL after
 * reporting a mapping without `value` (or with a misspelt one, reported as
 * the unknown key alone).  The returned node lives as long as v.
 */
const cudag__doc *cudag__var_value(cudag__lower *lw, const cudag__doc *k,
                                   const cudag__doc *v);

/* A variable with its value, to check against its bounds. */
typedef struct cudag__bounded {
    const cudag__doc *key, *entry;      /* its key and entry in `vars` */
    cudag__num value;
    /* Its value as written (the file's, or a -D's), shown before the number
     * where the two differ ("G = NH/NKV = 16"); NULL: the number alone. */
    const char *text;
    size_t len;
    /* Where the value (why[0]) and each bound (why[1] min, why[2] max,
     * why[3] multiple) came from, named after a violation's message ("-D
     * B=17" gives "(from -D B=17)"); NULL where the file says it. */
    const char *why[4];
    /* Checked as soon as its value is known, before the variables after
     * it have theirs; a check that cannot be made yet waits for the later
     * one, when every variable has its value. */
    bool early;
} cudag__bounded;

/*
 * Checks b's value against the `min`, `max` and `multiple` of its entry
 * (the plain form has none), each an expression evaluated now: env holds a
 * child graph file's variables (NULL for the graph's own, in lw->g).
 * record is the caller's record of the scope's variables (it frees it;
 * keys are the documents' names; NULL keeps none): early, those whose
 * check waits for the later pass, which b joins when a bound names a
 * variable not defined yet or its value names one that waits; later,
 * those out of bounds, which b joins when it is, or when its value names
 * one of them (it is then not checked: it follows from that mistake).
 * Returns CUDAG_OK (early, a
 * check that waits too); CUDAG__EBAD, with nothing reported, for a value
 * that follows from a variable out of bounds or a bound that names a
 * variable reported wrong; otherwise the code of the one error reported,
 * at the bound, counted in lw->nbounds (or CUDAG_ENOMEM, for the record).
 */
int cudag__check_bounds(cudag__lower *lw, const cudag__bounded *b,
                        const cudag__binding *env, cudag__map *record);

#endif /* CUDAG_YAML_BOUNDS_H */
