/* shipped.h — where the library finds the files it ships (the kernels'
 * manifest and fatbin), so that `include: cudag_kernels.yaml` works the same
 * in the cudag tool and in any program using the library. */
#ifndef CUDAG_PATHS_H
#define CUDAG_PATHS_H


typedef struct cudag__arena cudag__arena;

/*
 * The directory of the shipped files that go with this library, canonical,
 * in arena a: the first that exists of, beside the code that was loaded (the
 * library's file, or the program it is linked into), a build tree's kernels/
 * or an install's data directory; else the configured prefix's data
 * directory.  One directory, so that a build tree never mixes its library
 * with the manifest of another version installed elsewhere.  NULL when none
 * exists (or memory ran out).
 */
const char *cudag__shipped_dir(cudag__arena *a);

#endif /* CUDAG_PATHS_H */
