/*
 * policy_config.c: policy options given as --policy-opt key=value, checked against the
 * options a policy declares, and typed getters that fall back to the declared default.
 */
#include "sim/policy.h"

#include "base/csvin.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const policy_option *find_opt(const policy_option *opts, const char *key)
{
    for (; opts && opts->name; opts++)
        if (strcmp(opts->name, key) == 0)
            return opts;
    return NULL;
}

int policy_config_validate(const policy_config *cfg, const policy_option *opts, sim_diag *diag)
{
    for (uint32_t i = 0; i < cfg->n; i++) {
        const policy_option *opt = find_opt(opts, cfg->key[i]);
        if (opt) {
            /* An empty value is usually an unset shell variable, and a second value for
             * the same key a leftover: neither is guessed at. */
            if (!cfg->value[i] || !cfg->value[i][0]) {
                char q[200];
                csvin_quote(opt->default_value, strlen(opt->default_value), q, sizeof q);
                return sim_diag_set(diag, SIM_EINVAL, NULL, 0, 0,
                                    "policy '%s': option '%s': empty value (leave the option "
                                    "out to use its default, %s)",
                                    cfg->policy, cfg->key[i], q);
            }
            for (uint32_t k = 0; k < i; k++)
                if (strcmp(cfg->key[k], cfg->key[i]) == 0) {
                    char a[200], b[200];
                    csvin_quote(cfg->value[k], strlen(cfg->value[k]), a, sizeof a);
                    csvin_quote(cfg->value[i], strlen(cfg->value[i]), b, sizeof b);
                    return sim_diag_set(diag, SIM_EINVAL, NULL, 0, 0,
                                        "policy '%s': option '%s' is given twice (%s, then "
                                        "%s): give it once",
                                        cfg->policy, cfg->key[i], a, b);
                }
            continue;
        }
        char known[512] = "";
        size_t o = 0;
        for (const policy_option *p = opts; p && p->name && o + 40 < sizeof known; p++)
            o += (size_t)snprintf(known + o, sizeof known - o, "%s%s", o ? ", " : "", p->name);
        return sim_diag_set(diag, SIM_EINVAL, NULL, 0, 0,
                            "policy '%s' has no option '%s' (its options: %s)", cfg->policy,
                            cfg->key[i], o ? known : "none");
    }
    return SIM_OK;
}

const char *policy_config_get(const policy_config *cfg, const policy_option *opts,
                              const char *key)
{
    const char *v = NULL;
    /* policy_config_validate refuses a key given twice. */
    for (uint32_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->key[i], key) == 0)
            v = cfg->value[i];
    if (v)
        return v;
    const policy_option *o = find_opt(opts, key);
    return o ? o->default_value : NULL;
}

static int bad(const policy_config *cfg, const char *key, const char *what, const char *val,
               sim_diag *diag)
{
    char q[200];
    csvin_quote(val ? val : "", val ? strlen(val) : 0, q, sizeof q);
    return sim_diag_set(diag, SIM_EINVAL, NULL, 0, 0, "policy '%s': option '%s': expected %s, got %s",
                        cfg->policy, key, what, q);
}

int policy_config_double(const policy_config *cfg, const policy_option *opts, const char *key,
                         double min, double max, double *out, sim_diag *diag)
{
    const char *v = policy_config_get(cfg, opts, key);
    double x;
    if (!v || !csvin_parse_double(v, strlen(v), &x) || x < min || x > max) {
        char what[96];
        snprintf(what, sizeof what, "a number in [%g, %g]", min, max);
        return bad(cfg, key, what, v, diag);
    }
    *out = x;
    return SIM_OK;
}

int policy_config_u64(const policy_config *cfg, const policy_option *opts, const char *key,
                      uint64_t min, uint64_t max, uint64_t *out, sim_diag *diag)
{
    const char *v = policy_config_get(cfg, opts, key);
    uint64_t x;
    if (!v || !csvin_parse_u64(v, strlen(v), &x) || x < min || x > max) {
        char what[96];
        snprintf(what, sizeof what, "an integer %llu..%llu", (unsigned long long)min,
                 (unsigned long long)max);
        return bad(cfg, key, what, v, diag);
    }
    *out = x;
    return SIM_OK;
}

int policy_config_bool(const policy_config *cfg, const policy_option *opts, const char *key,
                       bool *out, sim_diag *diag)
{
    const char *v = policy_config_get(cfg, opts, key);
    if (v && (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") ||
              !strcasecmp(v, "on"))) {
        *out = true;
        return SIM_OK;
    }
    if (v && (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") ||
              !strcasecmp(v, "off"))) {
        *out = false;
        return SIM_OK;
    }
    return bad(cfg, key, "true or false", v, diag);
}

int policy_config_choice(const policy_config *cfg, const policy_option *opts, const char *key,
                         const char *const *choices, int *out, sim_diag *diag)
{
    const char *v = policy_config_get(cfg, opts, key);
    char what[256] = "one of ";
    size_t o = strlen(what);
    for (int i = 0; choices[i]; i++) {
        if (v && strcmp(v, choices[i]) == 0) {
            *out = i;
            return SIM_OK;
        }
        o += (size_t)snprintf(what + o, o < sizeof what ? sizeof what - o : 0, "%s%s",
                              i ? ", " : "", choices[i]);
    }
    return bad(cfg, key, what, v, diag);
}
