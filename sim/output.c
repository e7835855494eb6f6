/*
 * output.c: the engine's streamed outputs — one jobs.csv row per job as it ends, one
 * timeseries.csv row (plus one tenants row per active tenant) per sample — and
 * summary.json at the end. Every number is printed with a fixed format, so identical
 * runs give identical bytes.
 */
#include "sim/engine_int.h"
#include "base/line.h"
#include "base/numfmt.h"
#include "base/textout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char sim_jobs_csv_header[] =
    "job_id,tenant,qos,priority,status,submit_s,start_s,end_s,wait_s,queued_s,jct_s,run_s,"
    "work_s,num_gpus,replicas,gpu_milli,share_milli,true_milli,gpu_type,node,preemptions,"
    "lost_work_s,pred_duration_s,pred_milli,reason";
const char sim_jobs_csv_elastic[] = ",replicas_min,replicas_max,replicas_mean,scale_events";

static const char ts_header[] = "time_s,pending,running,alloc_gpus,alloc_ratio,effective_gpus,"
                                "effective_ratio,cpu_alloc_ratio,nodes_down";

/* us as seconds with 6 decimals. Exact: integer seconds and microseconds, no floating
 * point. Formatted by hand: this is the most frequent number of every output. */
static void put_time(sim_line *l, sim_time us)
{
    if (!sim_line_room(l, 2 * SIM_FMT_U64_MAX + 2))
        return;
    char *p = l->buf + l->len;
    uint64_t u = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
    if (us < 0)
        *p++ = '-';
    p += sim_fmt_u64(p, u / 1000000);
    *p++ = '.';
    /* The microseconds with their leading zeros: the digits of 10^6 + frac after its 1. */
    char frac[SIM_FMT_U64_MAX];
    sim_fmt_u64(frac, 1000000 + u % 1000000);
    memcpy(p, frac + 1, 6);
    l->len = (size_t)(p + 6 - l->buf);
}

/* x as printf("%.6f") writes it. When x * 1e6 rounds to an integer K below 2^43, the
 * exact product lies within 2^-11 of K, so printf would round it to K too: K is written
 * with integer arithmetic (the common case: durations of whole or decimal seconds). */
static void put_fixed6(sim_line *l, double x)
{
    double y = x * 1e6;
    if (y >= 0 && y < 8796093022208.0 && y == floor(y)) {
        put_time(l, (sim_time)y);
        return;
    }
    sim_line_fixed(l, x, 6);
}

/* "ID,TENANT,QOS,PRIORITY,STATUS,SUBMIT" of a job row. */
static void put_head(const sim_engine *e, sim_line *l, const job_spec *s, const char *status)
{
    sim_line_csv(l, s->id);
    sim_line_char(l, ',');
    sim_line_csv(l, sim_intern_name(e->world.tenants, s->tenant));
    sim_line_char(l, ',');
    sim_line_str(l, sim_qos_name(s->qos));
    sim_line_char(l, ',');
    sim_line_i64(l, s->priority);
    sim_line_char(l, ',');
    sim_line_str(l, status);
    sim_line_char(l, ',');
    put_time(l, s->submit_us);
}

/* ",u" */
static void put_cu(sim_line *l, uint64_t u)
{
    sim_line_char(l, ',');
    sim_line_u64(l, u);
}

/* ",x" with the given decimals */
static void put_cfixed(sim_line *l, double x, unsigned digits)
{
    sim_line_char(l, ',');
    sim_line_fixed(l, x, digits);
}

static void put_opt(sim_line *l, double x)
{
    if (isfinite(x))
        put_fixed6(l, x);
}

/* The end of a job row: the policy's own column and the group column, when the run has
 * them; then the row goes to f. */
static int put_tail(const sim_engine *e, sim_line *l, const job_spec *s, FILE *f)
{
    if (e->pol->job_column && e->pol->job_value) {
        const char *v = e->pol->job_value(e->pst, s);
        sim_line_char(l, ',');
        sim_line_csv(l, v ? v : "");
    }
    if (e->cfg.job_groups) {
        sim_line_char(l, ',');
        sim_line_csv(l, s->group);
    }
    sim_line_char(l, '\n');
    return sim_line_put(l, f);
}

