/* cmd_bench.c — placeholder until `cudag bench` lands. */
#include "cli.h"

int cmd_bench(cli *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "%s bench: not implemented yet\n", c->prog);
    return CLI_EUSAGE;
}
