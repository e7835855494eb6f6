/*
 * gavel.c: Gavel job traces (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling
 * Policies for Deep Learning Workloads", OSDI'20; github.com/stanford-futuredata/gavel,
 * scheduler/utils.py parse_trace). Tab-separated, no header, one job per line, in
 * either layout (chosen by the first line's field count, then required of every line):
 *   10 fields: job_type, command, working_directory, num_steps_arg, needs_data_dir,
 *              total_steps, scale_factor, priority_weight, SLO, arrival_time
 *    7 fields: job_type, command, num_steps_arg, needs_data_dir, total_steps,
 *              arrival_time, scale_factor   (the older Philly-derived traces)
 *
 * Steps become time through a steps table job_type,scale_factor,gpu_type,steps_per_sec
 * (option steps_table=FILE; default <data dir>/models/data/gavel_steps.csv): work =
 * total_steps / steps_per_sec of (job_type, scale_factor) on the reference type
 * (option ref_gpu_type, default V100M16; 0 steps/s means "cannot run there"). A scale factor the table lacks takes the
 * largest smaller one that it has, scaled linearly (steps/s x sf / sf'). Job id = line
 * number; model = job_type; batch_size from "(batch size N)"; iterations = total_steps;
 * num_gpus = scale_factor. Streamed: arrival times must not decrease.
 */
#include "traces/trace_int.h"

#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gavel_options[] = {"steps_table", "ref_gpu_type", NULL};

typedef struct steps_entry {
    char *job_type;
    uint32_t scale_factor;
    double steps_per_sec;
} steps_entry;

typedef struct gavel_state {
    uint32_t layout; /* 10 or 7 fields; 0 before the first line */
    uint16_t ref_type;
    steps_entry *e;
    size_t n, cap;
    char table[512];
    char id[24];
} gavel_state;

static int add_entry(gavel_state *s, const char *jt, size_t len, uint32_t sf, double sps)
{
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        steps_entry *ne = sim_reallocarray(s->e, ncap, sizeof *ne);
        if (!ne)
            return SIM_ENOMEM;
        s->e = ne;
        s->cap = ncap;
    }
    char *name = sim_malloc(len + 1);
    if (!name)
        return SIM_ENOMEM;
    memcpy(name, jt, len);
    name[len] = '\0';
    s->e[s->n++] = (steps_entry){.job_type = name, .scale_factor = sf, .steps_per_sec = sps};
    return SIM_OK;
}

static int load_table(trace_reader *r, gavel_state *s, const char *path, sim_diag *d)
{
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    static const char *const cols[4] = {"job_type", "scale_factor", "gpu_type", "steps_per_sec"};
    static const char expected[] = "job_type,scale_factor,gpu_type,steps_per_sec";
    int32_t ix[4];
    csvin_row row;
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected the header %s",
                          expected);
    if (st < 0 || (st = csvin_map_header(in, &row, cols, 4, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int k = 0; k < 4; k++)
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s'; expected %s", cols[k], expected);
            goto out;
        }
    while ((st = csvin_next(in, &row, d)) == 1) {
        uint64_t sf;
        double sps;
        if (csvin_empty(&row, ix[0])) {
            st = csvin_field_error(in, &row, ix[0], "job_type", "a job type", d);
            goto out;
        }
        if ((st = csvin_u64(in, &row, ix[1], "scale_factor", 1, 65536, &sf, d)) ||
            (st = csvin_double(in, &row, ix[3], "steps_per_sec", 0, 1e12, &sps, d)))
            goto out;
        uint32_t t = (uint32_t)ix[2] < row.n
                         ? sim_intern_find(r->opt.gpu_types, row.f[ix[2]], row.len[ix[2]])
                         : SIM_INTERN_NONE;
        if (t == SIM_INTERN_NONE || t == 0) {
            char known[600], what[700];
            sim_intern_list(r->opt.gpu_types, ", ", known, sizeof known);
            snprintf(what, sizeof what, "a known GPU type (%s)", known);
            st = csvin_field_error(in, &row, ix[2], "gpu_type", what, d);
            goto out;
        }
        /* 0 steps/s marks a job that cannot run on that type (out of memory): kept, so
         * that such a job is refused rather than extrapolated from a smaller scale. */
        if (t != s->ref_type)
            continue;
        if (add_entry(s, row.f[ix[0]], row.len[ix[0]], (uint32_t)sf, sps) != SIM_OK) {
            st = sim_diag_set(d, SIM_ENOMEM, path, row.line, 0, "out of memory");
            goto out;
        }
    }
    if (st == 0 && s->n == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 0, 0,
                          "the steps table has no row for the reference GPU type %s",
                          sim_intern_name(r->opt.gpu_types, s->ref_type));
out:
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}

