/* cudag.c — placeholder main until the CLI lands. */
#include "cudag.h"
#include <stdio.h>
int main(void) { puts(cudag_version_string()); return 0; }
