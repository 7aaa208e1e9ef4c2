/* exec.c — placeholder until the stage lands. */
#include "ir.h"
#include "lower.h"