static int gavel_open(trace_reader *r, sim_diag *d)
{
    gavel_state *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    r->state = s;
    const char *ref = trace__opt(r, "ref_gpu_type");
    if (!ref)
        ref = "V100M16";
    uint32_t t = sim_intern_find(r->opt.gpu_types, ref, strlen(ref));
    if (t == SIM_INTERN_NONE || t == 0 || t >= SIM_MAX_GPU_TYPES) {
        char known[600];
        sim_intern_list(r->opt.gpu_types, ", ", known, sizeof known);
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "--trace-opt ref_gpu_type=%s: unknown GPU type (known: %s)", ref,
                            known);
    }
    s->ref_type = (uint16_t)t;
    const char *table = trace__opt(r, "steps_table");
    if (table) {
        snprintf(s->table, sizeof s->table, "%s", table);
    } else if (r->opt.data_dir) {
        snprintf(s->table, sizeof s->table, "%s/models/data/gavel_steps.csv", r->opt.data_dir);
        FILE *f = fopen(s->table, "r");
        if (!f)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "the gavel format needs a steps table: %s is absent; give "
                                "--trace-opt steps_table=FILE "
                                "(job_type,scale_factor,gpu_type,steps_per_sec)",
                                s->table);
        fclose(f);
    } else {
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "the gavel format needs --trace-opt steps_table=FILE "
                            "(job_type,scale_factor,gpu_type,steps_per_sec)");
    }
    return load_table(r, s, s->table, d);
}

static void gavel_close(trace_reader *r)
{
    gavel_state *s = r->state;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        sim_free(s->e[i].job_type);
    sim_free(s->e);
    sim_free(s);
    r->state = NULL;
}

/* Steps per second of (job type, scale factor) on the reference type, into *sps (0: it
 * cannot run so), and the table's scale factor it comes from into *from_sf; false when
 * the table has no row of the job type at that scale factor or a smaller one. */
static bool steps_per_sec(const gavel_state *s, const char *jt, uint32_t sf, double *sps,
                          uint32_t *from_sf)
{
    double best = 0;
    uint32_t best_sf = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->e[i].job_type, jt) != 0)
            continue;
        if (s->e[i].scale_factor == sf) {
            *sps = s->e[i].steps_per_sec;
            *from_sf = sf;
            return true;
        }
        if (s->e[i].scale_factor < sf && s->e[i].scale_factor > best_sf) {
            best_sf = s->e[i].scale_factor;
            best = s->e[i].steps_per_sec;
        }
    }
    *sps = best_sf ? best * sf / best_sf : 0;
    *from_sf = best_sf;
    return best_sf != 0;
}

