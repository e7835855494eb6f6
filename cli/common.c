/*
 * common.c: option parsing and error printing — the plumbing every subcommand shares.
 */
#include "cli/cli.h"
#include "policies/registry.h"

#include "base/csvin.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_exit_code(int status)
{
    return study_exit_status(status);
}

void cli_print_diag(const sim_diag *d)
{
    study_print_diag(d);
}

int cli_fail(int st, sim_diag *d)
{
    if (st == SIM_ENOMEM && !d->msg[0])
        sim_diag_set(d, st, NULL, 0, 0, "out of memory");
    cli_print_diag(d);
    return cli_exit_code(st);
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    study_verror(fmt, ap);
    va_end(ap);
    return 2;
}

/* Options that add a value each time they are given; every other one holds one value. */
static bool repeatable(const char *name)
{
    return !strcmp(name, "--policy-opt") || !strcmp(name, "--trace-opt") ||
           !strcmp(name, "--steps");
}

/* The value of an earlier `name` in argv[0..end), or NULL. The `model` handlers receive
 * their options from argv[0] on; elsewhere argv[0] and argv[1] are the program and the
 * command, which never start with "--". */
static const char *earlier(char **argv, int end, const char *name)
{
    size_t n = strlen(name);
    const char *found = NULL;
    for (int k = 0; k < end; k++) {
        if (strncmp(argv[k], name, n) != 0)
            continue;
        if (argv[k][n] == '=')
            found = argv[k] + n + 1;
        else if (argv[k][n] == '\0' && k + 1 < end)
            found = argv[++k];
    }
    return found;
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    int at = *i;
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
    } else if (a[n] != '\0') {
        return 0;
    } else if (*i + 1 >= argc) {
        cli_usage_error("option %s needs a value", name);
        return -1;
    } else {
        *val = argv[++*i];
    }
    /* A second value would silently replace the first: one of them is a mistake. */
    const char *first = repeatable(name) ? NULL : earlier(argv, at, name);
    if (first) {
        char q1[128], q2[128];
        csvin_quote(first, strlen(first), q1, sizeof q1);
        csvin_quote(*val, strlen(*val), q2, sizeof q2);
        cli_usage_error("option %s is given twice (%s, then %s): give it once", name, q1, q2);
        return -1;
    }
    return 1;
}

int cli_str_opts(int argc, char **argv, int *i, const cli_str_opt *opts)
{
    for (const cli_str_opt *o = opts; o->name; o++) {
        int m = cli_opt(argc, argv, i, o->name, o->dst);
        if (m != 0)
            return m;
    }
    return 0;
}

bool cli_flag(char **argv, int i, const char *name)
{
    return strcmp(argv[i], name) == 0;
}

bool cli_u64(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t x;
    if (!csvin_parse_u64(val, strlen(val), &x) || x < min || x > max) {
        char q[128];
        csvin_quote(val, strlen(val), q, sizeof q);
        cli_usage_error("option %s: expected an integer %llu..%llu, got %s", opt,
                        (unsigned long long)min, (unsigned long long)max, q);
        return false;
    }
    *out = x;
    return true;
}

bool cli_double(const char *opt, const char *val, double min, double max, double *out)
{
    double x;
    if (!csvin_parse_double(val, strlen(val), &x) || x < min || x > max) {
        char q[128];
        csvin_quote(val, strlen(val), q, sizeof q);
        cli_usage_error("option %s: expected a number in [%g, %g], got %s", opt, min, max, q);
        return false;
    }
    *out = x;
    return true;
}

bool cli_out_dir(const char *opt, const char *val)
{
    if (val[0])
        return true;
    cli_usage_error("option %s: expected a directory name, got an empty one", opt);
    return false;
}

