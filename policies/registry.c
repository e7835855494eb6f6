/*
 * registry.c: every policy compiled into clustersim, by name. Adding a policy means
 * one `extern` line and one entry here; there is no dynamic loading.
 */
#include "policies/policy.h"

#include <string.h>

extern const policy_ops policy_fifo;
extern const policy_ops policy_binpack;
extern const policy_ops policy_random;
extern const policy_ops policy_predictive;
extern const policy_ops policy_fgd;
extern const policy_ops policy_bestfit;
extern const policy_ops policy_dotprod;
extern const policy_ops policy_gpupacking;
extern const policy_ops policy_gpuclustering;
extern const policy_ops policy_fairshare;
extern const policy_ops policy_quota;

const policy_ops *const policy_all[] = {
    &policy_fifo,
    &policy_binpack,
    &policy_random,
    &policy_predictive,
    &policy_fgd,
    &policy_bestfit,
    &policy_dotprod,
    &policy_gpupacking,
    &policy_gpuclustering,
    &policy_fairshare,
    &policy_quota,
    NULL,
};

const policy_ops *policy_find(const char *name)
{
    for (int i = 0; policy_all[i]; i++)
        if (strcmp(policy_all[i]->name, name) == 0)
            return policy_all[i];
    return NULL;
}