static int gavel_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    gavel_state *s = r->state;
    const csvin *in = r->in;
    if (!s->layout) {
        if (row->n != 10 && row->n != 7)
            return sim_diag_set(d, SIM_EPARSE, r->path, row->line,
                                (int)(row->n > 10 ? 10 : row->n) + 1,
                                "expected 10 tab-separated fields (job_type, command, "
                                "working_directory, num_steps_arg, needs_data_dir, total_steps, "
                                "scale_factor, priority_weight, SLO, arrival_time) or 7 "
                                "(job_type, command, num_steps_arg, needs_data_dir, total_steps, "
                                "arrival_time, scale_factor), got %u",
                                row->n);
        s->layout = row->n;
    }
    if (row->n != s->layout)
        return sim_diag_set(
            d, SIM_EPARSE, r->path, row->line, (int)(row->n < s->layout ? row->n : s->layout) + 1,
            "expected %u tab-separated fields like the first line, got %u", s->layout, row->n);
    bool ten = s->layout == 10;
    int32_t c_steps = ten ? 5 : 4, c_sf = 6, c_arrival = ten ? 9 : 5;
    r->submit_col = c_arrival;
    int st;
    uint64_t steps, sf, flag;
    double x;
    if (csvin_empty(row, 0))
        return csvin_field_error(in, row, 0, "job_type", "a job type", d);
    if ((st = csvin_u64(in, row, ten ? 4 : 3, "needs_data_dir", 0, 1, &flag, d)) ||
        (st = csvin_u64(in, row, c_steps, "total_steps", 1, UINT64_C(1) << 50, &steps, d)) ||
        (st = csvin_u64(in, row, c_sf, "scale_factor", 1, 65536, &sf, d)) ||
        (st = csvin_seconds(in, row, c_arrival, "arrival_time", 0, SIM_TIME_LIMIT_S, &j->submit_us, d)))
        return st;
    if (ten && ((st = csvin_double(in, row, 7, "priority_weight", 0, 1e12, &x, d)) ||
                (st = csvin_double(in, row, 8, "SLO", -1, 1e12, &x, d))))
        return st;
    double sps;
    uint32_t from_sf;
    if (!steps_per_sec(s, row->f[0], (uint32_t)sf, &sps, &from_sf)) {
        char what[700];
        snprintf(what, sizeof what, "a job type of the steps table %s on %s", s->table,
                 sim_intern_name(r->opt.gpu_types, s->ref_type));
        return csvin_field_error(in, row, 0, "job_type", what, d);
    }
    if (sps <= 0) {
        char what[700];
        snprintf(what, sizeof what,
                 "a scale factor at which the job type can run on %s (the steps table %s gives "
                 "it 0 steps/s at scale factor %u: cannot run there)",
                 sim_intern_name(r->opt.gpu_types, s->ref_type), s->table, from_sf);
        return csvin_field_error(in, row, c_sf, "scale_factor", what, d);
    }
    snprintf(s->id, sizeof s->id, "%ld", row->line);
    memcpy(j->id, s->id, strlen(s->id) + 1);
    j->num_gpus = (uint32_t)sf;
    j->gpu_milli = j->true_milli = SIM_MILLI_GPU;
    j->work_s = (double)steps / sps;
    if (!(j->work_s <= SIM_TIME_LIMIT_S)) {
        char what[160];
        snprintf(what, sizeof what, "steps that take at most 1e+10 s at %g steps/s", sps);
        return csvin_field_error(in, row, c_steps, "total_steps", what, d);
    }
    j->ref_gpu_type = s->ref_type;
    j->attr[SIM_ATTR_ITERATIONS] = (double)steps;
    j->attr_present |= UINT64_C(1) << SIM_ATTR_ITERATIONS;
    const char *bs = strstr(row->f[0], "(batch size ");
    uint64_t b;
    if (bs) {
        const char *num = bs + strlen("(batch size ");
        const char *close = strchr(num, ')');
        if (close && csvin_parse_u64(num, (size_t)(close - num), &b)) {
            j->attr[SIM_ATTR_BATCH_SIZE] = (double)b;
            j->attr_present |= UINT64_C(1) << SIM_ATTR_BATCH_SIZE;
        }
    }
    if ((st = trace__intern(r, r->opt.models, row, 0, &j->model, d)))
        return st;
    j->command = row->f[1];
    return 1;
}

const trace_format trace_format_gavel = {
    .name = "gavel",
    .summary = "Gavel .trace (tab-separated, 10 or 7 fields), steps converted to seconds",
    .delim = '\t',
    .open = gavel_open,
    .row = gavel_row,
    .close = gavel_close,
    .options = gavel_options,
    .empty_expect = "tab-separated job lines (job_type, command, ...; 10 or 7 fields)",
};