bool cli_seconds(const char *opt, const char *val, double *out)
{
    size_t len = strlen(val);
    double mult = 1;
    if (len > 0) {
        switch (val[len - 1]) {
        case 's':
            mult = 1;
            len--;
            break;
        case 'm':
            mult = 60;
            len--;
            break;
        case 'h':
            mult = 3600;
            len--;
            break;
        case 'd':
            mult = 86400;
            len--;
            break;
        default:
            break;
        }
    }
    double x;
    bool number = csvin_parse_double(val, len, &x);
    if (!number || x < 0 || x * mult > SIM_TIME_LIMIT_S) {
        char q[128];
        csvin_quote(val, strlen(val), q, sizeof q);
        /* A number, but not a duration a run can hold: the bound it passed is named
         * (an option may ask for more than 0 s; its own check says so). */
        if (number && x < 0)
            cli_usage_error("option %s: expected a duration, not a negative number, got %s", opt,
                            q);
        else if (number)
            cli_usage_error("option %s: expected a duration of at most %.0f s, got %s", opt,
                            (double)SIM_TIME_LIMIT_S, q);
        else
            cli_usage_error("option %s: expected a duration such as 90, 90s, 15m, 2h or 1d, got %s",
                            opt, q);
        return false;
    }
    *out = x * mult;
    return true;
}

void cli_policy_opt_split(const char *val, const char **pol, size_t *pol_len, const char **key,
                          size_t *key_len)
{
    const char *eq = strchr(val, '=');
    size_t head = eq ? (size_t)(eq - val) : strlen(val);
    const char *colon = memchr(val, ':', head);
    *pol = val;
    *pol_len = colon ? (size_t)(colon - val) : 0;
    *key = colon ? colon + 1 : val;
    *key_len = (size_t)(val + head - *key);
}

bool cli_policy_opt_applies(const char *val, const char *policy)
{
    const char *pol, *key;
    size_t pol_len, key_len;
    cli_policy_opt_split(val, &pol, &pol_len, &key, &key_len);
    if (!policy)
        return true;
    if (pol_len)
        return strlen(policy) == pol_len && strncmp(policy, pol, pol_len) == 0;
    const policy_ops *p = policy_find(policy);
    return !p || policy_has_option(p, key, key_len);
}

bool cli_check_policy_opts(const char *const *opts, size_t n_opts, const char *const *policies,
                           size_t n_policies)
{
    for (size_t i = 0; i < n_opts; i++) {
        const char *pol, *key;
        size_t pol_len, key_len;
        cli_policy_opt_split(opts[i], &pol, &pol_len, &key, &key_len);
        if (!strchr(opts[i], '=') || key_len == 0) {
            cli_usage_error("--policy-opt '%s': expected KEY=VALUE or POLICY:KEY=VALUE", opts[i]);
            return false;
        }
        /* Two values for one option of one policy: refused (the policy would refuse them
         * too, but only once it runs). */
        for (size_t j = 0; j < i; j++) {
            const char *pol2, *key2;
            size_t pol2_len, key2_len;
            cli_policy_opt_split(opts[j], &pol2, &pol2_len, &key2, &key2_len);
            if (key2_len == key_len && !strncmp(key, key2, key_len) &&
                (!pol_len || !pol2_len || (pol_len == pol2_len && !strncmp(pol, pol2, pol_len)))) {
                bool clash = false;
                for (size_t q = 0; q < n_policies && !clash; q++)
                    clash = cli_policy_opt_applies(opts[i], policies[q]) &&
                            cli_policy_opt_applies(opts[j], policies[q]);
                if (clash) {
                    cli_usage_error("--policy-opt '%s' and '%s' set the same option: give it "
                                    "once",
                                    opts[j], opts[i]);
                    return false;
                }
            }
        }
        const policy_ops *named = NULL;
        if (pol_len) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(pol_len < 63 ? pol_len : 63), pol);
            if (!(named = policy_find(name))) {
                char known[512];
                policy_known_names(known, sizeof known);
                cli_usage_error("--policy-opt '%s': unknown policy '%s' (known: %s)", opts[i], name,
                                known);
                return false;
            }
            size_t k = 0;
            while (k < n_policies && strcmp(policies[k], name) != 0)
                k++;
            if (k == n_policies) {
                char runs[512];
                size_t o = 0;
                runs[0] = '\0';
                for (size_t q = 0; q < n_policies && o < sizeof runs; q++)
                    o += (size_t)snprintf(runs + o, sizeof runs - o, "%s%s", q ? ", " : "",
                                          policies[q]);
                cli_usage_error("--policy-opt '%s': policy '%s' is not run here (the policies "
                                "run: %s)",
                                opts[i], name, runs);
                return false;
            }
            if (!policy_has_option(named, key, key_len)) {
                cli_usage_error("--policy-opt '%s': policy '%s' has no option '%.*s' (see "
                                "clustersim policies)",
                                opts[i], name, (int)key_len, key);
                return false;
            }
            continue;
        }
        /* KEY=VALUE goes to every policy that has the option; at least one must. */
        size_t k = 0;
        for (const policy_ops *p; k < n_policies; k++)
            if ((p = policy_find(policies[k])) && policy_has_option(p, key, key_len))
                break;
        if (k == n_policies && n_policies == 1) {
            cli_usage_error("--policy-opt '%s': policy '%s' has no option '%.*s' (see "
                            "clustersim policies)",
                            opts[i], policies[0], (int)key_len, key);
            return false;
        }
        if (k == n_policies) {
            cli_usage_error("--policy-opt '%s': none of the policies has an option '%.*s' (see "
                            "clustersim policies)",
                            opts[i], (int)key_len, key);
            return false;
        }
    }
    return true;
}

