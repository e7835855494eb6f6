/*
 * cmd_trace_curves.c: `clustersim trace curves`, diurnal demand curves of online
 * services (traces/curves.h) for runs with --demand.
 */
#include "cli/cli.h"
#include "cli/trace_cmds.h"
#include "base/csvin.h"
#include "study/files.h"
#include "traces/curves.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* clustersim trace curves: diurnal demand curves of online services. */
int cli_trace_curves(int argc, char **argv)
{
    trace_diurnal p = {.services = 2,
                       .prefix = "svc",
                       .peak = 16,
                       .trough = 4,
                       .period_s = 86400,
                       .step_s = 600,
                       .length_s = 86400,
                       .noise = 0.1,
                       .seed = 1};
    const char *out = NULL, *v;
    uint64_t u;
    for (int i = 3; i < argc; i++) {
        int m;
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace curves --out FILE [--services N] [--peak R]\n"
                   "       [--trough R] [--period T] [--step T] [--length T] [--noise X]\n"
                   "       [--seed N] [--prefix NAME]\n"
                   "Diurnal demand curves of online services, CSV service,time,replicas:\n"
                   "replicas(t) = trough + (peak - trough) (1 - cos(2 pi (t/period + phase)))/2,\n"
                   "times (1 + noise N(0,1)), rounded, clamped to 0..peak, one point per step\n"
                   "from 0 to length (times to the microsecond; a step of at least 1e-6 s); a\n"
                   "seeded random phase per service. Services are named\n"
                   "PREFIX0, PREFIX1, ... (defaults: 2 services svc*, peak 16, trough 4, period\n"
                   "1d, step 10m, length 1d, noise 0.1, seed 1).\n");
            return 0;
        }
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--services")) {
            if (m < 0 || !cli_u64("--services", v, 1, 100000, &u))
                return 2;
            p.services = (uint32_t)u;
        } else if (OPT("--peak")) {
            if (m < 0 || !cli_u64("--peak", v, 0, 1000000, &u))
                return 2;
            p.peak = (uint32_t)u;
        } else if (OPT("--trough")) {
            if (m < 0 || !cli_u64("--trough", v, 0, 1000000, &u))
                return 2;
            p.trough = (uint32_t)u;
        } else if (OPT("--period")) {
            if (m < 0 || !cli_seconds("--period", v, &p.period_s))
                return 2;
        } else if (OPT("--step")) {
            if (m < 0 || !cli_seconds("--step", v, &p.step_s))
                return 2;
        } else if (OPT("--length")) {
            if (m < 0 || !cli_seconds("--length", v, &p.length_s))
                return 2;
        } else if (OPT("--noise")) {
            if (m < 0 || !cli_double("--noise", v, 0, 10, &p.noise))
                return 2;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &p.seed))
                return 2;
        } else if (OPT("--prefix")) {
            if (m < 0)
                return 2;
            /* The names are written unquoted and read back by --demand as job ids: no
             * delimiter, quote or line break, and room for an index of 5 digits. */
            if (strpbrk(v, ",\"\r\n") || strlen(v) > SIM_ID_MAX - 6) {
                char q[128];
                csvin_quote(v, strlen(v), q, sizeof q);
                return cli_usage_error("option --prefix: expected a name of at most %d bytes "
                                       "without a comma, quote or line break, got %s",
                                       SIM_ID_MAX - 6, q);
            }
            p.prefix = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim trace curves'", argv[i]);
        }
#undef OPT
    }
    if (!out)
        return cli_usage_error("clustersim trace curves needs --out FILE");
    if (p.trough > p.peak)
        return cli_usage_error("--trough %u is above --peak %u", p.trough, p.peak);
    if (p.period_s <= 0 || p.step_s <= 0)
        return cli_usage_error("--period and --step must be positive");
    /* Times are read back to the microsecond: a finer step would repeat them. */
    if (p.step_s < 1e-6)
        return cli_usage_error("option --step: expected at least 1e-6 s (the time resolution "
                               "of the curves), got %g s",
                               p.step_s);
    /* A step far below the length would write tens of gigabytes before anyone noticed. */
    if (p.length_s / p.step_s > 1e7)
        return cli_usage_error("options --length and --step: %.17g points per service, at most "
                               "10,000,000 (give a larger --step or a shorter --length)",
                               floor(p.length_s / p.step_s) + 1);
    study_outfile o;
    if (!study_out_open_path(&o, out))
        return 2;
    sim_diag d = {0};
    int st = trace_curves_diurnal_write(o.f, &p, &d);
    if (!study_out_close(&o, st == SIM_OK))
        return 2;
    return st == SIM_OK ? 0 : cli_fail(st, &d);
}
