/* cmd_cache.c — `cudag cache clean`: empties the compile cache of CUDA
 * source modules. */
#include "cli.h"

#include <string.h>

static const char help[] =
    "Usage: %s cache clean\n"
    "Remove every compiled source module from the compile cache\n"
    "($CUDAG_CACHE_DIR, else $XDG_CACHE_HOME/cudag, else ~/.cache/cudag);\n"
    "nothing else in that directory is touched.  `run --no-cache` compiles\n"
    "without the cache instead.\n"
    "\nExit status: 0 success, 2 usage, 5 file error.\n";

int cmd_cache(cli *c, int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "-h") == 0)) {
        printf(help, c->prog);
        return CLI_OK;
    }
    if (argc != 2 || strcmp(argv[1], "clean") != 0)
        return cli_usage(c, "%s", argc < 2 ? "cache needs an action: clean"
                                           : "cache takes one action: clean");
    unsigned removed = 0;
    cudag_error e;
    if (cudag_cache_clean(&removed, &e) != CUDAG_OK) {
        fprintf(stderr, "%s cache: %s\n", c->prog, e.message);
        return CLI_EIO;
    }
    printf("removed %u compiled module%s\n", removed, removed == 1 ? "" : "s");
    return CLI_OK;
}