/* The elastic and online-service figures are written only for runs that have them. */
static bool elastic_columns(const sim_engine *e)
{
    return e->cfg.elastic_outputs || (e->world.curves && e->world.curves->n);
}

/* Sampled: GPUs the services want and hold, the shortfall, trainers of offline elastic
 * jobs, kept as the jobs enter, leave and change (sim__list_append and the others). */
static void online_sample(const sim_engine *e, double out[4])
{
    for (int c = 0; c < 4; c++)
        out[c] = (double)e->online[c];
}

int sim__write_headers(sim_engine *e)
{
    if (e->cfg.jobs_csv) {
        fputs(sim_jobs_csv_header, e->cfg.jobs_csv);
        if (e->cfg.elastic_outputs)
            fputs(sim_jobs_csv_elastic, e->cfg.jobs_csv);
        if (e->pol->job_column && e->pol->job_value)
            fprintf(e->cfg.jobs_csv, ",%s", e->pol->job_column);
        if (e->cfg.job_groups)
            fputs(",group", e->cfg.jobs_csv);
        fputc('\n', e->cfg.jobs_csv);
    }
    if (e->cfg.timeseries_csv) {
        fputs(ts_header, e->cfg.timeseries_csv);
        for (uint32_t p = 0; p < e->cfg.n_probes; p++)
            for (uint32_t k = 0; k < e->cfg.probes[p].n; k++)
                fprintf(e->cfg.timeseries_csv, ",%s", e->cfg.probes[p].names[k]);
        if (elastic_columns(e))
            fputs(",online_demand,online_granted,shortfall,offline_trainers",
                  e->cfg.timeseries_csv);
        fputc('\n', e->cfg.timeseries_csv);
    }
    if (e->cfg.tenants_csv)
        fputs("time_s,tenant,alloc_gpus,running,pending,quota_gpus\n", e->cfg.tenants_csv);
    return SIM_OK;
}

int sim__write_job_row(sim_engine *e, const sim_job *j, const char *status, const char *reason)
{
    FILE *f = e->cfg.jobs_csv;
    if (!f)
        return SIM_OK;
    sim_line *l = &e->line;
    const job_spec *s = &j->spec;
    bool done = strcmp(status, "done") == 0;
    bool started = j->first_start_us != SIM_TIME_NEVER;
    put_head(e, l, s, status);
    sim_line_char(l, ',');
    if (started)
        put_time(l, j->first_start_us);
    sim_line_char(l, ',');
    if (done)
        put_time(l, e->now);
    sim_line_char(l, ',');
    if (started)
        put_time(l, j->first_start_us - s->submit_us);
    sim_line_char(l, ',');
    if (done) {
        put_time(l, e->now - s->submit_us - j->placed_us);
        sim_line_char(l, ',');
        put_time(l, e->now - s->submit_us);
    } else {
        sim_line_char(l, ',');
    }
    /* With a demand model, the true demand is the one on the GPU type the job ran on. */
    uint32_t truem = s->true_milli ? s->true_milli : s->gpu_milli;
    if (e->rate.demand && j->alloc_head != NIL && e->allocs[j->alloc_head].gpu != SIM_GPU_NONE)
        truem = sim__job_demand(e, j, e->allocs[j->alloc_head].node);
    sim_line_char(l, ',');
    put_time(l, j->placed_us);
    sim_line_char(l, ',');
    put_fixed6(l, s->work_s);
    put_cu(l, s->num_gpus);
    put_cu(l, j->nominal_replicas);
    put_cu(l, s->gpu_milli);
    put_cu(l, j->share_milli);
    put_cu(l, truem);
    sim_line_char(l, ',');
    /* The first allocation names the GPU type and node the job last ran on. */
    if (j->alloc_head != NIL) {
        const sim_alloc_rec *r = &e->allocs[j->alloc_head];
        sim_line_str(l, e->v.gpu_type_name(&e->v, e->node_gpu_type[r->node]));
        sim_line_char(l, ',');
        sim_line_csv(l, e->node_name[r->node]);
    } else {
        sim_line_char(l, ',');
    }
    put_cu(l, j->preemptions);
    sim_line_char(l, ',');
    put_fixed6(l, j->lost_work_s);
    sim_line_char(l, ',');
    put_opt(l, j->pred_duration_s);
    sim_line_char(l, ',');
    put_opt(l, j->pred_milli);
    sim_line_char(l, ',');
    sim_line_csv(l, reason);
    if (e->cfg.elastic_outputs) {
        /* Time-weighted mean over the time the job held resources. */
        double rs = j->rep_seconds + (double)j->replicas * (double)(e->now - j->rep_since_us) / 1e6;
        put_cu(l, j->rep_min);
        put_cu(l, j->rep_max);
        sim_line_char(l, ',');
        put_fixed6(l, j->placed_us > 0 ? rs / ((double)j->placed_us / 1e6) : 0.0);
        put_cu(l, j->scale_events);
    }
    return put_tail(e, l, s, f);
}

