/* cmd_run.c — placeholder until `cudag run` lands. */
#include "cli.h"

int cmd_run(cli *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "%s run: not implemented yet\n", c->prog);
    return CLI_EUSAGE;
}