bool cli_policy_opt(policy_config *cfg, const char *val)
{
    const char *eq = strchr(val, '=');
    if (!eq || eq == val) {
        cli_usage_error("--policy-opt '%s': expected KEY=VALUE", val);
        return false;
    }
    if (!cli_policy_opt_applies(val, cfg->policy))
        return true;
    const char *colon = memchr(val, ':', (size_t)(eq - val));
    const char *key = colon ? colon + 1 : val;
    if (cfg->n >= POLICY_MAX_OPTIONS) {
        cli_usage_error("too many --policy-opt (at most %d)", POLICY_MAX_OPTIONS);
        return false;
    }
    size_t klen = (size_t)(eq - key);
    if (klen >= sizeof cfg->key[0]) {
        cli_usage_error("--policy-opt '%s': the key is too long", val);
        return false;
    }
    memcpy(cfg->key[cfg->n], key, klen);
    cfg->key[cfg->n][klen] = '\0';
    cfg->value[cfg->n] = eq + 1;
    cfg->n++;
    return true;
}

/* One seed of --seeds, the len bytes at s (parsed in place: a copy into a buffer would cut
 * a long one short). Prints the error and returns false when it is not an integer 0..max. */
static bool seed_piece(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    if (!csvin_parse_u64(s, len, out) || *out > max) {
        char q[128];
        csvin_quote(s, len, q, sizeof q);
        cli_usage_error("option --seeds: expected an integer 0..%llu, got %s",
                        (unsigned long long)max, q);
        return false;
    }
    return true;
}

size_t cli_seeds(const char *s, uint64_t *seeds, size_t max)
{
    const char *dots = strstr(s, "..");
    if (dots) {
        uint64_t lo, hi;
        if (!seed_piece(s, (size_t)(dots - s), UINT64_MAX - max, &lo) ||
            !seed_piece(dots + 2, strlen(dots + 2), UINT64_MAX, &hi))
            return 0;
        if (hi < lo || hi - lo >= max) {
            cli_usage_error("option --seeds: expected A..B with A <= B and at most %zu seeds, "
                            "got \"%s\"",
                            max, s);
            return 0;
        }
        for (uint64_t k = lo; k <= hi; k++)
            seeds[k - lo] = k;
        return (size_t)(hi - lo + 1);
    }
    size_t n = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (n >= max) {
            cli_usage_error("option --seeds: at most %zu seeds", max);
            return 0;
        }
        if (!seed_piece(p, len, UINT64_MAX, &seeds[n]))
            return 0;
        for (size_t k = 0; k < n; k++)
            if (seeds[k] == seeds[n]) {
                cli_usage_error("option --seeds: seed %llu is given twice",
                                (unsigned long long)seeds[n]);
                return 0;
            }
        n++;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

bool cli_trace_opt(const char **opts, uint32_t *n, const char *val)
{
    const char *eq = strchr(val, '=');
    if (!eq || eq == val) {
        cli_usage_error("--trace-opt '%s': expected KEY=VALUE", val);
        return false;
    }
    if (*n >= TRACE_MAX_OPTS) {
        cli_usage_error("too many --trace-opt (at most %d)", TRACE_MAX_OPTS);
        return false;
    }
    opts[(*n)++] = val;
    return true;
}

static void remove_tmp_and_die(int sig)
{
    sim_outfile_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        struct sigaction old, sa = {.sa_handler = remove_tmp_and_die};
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[k], &sa, NULL);
    }
}