int sim__write_spec_row(sim_engine *e, const job_spec *s, uint32_t replicas, const char *status,
                        const char *reason)
{
    FILE *f = e->cfg.jobs_csv;
    if (!f)
        return SIM_OK;
    sim_line *l = &e->line;
    put_head(e, l, s, status);
    sim_line_str(l, ",,,,,,0.000000");
    put_cfixed(l, s->work_s, 6);
    put_cu(l, s->num_gpus);
    put_cu(l, replicas);
    put_cu(l, s->gpu_milli);
    sim_line_str(l, ",0");
    put_cu(l, s->true_milli ? s->true_milli : s->gpu_milli);
    sim_line_str(l, ",,,0,0.000000,,,");
    sim_line_csv(l, reason);
    if (e->cfg.elastic_outputs)
        sim_line_str(l, ",0,0,0.000000,0");
    return put_tail(e, l, s, f);
}

int sim__write_sample(sim_engine *e)
{
    e->samples++;
    uint32_t col = 0;
    for (uint32_t p = 0; p < e->cfg.n_probes; p++) {
        e->cfg.probes[p].sample(e->cfg.probes[p].ctx, &e->v, e->probe_vals + col);
        col += e->cfg.probes[p].n;
    }
    for (uint32_t c = 0; c < e->n_probe_cols; c++)
        e->probe_sums[c] += e->probe_vals[c];
    e->probe_samples++;
    FILE *f = e->cfg.timeseries_csv;
    if (f) {
        double gpus = (double)e->n_gpus;
        double alloc = (double)e->used_milli_total / 1000.0;
        double eff = (double)e->eff_milli_total / 1000.0;
        sim_line *l = &e->line;
        put_time(l, e->now);
        const double cols[5] = {
            alloc, gpus ? alloc / gpus : 0, eff, gpus ? eff / gpus : 0,
            e->cpu_total_all ? (double)e->cpu_used_all / (double)e->cpu_total_all : 0};
        static const unsigned places[5] = {3, 6, 3, 6, 6};
        put_cu(l, e->v.n_pending);
        put_cu(l, e->v.n_running);
        for (int c = 0; c < 5; c++)
            put_cfixed(l, cols[c], places[c]);
        put_cu(l, e->n_down);
        for (uint32_t c = 0; c < e->n_probe_cols; c++)
            put_cfixed(l, e->probe_vals[c], 6);
        if (elastic_columns(e)) {
            double o[4];
            online_sample(e, o);
            for (int c = 0; c < 4; c++)
                put_cfixed(l, o[c], c < 3 ? 3 : 0);
        }
        sim_line_char(l, '\n');
        int st = sim_line_put(l, f);
        if (st != SIM_OK)
            return st;
    }
    FILE *t = e->cfg.tenants_csv;
    if (t) {
        for (uint32_t k = 0; k < e->tenant_cap; k++) {
            tenant_stats *ts = &e->tstats[k];
            bool active = ts->running || ts->pending || e->tenant_used_milli[k];
            if (e->cfg.tenant_rows_changed) {
                /* Only what changed since the tenant's last row (a tenant that goes idle
                 * gets one row of zeros). */
                bool same = ts->row_written ? ts->row_used == e->tenant_used_milli[k] &&
                                                  ts->row_running == ts->running &&
                                                  ts->row_pending == ts->pending &&
                                                  ts->row_quota == e->tenant_quota[k]
                                            : !active;
                if (same)
                    continue;
                ts->row_used = e->tenant_used_milli[k];
                ts->row_running = ts->running;
                ts->row_pending = ts->pending;
                ts->row_quota = e->tenant_quota[k];
                ts->row_written = true;
            } else if (!active) {
                continue;
            }
            sim_line *l = &e->line;
            put_time(l, e->now);
            sim_line_char(l, ',');
            sim_line_csv(l, sim_intern_name(e->world.tenants, k));
            put_cfixed(l, (double)e->tenant_used_milli[k] / 1000.0, 3);
            put_cu(l, ts->running);
            put_cu(l, ts->pending);
            put_cfixed(l, e->tenant_quota[k], 3);
            sim_line_char(l, '\n');
            int st = sim_line_put(l, t);
            if (st != SIM_OK)
                return st;
        }
    }
    return SIM_OK;
}

