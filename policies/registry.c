/*
 * registry.c: every policy compiled into clustersim, by name. Adding a policy means
 * one `extern` line and one entry here; there is no dynamic loading.
 */
#include "policies/registry.h"

#include <stdio.h>
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
extern const policy_ops policy_sjf;
extern const policy_ops policy_qssf;
extern const policy_ops policy_las;
extern const policy_ops policy_srtf;
extern const policy_ops policy_srsf;
extern const policy_ops policy_gittins;
extern const policy_ops policy_themis;
extern const policy_ops policy_antman;
extern const policy_ops policy_interleave;
extern const policy_ops policy_hetero;
extern const policy_ops policy_static_order;
extern const policy_ops policy_data_parallel;
extern const policy_ops policy_gavel;
extern const policy_ops policy_elastic;
extern const policy_ops policy_rigid_min;
extern const policy_ops policy_static;
extern const policy_ops policy_optimus;

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
    &policy_sjf,
    &policy_qssf,
    &policy_las,
    &policy_srtf,
    &policy_srsf,
    &policy_gittins,
    &policy_themis,
    &policy_antman,
    &policy_interleave,
    &policy_hetero,
    &policy_static_order,
    &policy_data_parallel,
    &policy_gavel,
    &policy_elastic,
    &policy_rigid_min,
    &policy_static,
    &policy_optimus,
    NULL,
};

const policy_ops *policy_find(const char *name)
{
    for (int i = 0; policy_all[i]; i++)
        if (strcmp(policy_all[i]->name, name) == 0)
            return policy_all[i];
    return NULL;
}

void policy_known_names(char *buf, size_t cap)
{
    size_t o = 0;
    if (cap)
        buf[0] = '\0';
    for (int i = 0; policy_all[i] && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", policy_all[i]->name);
}

bool policy_has_option(const policy_ops *p, const char *key, size_t len)
{
    for (const policy_option *o = p->options; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, key, len) == 0)
            return true;
    return false;
}

bool policy_option_writes(const policy_ops *p, const char *key, size_t len)
{
    for (const char *const *w = p->output_options; w && *w; w++)
        if (strlen(*w) == len && strncmp(*w, key, len) == 0)
            return true;
    return false;
}
