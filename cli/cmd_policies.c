/*
 * cmd_policies.c: `clustersim policies` — every policy with its summary and options.
 */
#include "cli/cli.h"
#include "policies/registry.h"

#include <stdio.h>

int cmd_policies(int argc, char **argv)
{
    if (argc == 3 && (cli_flag(argv, 2, "--help") || cli_flag(argv, 2, "-h"))) {
        puts("usage: clustersim policies\n"
             "Lists every policy with its summary, its options (--policy-opt KEY=DEFAULT) and\n"
             "the trace columns it needs.");
        return 0;
    }
    if (argc > 2)
        return cli_usage_error("clustersim policies takes no argument");
    for (int i = 0; policy_all[i]; i++) {
        const policy_ops *p = policy_all[i];
        printf("%-12s %s\n", p->name, p->summary ? p->summary : "");
        for (const policy_option *o = p->options; o && o->name; o++)
            printf("    --policy-opt %s=%s\n        %s\n", o->name, o->default_value,
                   o->help);
        if (p->needs_attrs) {
            printf("    needs trace columns:");
            for (int a = 0; a < SIM_ATTR_COUNT; a++)
                if ((p->needs_attrs >> a) & 1u)
                    printf(" %s", sim_attr_name((sim_attr)a));
            printf("\n");
        }
    }
    return 0;
}