static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.6f", x);
    else
        fputs("null", f);
}

static void json_dist(FILE *f, const char *name, const sim_hist *h)
{
    fprintf(f, "  \"%s\": {\"count\": %llu, \"mean\": ", name,
            (unsigned long long)sim_hist_count(h));
    json_num(f, sim_hist_mean(h));
    fputs(", \"median\": ", f);
    json_num(f, sim_hist_quantile(h, 0.5));
    fputs(", \"p95\": ", f);
    json_num(f, sim_hist_quantile(h, 0.95));
    fputs(", \"p99\": ", f);
    json_num(f, sim_hist_quantile(h, 0.99));
    fputs(", \"max\": ", f);
    json_num(f, sim_hist_max(h));
    fputs("},\n", f);
}

int sim_engine_write_summary(const sim_engine *e, FILE *f, const char *extra)
{
    const sim_summary *s = &e->sum;
    fputs("{\n", f);
    fputs("  \"policy\": ", f);
    sim_json_put_string(f, e->pol ? e->pol->name : "");
    fputs(",\n  \"rate_model\": ", f);
    sim_json_put_string(f, e->rate.name);
    fprintf(f, ",\n  \"seed\": %llu,\n", (unsigned long long)e->cfg.seed);
    fprintf(f, "  \"cluster\": {\"nodes\": %u, \"gpus\": %u},\n", e->n_nodes, e->n_gpus);
    fprintf(f,
            "  \"jobs\": {\"arrived\": %llu, \"done\": %llu, \"rejected\": %llu, "
            "\"unfinished\": %llu},\n  \"jobs_not_arrived\": %llu,\n",
            (unsigned long long)s->jobs_arrived, (unsigned long long)s->jobs_done,
            (unsigned long long)s->jobs_rejected, (unsigned long long)s->jobs_unfinished,
            (unsigned long long)s->jobs_not_arrived);
    json_dist(f, "jct_s", e->h_jct);
    json_dist(f, "wait_s", e->h_wait);
    double span = s->first_submit_us == SIM_TIME_NEVER
                      ? 0
                      : (double)(s->last_end_us - s->first_submit_us) / 1e6;
    fputs("  \"makespan_s\": ", f);
    json_num(f, span);
    if (e->cfg.job_groups) {
        /* Exact figures over the done groups (their last member's end minus their
         * arrival). */
        fprintf(f, ",\n  \"job_groups\": {\"arrived\": %llu, \"done\": %llu, \"mean_s\": ",
                (unsigned long long)s->groups_arrived, (unsigned long long)s->groups_done);
        json_num(f, s->group_mean_s);
        fputs(", \"p50_s\": ", f);
        json_num(f, s->group_median_s);
        fputs(", \"p99_s\": ", f);
        json_num(f, s->group_p99_s);
        fputs(", \"max_s\": ", f);
        json_num(f, s->group_max_s);
        fputc('}', f);
    }
    fputs(",\n  \"gpu_util\": {\"allocated\": ", f);
    json_num(f, s->gpu_alloc_avg);
    fputs(", \"effective\": ", f);
    json_num(f, s->gpu_effective_avg);
    fputs("},\n  \"gpu_hours\": {\"allocated\": ", f);
    json_num(f, s->gpu_seconds_alloc / 3600.0);
    fputs(", \"effective\": ", f);
    json_num(f, s->gpu_seconds_effective / 3600.0);
    fprintf(f, "},\n  \"preemptions\": %llu,\n  \"failures\": %llu,\n  \"lost_work_s\": ",
            (unsigned long long)s->preemptions, (unsigned long long)s->failures);
    json_num(f, s->lost_work_s);
    fputs(",\n  \"lost_gpu_hours\": ", f);
    json_num(f, s->lost_gpu_seconds / 3600.0);
    if (elastic_columns(e)) {
        fprintf(f, ",\n  \"elastic\": {\"scale_events\": %llu, \"scale_in_lost_work_s\": ",
                (unsigned long long)s->scale_events);
        json_num(f, s->scale_lost_work_s);
        fprintf(f, ", \"offline_done\": %llu, \"offline_jct_mean_s\": ",
                (unsigned long long)s->offline_done);
        json_num(f, s->offline_done ? s->offline_jct_sum_s / (double)s->offline_done : 0);
        fputs(", \"cpu_util_allocated\": ", f);
        json_num(f, s->cpu_alloc_avg);
        fprintf(f, "},\n  \"online\": {\"services\": %llu, \"demand_gpu_hours\": ",
                (unsigned long long)s->services);
        json_num(f, s->demand_gpu_s / 3600.0);
        fputs(", \"shortfall_gpu_seconds\": ", f);
        json_num(f, s->short_gpu_s);
        fprintf(f, ", \"shortfall_periods\": %llu}", (unsigned long long)s->short_periods);
    }
    fprintf(f, ",\n  \"slo\": {\"jobs\": %llu, \"violations\": %llu},\n",
            (unsigned long long)s->slo_jobs, (unsigned long long)s->slo_violations);
    fputs("  \"by_qos\": {", f);
    bool first = true;
    for (int q = 0; q < SIM_QOS_COUNT; q++) {
        const qos_stats *qs = &e->qstats[q];
        if (!qs->done)
            continue;
        fprintf(f, "%s\n    ", first ? "" : ",");
        sim_json_put_string(f, q == SIM_QOS_NONE ? "none" : sim_qos_name((sim_qos)q));
        fprintf(f, ": {\"done\": %llu, \"jct_mean\": ", (unsigned long long)qs->done);
        json_num(f, qs->jct_sum_s / (double)qs->done);
        fputs(", \"jct_p95\": ", f);
        json_num(f, sim_hist_quantile(qs->jct, 0.95));
        fputs(", \"wait_mean\": ", f);
        json_num(f, qs->wait_sum_s / (double)qs->done);
        fputc('}', f);
        first = false;
    }
    fputs(first ? "},\n" : "\n  },\n", f);
    fputs("  \"tenants\": {", f);
    first = true;
    uint32_t nt = sim_intern_count(e->world.tenants);
    for (uint32_t t = 0; t < nt && t < e->tenant_cap; t++) {
        const tenant_stats *ts = &e->tstats[t];
        if (!ts->done && !ts->rejected && !ts->running && !ts->pending)
            continue;
        fprintf(f, "%s\n    ", first ? "" : ",");
        sim_json_put_string(f, sim_intern_name(e->world.tenants, t));
        fprintf(f, ": {\"done\": %llu, \"rejected\": %llu, \"jct_mean\": ",
                (unsigned long long)ts->done, (unsigned long long)ts->rejected);
        json_num(f, ts->done ? ts->jct_sum_s / (double)ts->done : 0);
        fputs(", \"wait_mean\": ", f);
        json_num(f, ts->done ? ts->wait_sum_s / (double)ts->done : 0);
        fputs(", \"gpu_hours\": ", f);
        json_num(f, ts->gpu_s / 3600.0);
        fputs(", \"quota_gpus\": ", f);
        json_num(f, e->tenant_quota[t]);
        fputc('}', f);
        first = false;
    }
    fputs(first ? "},\n" : "\n  },\n", f);
    fputs("  \"probes\": {", f);
    uint32_t col = 0;
    first = true;
    for (uint32_t p = 0; p < e->cfg.n_probes; p++)
        for (uint32_t k = 0; k < e->cfg.probes[p].n; k++, col++) {
            fprintf(f, "%s\"%s_mean\": ", first ? "" : ", ", e->cfg.probes[p].names[k]);
            json_num(f, e->probe_samples ? e->probe_sums[col] / (double)e->probe_samples : 0);
            first = false;
        }
    fprintf(f, "},\n  \"samples\": %llu,\n  \"events\": %llu", (unsigned long long)e->samples,
            (unsigned long long)s->events);
    if (extra && *extra)
        fprintf(f, ",\n  %s", extra);
    fputs("\n}\n", f);
    return ferror(f) ? SIM_EIO : SIM_OK;
}
