/* paths.h — where the library finds the files it ships (the kernels'
 * manifest and fatbin), so that `include: cudag_kernels.yaml` works the same
 * in the cudag tool and in any program using the library. */
#ifndef CUDAG_PATHS_H
#define CUDAG_PATHS_H

#include "util.h"

/* At most this many shipped directories are returned. */
#define CUDAG__MAX_SHIPPED_DIRS 4

/*
 * Fills dirs[] with the directories that hold the shipped files, most
 * specific first, each existing and canonical, none twice: beside the code
 * that was loaded (the library file, or the program it is linked into) its
 * build tree's kernels/ or its install's data directory, then the data
 * directory of the configured prefix.  Returns how many; the strings live in
 * arena a.  Running out of memory only shortens the list.
 */
size_t cudag__shipped_dirs(cudag__arena *a,
                           const char *dirs[CUDAG__MAX_SHIPPED_DIRS]);

#endif /* CUDAG_PATHS_H */
