/*
 * harness.c: the measurement loop shared by every backend — selection of modes and
 * kernels, solo and pair runs repeated `trials` times, medians and spreads, the CSV
 * rows and the printed slowdown table (see ib.h). Runs are in a fixed order (modes,
 * then kernels in backend order), so two runs of the tool do the same things.
 */
#include "bench/interference/ib.h"
#include "base/textout.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char ib_csv_header[] = "backend,device,driver,mode,kernel,resource,partner,partner_resource,"
                             "unit,solo_rate,corun_rate,slowdown,trials,spread";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, uint32_t n, double *spread)
{
    double s[IB_MAX_TRIALS];
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    if (spread)
        *spread = m > 0 ? (s[n - 1] - s[0]) / m : 0;
    return m;
}

/* Find name (len bytes) in a NULL-terminated list or the kernel table. */
static int find_mode(const ib_backend *b, const char *name, size_t len)
{
    for (int i = 0; b->modes[i]; i++)
        if (strlen(b->modes[i]) == len && strncmp(b->modes[i], name, len) == 0)
            return i;
    return -1;
}

static int find_kernel(const ib_backend *b, const char *name, size_t len)
{
    for (uint32_t i = 0; i < b->n_kernels; i++)
        if (strlen(b->kernels[i].name) == len && strncmp(b->kernels[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

static void list_names(const ib_backend *b, bool modes, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; modes ? b->modes[i] != NULL : i < b->n_kernels; i++)
        o += (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s", i ? ", " : "",
                              modes ? b->modes[i] : b->kernels[i].name);
}

int ib_select(const ib_backend *b, const char *list, bool modes, uint32_t *out, uint32_t *n,
              char *err, size_t errsz)
{
    *n = 0;
    if (!list) {
        if (modes) {
            out[(*n)++] = 0;
        } else {
            for (uint32_t i = 0; i < b->n_kernels; i++)
                out[(*n)++] = i;
        }
        return 0;
    }
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int k = modes ? find_mode(b, p, len) : find_kernel(b, p, len);
        if (k < 0) {
            char known[256];
            list_names(b, modes, known, sizeof known);
            snprintf(err, errsz, "unknown %s '%.*s' for the %s backend (known: %s)",
                     modes ? "mode" : "kernel", (int)len, p, b->name, known);
            return -1;
        }
        bool dup = false;
        for (uint32_t i = 0; i < *n; i++)
            dup |= out[i] == (uint32_t)k;
        if (!dup && *n < IB_MAX_KERNELS)
            out[(*n)++] = (uint32_t)k;
        p += len + (comma ? 1 : 0);
    }
    if (*n == 0) {
        snprintf(err, errsz, "empty %s list", modes ? "mode" : "kernel");
        return -1;
    }
    return 0;
}

static void write_row(const ib_backend *b, const ib_options *o, const char *mode, uint32_t k,
                      uint32_t p, double solo, const double *corun, uint32_t trials)
{
    double spread, co = median(corun, trials, &spread);
    const ib_kernel_info *ki = &b->kernels[k], *pi = &b->kernels[p];
    fprintf(o->csv, "%s,", b->name);
    sim_csv_put_field(o->csv, b->device);
    fputc(',', o->csv);
    sim_csv_put_field(o->csv, b->driver);
    fprintf(o->csv, ",%s,%s,%s,%s,%s,%s,%.6g,%.6g,%.6g,%u,%.4g\n", mode, ki->name, ki->resource,
            pi->name, pi->resource, ki->unit, solo, co, co > 0 ? solo / co : 0.0, trials, spread);
}

int ib_measure(const ib_backend *b, const ib_options *o, char *err, size_t errsz)
{
    uint32_t modes[IB_MAX_KERNELS], n_modes, ks[IB_MAX_KERNELS], n_ks;
    if (ib_select(b, o->modes, true, modes, &n_modes, err, errsz) ||
        ib_select(b, o->kernels, false, ks, &n_ks, err, errsz))
        return -1;
    if (o->trials < 1 || o->trials > IB_MAX_TRIALS) {
        snprintf(err, errsz, "trials must be 1..%d", IB_MAX_TRIALS);
        return -1;
    }
    if (!(o->seconds > 0) || !(o->warmup_s >= 0)) {
        snprintf(err, errsz, "the measured time must be > 0 and the warm-up >= 0");
        return -1;
    }
    fprintf(o->csv, "%s\n", ib_csv_header);
    for (uint32_t mi = 0; mi < n_modes; mi++) {
        const char *mode = b->modes[modes[mi]];
        double solo[IB_MAX_KERNELS][IB_MAX_TRIALS];
        double slow[IB_MAX_KERNELS][IB_MAX_KERNELS];
        for (uint32_t t = 0; t < o->trials; t++)
            for (uint32_t a = 0; a < n_ks; a++) {
                double r;
                if (b->run(b->ctx, mode, &ks[a], 1, o->warmup_s, o->seconds, &r, err, errsz))
                    return -1;
                solo[a][t] = r;
            }
        double solo_med[IB_MAX_KERNELS];
        for (uint32_t a = 0; a < n_ks; a++)
            solo_med[a] = median(solo[a], o->trials, NULL);
        for (uint32_t a = 0; a < n_ks; a++)
            for (uint32_t c = a; c < n_ks; c++) {
                double ra[IB_MAX_TRIALS], rc[IB_MAX_TRIALS];
                uint32_t pair[2] = {ks[a], ks[c]};
                for (uint32_t t = 0; t < o->trials; t++) {
                    double r[2];
                    if (b->run(b->ctx, mode, pair, 2, o->warmup_s, o->seconds, r, err, errsz))
                        return -1;
                    /* A kernel beside itself: both copies measure the same thing. */
                    ra[t] = a == c ? 0.5 * (r[0] + r[1]) : r[0];
                    rc[t] = a == c ? ra[t] : r[1];
                }
                write_row(b, o, mode, ks[a], ks[c], solo_med[a], ra, o->trials);
                slow[a][c] = solo_med[a] / median(ra, o->trials, NULL);
                if (a != c) {
                    write_row(b, o, mode, ks[c], ks[a], solo_med[c], rc, o->trials);
                    slow[c][a] = solo_med[c] / median(rc, o->trials, NULL);
                }
            }
        if (!o->summary)
            continue;
        fprintf(o->summary,
                "%s backend, mode %s, %s (%s): solo rate, and slowdown of the "
                "row kernel beside the column kernel (median of %u trials)\n",
                b->name, mode, b->device, b->driver, o->trials);
        fprintf(o->summary, "%-8s %14s", "kernel", "solo");
        for (uint32_t c = 0; c < n_ks; c++)
            fprintf(o->summary, " %8s", b->kernels[ks[c]].name);
        fputc('\n', o->summary);
        for (uint32_t a = 0; a < n_ks; a++) {
            char solo_s[48];
            snprintf(solo_s, sizeof solo_s, "%.4g %s", solo_med[a], b->kernels[ks[a]].unit);
            fprintf(o->summary, "%-8s %14s", b->kernels[ks[a]].name, solo_s);
            for (uint32_t c = 0; c < n_ks; c++)
                fprintf(o->summary, " %8.3f", slow[a][c]);
            fputc('\n', o->summary);
        }
        fputc('\n', o->summary);
    }
    if (fflush(o->csv) != 0 || ferror(o->csv)) {
        snprintf(err, errsz, "cannot write the CSV");
        return -1;
    }
    return 0;
}
