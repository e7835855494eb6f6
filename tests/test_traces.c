/*
 * test_traces.c: every trace reader. Hand-checked values from small fixtures, chunk
 * invariance (every chunk size 1..64, 64 KiB, and through gzip) for every good fixture,
 * bad-input fixtures with their exact diagnostics (plus a 1 MiB line and a truncated
 * gzip stream generated here), the staged public traces with the counts of their
 * SOURCE.txt, cluster specs of other simulators, and timestamp parsing.
 */
#include "models/catalog.h"
#include "base/alloc.h"
#include "traces/cluster.h"
#include "traces/trace.h"
#include "traces/writer.h"

#include "check.h"
#include "gavel_steps.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#define FIX SIM_SOURCE_DIR "/tests/fixtures/"

static model_catalog *cat;

/* read_all's reads skip bad rows when set, and leave the count of skipped rows in
 * read_skipped. */
static bool read_skip;
static uint64_t read_skipped;

/* Read a whole trace into a canonical text (one line per job); returns the status of
 * the read, with the diagnostic formatted into diag. */
static int read_all(const char *path, const char *format, const char *opt, size_t chunk,
                    char **text, uint64_t *jobs, char *diag, size_t dsize)
{
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    const char *opts[1] = {opt};
    trace_options o = {.format = format,
                       .tenants = tenants,
                       .models = models,
                       .gpu_types = model_catalog_names(cat),
                       .opts = opts,
                       .n_opts = opt ? 1 : 0,
                       .data_dir = NULL,
                       .skip_bad_rows = read_skip};
    trace_reader *r = NULL;
    sim_diag d = {0};
    size_t cap = 1 << 16, len = 0;
    char *buf = text ? malloc(cap) : NULL;
    if (buf)
        buf[0] = '\0';
    uint64_t n = 0;
    int st = trace_reader_open(&r, path, &o, &d);
    if (st == SIM_OK) {
        if (chunk)
            trace_reader_set_chunk(r, chunk);
        job_spec j;
        while ((st = trace_reader_next(r, &j, &d)) == 1) {
            n++;
            if (!buf)
                continue;
            char line[1024];
            int k = snprintf(line, sizeof line, "%s|%lld|%.6f|%u|%u|%u|%u|%s|%s|%llx|%u|%llu|%llu|%d|%llx",
                             j.id, (long long)j.submit_us, j.work_s, j.num_gpus, j.replicas,
                             j.gpu_milli, j.true_milli, sim_intern_name(tenants, j.tenant),
                             sim_intern_name(models, j.model),
                             (unsigned long long)j.gpu_type_mask, j.ref_gpu_type,
                             (unsigned long long)j.cpu_milli, (unsigned long long)j.mem_mib,
                             j.priority, (unsigned long long)j.attr_present);
            for (int a = 0; a < SIM_ATTR_COUNT; a++)
                if (job_spec_has(&j, (sim_attr)a))
                    k += snprintf(line + k, sizeof line - (size_t)k, "|%s=%.9g",
                                  sim_attr_name((sim_attr)a), j.attr[a]);
            snprintf(line + k, sizeof line - (size_t)k, "|%s|%s|L%llu\n", j.name, j.command,
                     (unsigned long long)j.line);
            size_t l = strlen(line);
            while (len + l + 1 > cap) {
                cap *= 2;
                buf = realloc(buf, cap);
            }
            memcpy(buf + len, line, l + 1);
            len += l;
        }
    }
    if (st == 0)
        st = SIM_OK;
    read_skipped = r ? trace_reader_skipped(r) : 0;
    if (diag) {
        diag[0] = '\0';
        if (st != SIM_OK)
            sim_diag_format(&d, diag, dsize);
    }
    trace_reader_close(r);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    if (text)
        *text = buf;
    else
        free(buf);
    if (jobs)
        *jobs = n;
    return st;
}

/* Copy src to dst through gzip (whole) or cut to `keep` compressed bytes (keep > 0). */
static void gzip_file(const char *src, const char *dst, long keep)
{
    size_t n = 0;
    char *data = check_slurp(src, &n);
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.full.gz", dst);
    gzFile gz = gzopen(keep ? tmp : dst, "wb6");
    gzwrite(gz, data, (unsigned)n);
    gzclose(gz);
    free(data);
    if (keep) {
        size_t m = 0;
        char *z = check_slurp(tmp, &m);
        FILE *f = fopen(dst, "wb");
        fwrite(z, 1, (size_t)keep < m ? (size_t)keep : m / 2, f);
        fclose(f);
        free(z);
        remove(tmp);
    }
}

typedef struct good {
    const char *file, *format, *opt;
    uint64_t jobs;
} good;

static const good goods[] = {
    {"good_native.csv", "native", NULL, 2},
    {"good_alibaba2023.csv", "alibaba2023", NULL, 2},
    {"good_philly.csv", "philly", NULL, 4},
    {"good_philly.json", "philly", NULL, 2},
    {"good_helios.csv", "helios", NULL, 3},
    {"good_pai_jobs.csv", "alibaba2020", "tasks=" FIX "good_pai_tasks.csv", 3},
    {"good_gavel10.trace", "gavel", "steps_table=" FIX "gavel_steps.csv", 3},
    {"good_gavel7.trace", "gavel", "steps_table=" FIX "gavel_steps.csv", 2},
    {"good_muri.csv", "muri", NULL, 3},
    {"good_tiresias.csv", "tiresias", NULL, 3},
};

static void test_chunk_invariance(void)
{
    for (size_t g = 0; g < sizeof goods / sizeof goods[0]; g++) {
        char path[1024], gz[1024], diag[1024];
        snprintf(path, sizeof path, FIX "%s", goods[g].file);
        char *ref = NULL;
        uint64_t n = 0;
        CHECK_EQ_I64(read_all(path, goods[g].format, goods[g].opt, 0, &ref, &n, diag,
                              sizeof diag), SIM_OK);
        if (diag[0])
            fprintf(stderr, "%s: %s\n", goods[g].file, diag);
        CHECK_EQ_I64(n, goods[g].jobs);
        int bad = 0;
        for (size_t chunk = 1; chunk <= 65536; chunk = chunk < 64 ? chunk + 1 : 65536 + 1) {
            char *t = NULL;
            read_all(path, goods[g].format, goods[g].opt, chunk > 65536 ? 65536 : chunk, &t, NULL,
                     NULL, 0);
            if (!t || strcmp(t, ref) != 0) {
                bad++;
                fprintf(stderr, "%s: chunk %zu differs\n", goods[g].file, chunk);
            }
            free(t);
        }
        CHECK_EQ_I64(bad, 0);
        snprintf(gz, sizeof gz, "fixture_%s.gz", goods[g].file);
        gzip_file(path, gz, 0);
        for (size_t chunk = 1; chunk <= 7; chunk += 3) {
            char *t = NULL;
            read_all(gz, goods[g].format, goods[g].opt, chunk == 7 ? 0 : chunk, &t, NULL, NULL, 0);
            /* Diagnostics lines, names and values are identical; only the path differs. */
            CHECK(t && strcmp(t, ref) == 0);
            free(t);
        }
        remove(gz);
        free(ref);
    }
}

/* Hand-checked values (see the fixtures): times, durations, shapes, tenants. */
static void test_golden(void)
{
    char *t;
    read_all(FIX "good_philly.csv", "philly", NULL, 0, &t, NULL, NULL, 0);
    /* Earliest 2017-10-08 23:59:59 -> origin 2017-10-08 00:00 -> 86399 s; rows of equal
     * time keep file order (lines 3 then 5); ids are line numbers. */
    CHECK(t && strstr(t, "4|86399000000|860.000000|8|0|1000|1000|6c71a0|") == t);
    CHECK(t && strstr(t, "3|108783000000|2951.000000|2|") < strstr(t, "5|108783000000|10.500000"));
    free(t);
    read_all(FIX "good_philly.json", "philly", NULL, 0, &t, NULL, NULL, 0);
    /* 74 s + 2 d 5 h 39 min 42 s = 193256 s; the last attempt had 4 + 4 GPUs. */
    CHECK(t && strstr(t, "application_1506638472019_14199|90699000000|193256.000000|8|2|"));
    /* The attempt without end_time counts nothing; the other ran 10 min 30 s. */
    CHECK(t && strstr(t, "application_1506638472019_00002|79500000000|630.000000|1|1|"));
    /* Out of order in the file, sorted when read. */
    CHECK(t && strstr(t, "_00002|") < strstr(t, "_14199|"));
    free(t);
    read_all(FIX "good_philly.json", "philly", "tenant=user", 0, &t, NULL, NULL, 0);
    CHECK(t && strstr(t, "|ce2f4c|"));
    free(t);
    read_all(FIX "good_helios.csv", "helios", NULL, 0, &t, NULL, NULL, 0);
    CHECK(t && strstr(t, "1425513|67280000000|675233.000000|0|1|0|0|vcpDC|"));
    CHECK(t && strstr(t, "1425512|67287000000|249.000000|16|2|1000|1000|vchbv||0|0|16000|"));
    CHECK(t && strstr(t, "1425511|") < strstr(t, "1425513|") &&
          strstr(t, "1425513|") < strstr(t, "1425512|"));
    free(t);
    read_all(FIX "good_pai_jobs.csv", "alibaba2020", "tasks=" FIX "good_pai_tasks.csv", 0, &t,
             NULL, NULL, 0);
    /* j1: 2 workers x 50 % -> 2 replicas of 500 milli; CPU 2x400x10 + 600x10; memory
     * 2x29.296875x1024 + 10x1024; work from the first task start 4550890. Times become
     * seconds since local (UTC+8) midnight of the first day: 4550400 s is 16:00 UTC, local
     * midnight, so j2 (4550800) arrives at 400 s and j1 at 479 s. */
    CHECK(t && strstr(t, "j1|479000000|526.000000|2|2|500|500|u1||0|7|14000|70240|"));
    CHECK(t && strstr(t, "j4|550000000|990.000000|2|1|750|750|u3|"));
    CHECK(t && !strstr(t, "j3|"));
    CHECK(t && strstr(t, "j2|") == t && strstr(t, "j1|") < strstr(t, "j4|"));
    free(t);
    /* A task without GPUs and without instances adds nothing: j1 is its two workers. */
    read_all(FIX "good_pai_jobs.csv", "alibaba2020", "tasks=" FIX "good_pai_tasks_zero_cpu.csv",
             0, &t, NULL, NULL, 0);
    CHECK(t && strstr(t, "j1|479000000|526.000000|2|2|500|500|u1||0|7|8000|60000|"));
    free(t);
    read_all(FIX "good_gavel10.trace", "gavel", "steps_table=" FIX "gavel_steps.csv", 0, &t, NULL,
             NULL, 0);
    /* 2931 / 2.5; 8601 / 160; scale factor 16 from 8: 1000 / (400 x 16 / 8). */
    CHECK(t && strstr(t, "1|0|1172.400000|1|0|1000|1000||ResNet-50 (batch size 64)|0|4|"));
    CHECK(t && strstr(t, "batch_size=64|iterations=2931|"));
    CHECK(t && strstr(t, "2|12500000|53.756250|2|"));
    CHECK(t && strstr(t, "3|40000000|1.250000|16|"));
    free(t);
    read_all(FIX "good_muri.csv", "muri", NULL, 0, &t, NULL, NULL, 0);
    CHECK(t && strstr(t, "2|201694500000|437.000000|2|0|1000|1000||gpt2|0|0|0|0|0|"));
    CHECK(t && strstr(t, "iter_time_ms=437|stage_cpu_ms=0.6|stage_gpu_ms=419|stage_net_ms=49|"));
    free(t);
    read_all(FIX "good_tiresias.csv", "tiresias", NULL, 0, &t, NULL, NULL, 0);
    CHECK(t && strstr(t, "1|30000000|147.000000|8|0|1000|1000||vgg11|"));
    free(t);
}

typedef struct bad {
    const char *file, *format, *opt, *diag;
} bad;

#define GAVEL "steps_table=" FIX "gavel_steps.csv"
#define TASKS "tasks=" FIX "good_pai_tasks.csv"
#define KNOWN                                                                                \
    "K80, P100, P100_SXM2, V100M16, V100M32, V100_PCIE, T4, RTX2080TI, QUADRO_RTX6000, A10, " \
    "A30, A100, A100_80GB, A100_PCIE_40GB, A100_PCIE_80GB, H100, H100_PCIE, H200, L4, L40S, " \
    "G1, G2, G3, MISC"

static const bad bads[] = {
    {"bad_native_header.csv", "native", NULL, ":1: error: header lacks column 'job_id'; expected a header with at least job_id,submit_time,duration,num_gpus (optional: gpu_milli,tenant,qos,priority,gpu_type,gpu_mem_mib,cpu_milli,mem_mib,replicas,model,name,command,true_milli,ref_gpu_type,batch_size,iterations,...)"},
    {"good_philly.csv", "native", NULL, ":1: error: header lacks column 'job_id'; expected a header with at least job_id,submit_time,duration,num_gpus (optional: gpu_milli,tenant,qos,priority,gpu_type,gpu_mem_mib,cpu_milli,mem_mib,replicas,model,name,command,true_milli,ref_gpu_type,batch_size,iterations,...) (this header looks like --format philly)"},
    {"bad_native_missing.csv", "native", NULL, ":1: error: header lacks column 'duration'; expected a header with at least job_id,submit_time,duration,num_gpus (optional: gpu_milli,tenant,qos,priority,gpu_type,gpu_mem_mib,cpu_milli,mem_mib,replicas,model,name,command,true_milli,ref_gpu_type,batch_size,iterations,...)"},
    {"bad_native_nonnum.csv", "native", NULL, ":2:3: error: field 'duration': expected a number in [0, 1e+10], got \"ten\""},
    {"bad_native_negative.csv", "native", NULL, ":2:4: error: field 'num_gpus': expected an integer 0..65536, got \"-2\""},
    {"bad_native_backwards.csv", "native", NULL, ":3:2: error: job 'j2': submit time 40.000000 s is before 50.000000 s of line 2; the trace must be sorted by submit time"},
    {"bad_native_dup.csv", "native", NULL, ":4:1: error: duplicate job id 'j1' (first seen on line 2)"},
    {"bad_native_empty.csv", "native", NULL, ":1: error: empty file: expected the header job_id,submit_time,duration,num_gpus (optional: gpu_milli,tenant,qos,priority,gpu_type,gpu_mem_mib,cpu_milli,mem_mib,replicas,model,name,command,true_milli,ref_gpu_type,batch_size,iterations,...)"},
    {"bad_native_utf8.csv", "native", NULL, ":2:5: error: invalid UTF-8 at byte 3 of the field"},
    {"bad_native_nul.csv", "native", NULL, ":2:5: error: NUL byte in field"},
    {"bad_alibaba2023_header.csv", "alibaba2023", NULL, ":1: error: header lacks column 'name'; expected a header with at least name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"},
    {"bad_alibaba2023_missing.csv", "alibaba2023", NULL, ":1: error: header lacks column 'deletion_time': this pod list has no times (like the published multigpu variants), so only clustersim pack, which uses requests alone, can read it"},
    {"bad_alibaba2023_fields.csv", "alibaba2023", NULL, ":2:11: error: expected 11 fields, as in the header, got 10"},
    {"bad_alibaba2023_nonnum.csv", "alibaba2023", NULL, ":2:4: error: field 'num_gpu': expected an integer 0..4096, got \"one\""},
    {"bad_alibaba2023_negative.csv", "alibaba2023", NULL, ":2:9: error: field 'creation_time': expected a time in seconds in [0, 1e+10], got \"-5\""},
    {"bad_alibaba2023_dup.csv", "alibaba2023", NULL, ":3:1: error: duplicate job id 'p1' (first seen on line 2)"},
    {"bad_alibaba2023_empty.csv", "alibaba2023", NULL, ":1: error: empty file: expected the header name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"},
    {"bad_alibaba2023_utf8.csv", "alibaba2023", NULL, ":2:1: error: invalid UTF-8 at byte 2 of the field"},
    {"bad_alibaba2023_nul.csv", "alibaba2023", NULL, ":2:7: error: NUL byte in field"},
    {"bad_philly_header.csv", "philly", NULL, ":1: error: header lacks column 'timestamp'; expected a header with at least timestamp,duration,num_gpus,gpu_time,cluster"},
    {"bad_philly_missing.csv", "philly", NULL, ":1: error: header lacks column 'duration'; expected a header with at least timestamp,duration,num_gpus,gpu_time,cluster"},
    {"bad_philly_fields.csv", "philly", NULL, ":2:5: error: expected 5 fields, as in the header, got 4"},
    {"bad_philly_nonnum.csv", "philly", NULL, ":2:2: error: field 'duration': expected a number in [0, 1e+10], got \"sixty\""},
    {"bad_philly_negative.csv", "philly", NULL, ":2:3: error: field 'num_gpus': expected an integer 0..65536, got \"-1\""},
    {"bad_philly_badtime.csv", "philly", NULL, ":2:1: error: field 'timestamp': expected a time like 2017-10-09 07:01:55 (YYYY-MM-DD HH:MM:SS), got \"2017-13-09 07:01:55\""},
    {"bad_philly_empty.csv", "philly", NULL, ":1: error: empty file: expected the header timestamp,duration,num_gpus,gpu_time,cluster"},
    {"bad_philly_utf8.csv", "philly", NULL, ":2:5: error: invalid UTF-8 at byte 3 of the field"},
    {"bad_philly_nul.csv", "philly", NULL, ":2:5: error: NUL byte in field"},
    {"bad_philly_json_syntax.json", "philly", NULL, ":2: error: malformed JSON: unexpected character (on line 3)"},
    {"bad_philly_json_missing.json", "philly", NULL, ":2: error: field 'submitted_time': expected a time like 2017-10-09 07:01:55 (YYYY-MM-DD HH:MM:SS), got nothing (no such member)"},
    {"bad_philly_json_nonnum.json", "philly", NULL, ":2: error: field 'submitted_time': expected a time like 2017-10-09 07:01:55 (YYYY-MM-DD HH:MM:SS), got \"1507338699\""},
    {"bad_philly_json_negative.json", "philly", NULL, ":2: error: job 'a1': attempt 1 ends before it starts"},
    {"bad_philly_json_dup.json", "philly", NULL, ":4: error: duplicate job id 'a1' (first seen on line 2)"},
    {"bad_philly_json_dupkey.json", "philly", NULL, ":6: error: malformed JSON: key 'start_time' given twice in one object (first on line 5)"},
    {"bad_philly_json_notarray.json", "philly", NULL, ":1: error: malformed JSON: expected '[' (an array of job objects), got '{'"},
    {"bad_philly_json_trailing.json", "philly", NULL, ":2: error: malformed JSON: text after the closing ']'"},
    {"bad_philly_json_utf8.json", "philly", NULL, ":2: error: malformed JSON: invalid utf-8 string"},
    {"bad_philly_json_nul.json", "philly", NULL, ":2: error: NUL byte in the JSON text"},
    {"bad_helios_header.csv", "helios", NULL, ":1: error: header lacks column 'job_id'; expected a header with at least job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"},
    {"bad_helios_missing.csv", "helios", NULL, ":1: error: header lacks column 'gpu_num'; expected a header with at least job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"},
    {"bad_helios_fields.csv", "helios", NULL, ":2:13: error: expected 12 fields, as in the header, got 13"},
    {"bad_helios_nonnum.csv", "helios", NULL, ":2:4: error: field 'gpu_num': expected an integer 0..65536, got \"x\""},
    {"bad_helios_negative.csv", "helios", NULL, ":2:11: error: field 'duration': expected a number in [0, 1e+10], got \"-5\""},
    {"bad_helios_dup.csv", "helios", NULL, ":4:1: error: duplicate job id '1' (first seen on line 2)"},
    {"bad_helios_empty.csv", "helios", NULL, ":1: error: empty file: expected the header job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"},
    {"bad_helios_utf8.csv", "helios", NULL, ":2:2: error: invalid UTF-8 at byte 2 of the field"},
    {"bad_helios_nul.csv", "helios", NULL, ":2:1: error: NUL byte in field"},
    {"bad_pai_fields.csv", "alibaba2020", TASKS, ":1:6: error: expected the 6 fields job_name,inst_id,user,status,start_time,end_time, got 5"},
    {"bad_pai_nonnum.csv", "alibaba2020", TASKS, ":1:5: error: field 'start_time': expected a number in [0, 1e+10], got \"soon\""},
    {"bad_pai_negative.csv", "alibaba2020", TASKS, ":1:5: error: field 'start_time': expected a number in [0, 1e+10], got \"-4550879.0\""},
    {"bad_pai_endbefore.csv", "alibaba2020", TASKS, ":1:6: error: field 'end_time': expected a time not before the job's first task start_time, got \"4550000.0\""},
    {"bad_pai_dup.csv", "alibaba2020", TASKS, ":3:1: error: duplicate job id 'j1' (first seen on line 1)"},
    {"bad_pai_empty.csv", "alibaba2020", TASKS, ":1: error: empty file: expected job rows job_name,inst_id,user,status,start_time,end_time"},
    {"bad_pai_utf8.csv", "alibaba2020", TASKS, ":1:3: error: invalid UTF-8 at byte 2 of the field"},
    {"bad_pai_nul.csv", "alibaba2020", TASKS, ":1:3: error: NUL byte in field"},
    {"good_pai_jobs.csv", "alibaba2020", "tasks=" FIX "bad_pai_tasks_frac.csv", "bad_pai_tasks_frac.csv:1:3: error: field 'inst_num': expected a whole number of instances >= 1 (such as 2 or 2.0; 0 only for a task without GPUs), got \"2.5\""},
    {"good_pai_jobs.csv", "alibaba2020", "tasks=" FIX "bad_pai_tasks_zero.csv", "bad_pai_tasks_zero.csv:2:3: error: field 'inst_num': expected a whole number of instances >= 1 (such as 2 or 2.0; 0 only for a task without GPUs), got \"0.0\""},
    {"good_pai_jobs.csv", "alibaba2020", "tasks=" FIX "bad_pai_tasks_type.csv", "bad_pai_tasks_type.csv:1:10: error: field 'gpu_type': expected a known GPU type (" KNOWN "), got \"H800X\""},
    {"bad_gavel_fields.trace", "gavel", GAVEL, ":1:5: error: expected 10 tab-separated fields (job_type, command, working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, SLO, arrival_time) or 7 (job_type, command, num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor), got 4"},
    {"bad_gavel_mixed.trace", "gavel", GAVEL, ":2:8: error: expected 10 tab-separated fields like the first line, got 7"},
    {"bad_gavel_nonnum.trace", "gavel", GAVEL, ":1:6: error: field 'total_steps': expected an integer 1..1125899906842624, got \"many\""},
    {"bad_gavel_negative.trace", "gavel", GAVEL, ":1:10: error: field 'arrival_time': expected a time in seconds in [0, 1e+10], got \"-3\""},
    {"bad_gavel_backwards.trace", "gavel", GAVEL, ":2:10: error: job '2': submit time 40.000000 s is before 50.000000 s of line 1; the trace must be sorted by submit time"},
    {"bad_gavel_unknown.trace", "gavel", GAVEL, ":1:1: error: field 'job_type': expected a job type of the steps table " FIX "gavel_steps.csv on V100M16, got \"GPT-9 (batch size 1)\""},
    {"bad_gavel_empty.trace", "gavel", GAVEL, ":1: error: empty file: expected tab-separated job lines (job_type, command, ...; 10 or 7 fields)"},
    {"bad_gavel_utf8.trace", "gavel", GAVEL, ":1:2: error: invalid UTF-8 at byte 3 of the field"},
    {"bad_gavel_nul.trace", "gavel", GAVEL, ":1:2: error: NUL byte in field"},
    {"bad_muri_header.csv", "muri", NULL, ":1: error: header lacks column 'job_id'; expected a header with at least job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,priority"},
    {"bad_muri_missing.csv", "muri", NULL, ":1: error: header lacks column 'resource_time_2'; expected a header with at least job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,priority"},
    {"bad_muri_nonnum.csv", "muri", NULL, ":2:10: error: field 'resource_time_0': expected a number in [0, 1e+15], got \"fast\""},
    {"bad_muri_negative.csv", "muri", NULL, ":2:11: error: field 'resource_time_1': expected a number in [0, 1e+15], got \"-8\""},
    {"bad_muri_backwards.csv", "muri", NULL, ":3:3: error: job '1': submit time 4.000000 s is before 5.000000 s of line 2; the trace must be sorted by submit time"},
    {"bad_muri_dup.csv", "muri", NULL, ":3:1: error: duplicate job id '0' (first seen on line 2)"},
    {"bad_muri_empty.csv", "muri", NULL, ":1: error: empty file: expected the header job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,priority"},
    {"bad_muri_utf8.csv", "muri", NULL, ":2:5: error: invalid UTF-8 at byte 3 of the field"},
    {"bad_muri_nul.csv", "muri", NULL, ":2:7: error: NUL byte in field"},
    {"bad_tiresias_header.csv", "tiresias", NULL, ":1: error: header lacks column 'job_id'; expected a header with at least job_id,num_gpu,submit_time,iterations,model_name,duration,interval"},
    {"bad_tiresias_missing.csv", "tiresias", NULL, ":1: error: header lacks column 'duration'; expected a header with at least job_id,num_gpu,submit_time,iterations,model_name,duration,interval"},
    {"good_muri.csv", "tiresias", NULL, ":1: error: the header has Muri's per-resource columns (resource_time_0, ...), whose times are milliseconds; read this file with --format muri"},
    {"bad_tiresias_fields.csv", "tiresias", NULL, ":2:8: error: expected 7 fields, as in the header, got 8"},
    {"bad_tiresias_nonnum.csv", "tiresias", NULL, ":2:2: error: field 'num_gpu': expected an integer 0..65536, got \"one\""},
    {"bad_tiresias_negative.csv", "tiresias", NULL, ":2:6: error: field 'duration': expected a number in [0, 1e+10], got \"-164\""},
    {"bad_tiresias_backwards.csv", "tiresias", NULL, ":3:3: error: job '1': submit time 20.000000 s is before 30.000000 s of line 2; the trace must be sorted by submit time"},
    {"bad_tiresias_dup.csv", "tiresias", NULL, ":4:1: error: duplicate job id '0' (first seen on line 2)"},
    {"bad_tiresias_empty.csv", "tiresias", NULL, ":1: error: empty file: expected the header job_id,num_gpu,submit_time,iterations,model_name,duration,interval"},
    {"bad_tiresias_utf8.csv", "tiresias", NULL, ":2:5: error: invalid UTF-8 at byte 4 of the field"},
    {"bad_tiresias_nul.csv", "tiresias", NULL, ":2:7: error: NUL byte in field"},
};

static void test_bad_fixtures(void)
{
    for (size_t b = 0; b < sizeof bads / sizeof bads[0]; b++) {
        char path[1024], diag[2048], want[2048];
        snprintf(path, sizeof path, FIX "%s", bads[b].file);
        int st = read_all(path, bads[b].format, bads[b].opt, 0, NULL, NULL, diag, sizeof diag);
        /* The diagnostic names the fixture (its full path) unless it names another file. */
        if (bads[b].diag[0] == ':')
            snprintf(want, sizeof want, "%s%s", path, bads[b].diag);
        else
            snprintf(want, sizeof want, FIX "%s", bads[b].diag);
        CHECK_EQ_I64(st, SIM_EPARSE);
        CHECK_STR(diag, want);
    }
}

/* The Philly JSON fixtures with their line ends made CR and CRLF: the same diagnostics,
 * the same lines (a lone CR ends a line, as in the CSV layouts). */
static void test_philly_json_line_ends(void)
{
    for (size_t b = 0; b < sizeof bads / sizeof bads[0]; b++) {
        if (strncmp(bads[b].file, "bad_philly_json", 15) != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, FIX "%s", bads[b].file);
        size_t len = 0;
        char *text = check_slurp(path, &len);
        CHECK(text != NULL);
        for (int mode = 0; text && mode < 2; mode++) {
            const char *name = mode ? "ends_crlf.json" : "ends_cr.json";
            FILE *f = fopen(name, "wb");
            CHECK(f != NULL);
            if (!f)
                break;
            for (size_t i = 0; i < len; i++)
                if (text[i] != '\n')
                    fputc(text[i], f);
                else
                    fputs(mode ? "\r\n" : "\r", f);
            fclose(f);
            char diag[2048], want[2048];
            snprintf(want, sizeof want, "%s%s", name, bads[b].diag);
            CHECK_EQ_I64(read_all(name, "philly", NULL, 0, NULL, NULL, diag, sizeof diag),
                         SIM_EPARSE);
            CHECK_STR(diag, want);
            remove(name);
        }
        free(text);
    }
}

/* In-memory formats accept rows out of order and sort them (stable). */
static void test_sorting(void)
{
    char *t = NULL;
    read_all(FIX "bad_native_backwards.csv", "native", NULL, 0, NULL, NULL, NULL, 0);
    FILE *f = fopen("backwards_philly.csv", "w");
    fputs("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 08:00:00,5,1,5,b\n"
          "2017-10-09 07:00:00,6,1,6,a\n",
          f);
    fclose(f);
    CHECK_EQ_I64(read_all(FIX "good_alibaba2023_unsorted.csv", "alibaba2023", NULL, 0, &t, NULL,
                          NULL, 0), SIM_OK);
    CHECK(t && strstr(t, "p2|40000000|60.000000|") == t);
    CHECK(t && strstr(t, "\np1|50000000|50.000000|"));
    free(t);
    t = NULL;
    CHECK_EQ_I64(read_all("backwards_philly.csv", "philly", NULL, 0, &t, NULL, NULL, 0), SIM_OK);
    CHECK(t && strstr(t, "3|25200000000|6.000000|") == t);
    CHECK(t && strstr(t, "\n2|28800000000|5.000000|"));
    free(t);
    remove("backwards_philly.csv");
}

/* Write a native trace of the given ids (one job each), one per line from line 2. */
static void write_ids(const char *path, char **ids, size_t n)
{
    FILE *f = fopen(path, "w");
    fputs("job_id,submit_time,duration,num_gpus\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s,0,10,1\n", ids[i]);
    fclose(f);
}

/* The bytes the duplicate-id check of a native read of `path` held at its end, or
 * SIZE_MAX when the read failed. */
static size_t id_bytes_of(const char *path)
{
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    trace_options o = {.format = "native", .tenants = tenants, .models = models,
                       .gpu_types = model_catalog_names(cat)};
    trace_reader *r = NULL;
    sim_diag d = {0};
    size_t bytes = SIZE_MAX;
    if (trace_reader_open(&r, path, &o, &d) == SIM_OK) {
        job_spec j;
        int st;
        while ((st = trace_reader_next(r, &j, &d)) == 1)
            ;
        if (st == 0)
            bytes = trace_reader_id_bytes(r);
    }
    trace_reader_close(r);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    return bytes;
}

/* Duplicate ids where ids end in digits (kept as bits of runs of numbers): ids that
 * differ only in leading zeros, in the digits before the last 18 or across a run's
 * edge are distinct; each repeated is found with its first line; random mixtures agree
 * with a comparison of the strings; a trace numbered in order holds a few runs, not a
 * table entry per job. */
static void test_numbered_ids(void)
{
    static const char *near[] = {
        "7", "07", "007", "x7", "x07", "7x", "x", "job-63", "job-64", "job-0", "job-00",
        "999999999999999999", "1000000000000000000", "0999999999999999999",
        "1234567890123456789", "01234567890123456789", "11234567890123456789",
        "a18446744073709551615", "a18446744073709551616", "-1", "--1", "1-1", "job-1", "job1",
    };
    size_t n = sizeof near / sizeof near[0];
    char *ids[64], diag[2048], want[2048];
    for (size_t i = 0; i < n; i++)
        ids[i] = (char *)near[i];
    write_ids("ids.csv", ids, n);
    uint64_t jobs = 0;
    CHECK_EQ_I64(read_all("ids.csv", "native", NULL, 0, NULL, &jobs, diag, sizeof diag), SIM_OK);
    CHECK_EQ_I64(jobs, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        ids[n] = (char *)near[i];
        write_ids("ids.csv", ids, n + 1);
        CHECK_EQ_I64(read_all("ids.csv", "native", NULL, 0, NULL, NULL, diag, sizeof diag),
                     SIM_EPARSE);
        snprintf(want, sizeof want, "ids.csv:%zu:1: error: duplicate job id '%s' (first seen on line %zu)",
                 n + 2, near[i], i + 2);
        CHECK_STR(diag, want);
    }
    /* Random ids from a few texts and widths, some repeated: the first repeat is the
     * error, as a comparison of every pair of strings finds it. */
    static const char *texts[] = {"", "job-", "a1b", "0"};
    uint64_t z = 12345;
    for (int round = 0; round < 40; round++) {
        size_t m = 400;
        char **rid = malloc(m * sizeof *rid);
        for (size_t i = 0; i < m; i++) {
            z = z * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            char buf[64];
            unsigned width = 1 + (unsigned)(z >> 60) % 20;
            int len = snprintf(buf, sizeof buf, "%s", texts[(z >> 40) % 4]);
            for (unsigned w = 0; w < width; w++) {
                z = z * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
                /* Few distinct digits in the last places, so repeats happen. */
                buf[len++] = (char)('0' + (w + 3 < width ? (z >> 33) % 10 : (z >> 33) % 3));
            }
            buf[len] = '\0';
            rid[i] = strdup(buf);
        }
        size_t rep = 0, first = 0;
        for (size_t i = 1; i < m && !rep; i++)
            for (size_t k = 0; k < i; k++)
                if (strcmp(rid[i], rid[k]) == 0) {
                    rep = i;
                    first = k;
                    break;
                }
        write_ids("ids.csv", rid, m);
        int st = read_all("ids.csv", "native", NULL, 0, NULL, &jobs, diag, sizeof diag);
        if (rep) {
            CHECK_EQ_I64(st, SIM_EPARSE);
            snprintf(want, sizeof want, "ids.csv:%zu:1: error: duplicate job id '%s' (first seen on line %zu)",
                     rep + 2, rid[rep], first + 2);
            CHECK_STR(diag, want);
        } else {
            CHECK_EQ_I64(st, SIM_OK);
            CHECK_EQ_I64(jobs, (int64_t)m);
        }
        for (size_t i = 0; i < m; i++)
            free(rid[i]);
        free(rid);
    }
    /* 10^5 jobs numbered in order: a few runs (one per 64 ids, 16 bytes each), where a
     * hash per id took 2 MiB; then the first repeated far from it. */
    size_t big = 100000;
    FILE *f = fopen("ids.csv", "w");
    fputs("job_id,submit_time,duration,num_gpus\n", f);
    for (size_t i = 0; i < big; i++)
        fprintf(f, "job-%07zu,0,10,1\n", i);
    fclose(f);
    size_t bytes = id_bytes_of("ids.csv");
    CHECK(bytes <= 64 * 1024);
    f = fopen("ids.csv", "a");
    fputs("job-0000005,0,10,1\n", f);
    fclose(f);
    CHECK_EQ_I64(read_all("ids.csv", "native", NULL, 0, NULL, NULL, diag, sizeof diag), SIM_EPARSE);
    snprintf(want, sizeof want, "ids.csv:%zu:1: error: duplicate job id 'job-0000005' (first seen on line 7)",
             big + 2);
    CHECK_STR(diag, want);
    remove("ids.csv");
}

/* A line of 1 MiB and a truncated gzip stream, for every format. */
static void test_generated(void)
{
    static const struct {
        const char *format, *opt, *header, *row;
        const char *want_line; /* expected diagnostic after "path" */
    } g[] = {
        {"native", NULL, "job_id,submit_time,duration,num_gpus,name\n", "j1,0,10,1,", ":2:5: error: field longer than 65536 bytes"},
        {"alibaba2023", NULL, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n", "p1,1,1,1,1000,,LS,Running,5,10,", ":2:11: error: field longer than 65536 bytes"},
        {"philly", NULL, "timestamp,duration,num_gpus,gpu_time,cluster\n", "2017-10-09 07:01:55,66,1,66,", ":2:5: error: field longer than 65536 bytes"},
        {"philly", NULL, "[\n", "{\"jobid\": \"", ":2: error: a job object longer than 262144 bytes"},
        {"helios", NULL, "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n", "1,", ":2:2: error: field longer than 65536 bytes"},
        {"alibaba2020", TASKS, "", "j1,i,", ":1:3: error: field longer than 65536 bytes"},
        {"gavel", GAVEL, "", "LM (batch size 10)\t", ":1:2: error: field longer than 65536 bytes"},
        {"muri", NULL, "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,priority\n", "0,1,0,10,", ":2:5: error: field longer than 65536 bytes"},
        {"tiresias", NULL, "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n", "0,1,0,10,", ":2:5: error: field longer than 65536 bytes"},
    };
    for (size_t k = 0; k < sizeof g / sizeof g[0]; k++) {
        char diag[2048], want[2048];
        FILE *f = fopen("long_line.txt", "wb");
        fputs(g[k].header, f);
        fputs(g[k].row, f);
        for (int i = 0; i < 1 << 20; i++)
            fputc('x', f);
        fputs("\n", f);
        fclose(f);
        CHECK_EQ_I64(read_all("long_line.txt", g[k].format, g[k].opt, 0, NULL, NULL, diag,
                              sizeof diag), SIM_EPARSE);
        snprintf(want, sizeof want, "long_line.txt%s", g[k].want_line);
        CHECK_STR(diag, want);
        remove("long_line.txt");
    }
    for (size_t gi = 0; gi < sizeof goods / sizeof goods[0]; gi++) {
        char path[1024], diag[2048];
        snprintf(path, sizeof path, FIX "%s", goods[gi].file);
        gzip_file(path, "truncated.gz", 40);
        int st = read_all("truncated.gz", goods[gi].format, goods[gi].opt, 0, NULL, NULL, diag,
                          sizeof diag);
        /* Every reader stops where the file does: gzip damage is located by its byte
         * offset in the file (a line would be the decompressor's read-ahead). */
        CHECK_EQ_I64(st, SIM_EIO);
        CHECK_STR(diag, "truncated.gz: error: truncated gzip stream: the file ends at byte "
                        "offset 40 inside it");
        remove("truncated.gz");
    }
}

/* One Philly JSON job: id, the text between its vc and attempts members, and its
 * attempts. */
#define PJOB(id, att)                                                                              \
    "{\"jobid\": \"" id "\", \"vc\": \"v\", \"submitted_time\": \"2017-10-03 11:00:00\", "         \
    "\"attempts\": [" att "]}"
#define PATT(t0, t1, gpus)                                                                         \
    "{\"start_time\": \"" t0 "\", \"end_time\": \"" t1 "\", \"detail\": [{\"ip\": \"m1\", "        \
    "\"gpus\": [" gpus "]}]}"

/* The Philly JSON reader: a syntax error stops the read even when bad rows are skipped
 * (the parser cannot find the next job after it), while a bad field of a well-formed job
 * is skipped; syntax errors cite the line where the job object begins; a NUL in a
 * string is an error; a job runs only when one attempt has both times and GPUs. */
static void test_philly_json(void)
{
    char diag[2048];
    uint64_t n = 0;
    check_put(
        "pj_skip.json",
        "[\n" PJOB("a", PATT("2017-10-03 11:00:10", "2017-10-03 12:00:10",
                             "\"g0\"")) ",\n"
                                        "{\"jobid\": \"b\", \"vc\": \"v\"\n \"submitted_time\": "
                                        "\"2017-10-03 11:00:02\"},\n" PJOB(
                                            "c", PATT("2017-10-03 11:00:10", "2017-10-03 12:00:10",
                                                      "\"g0\"")) "\n]\n");
    read_skip = true;
    CHECK_EQ_I64(read_all("pj_skip.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(
        diag,
        "pj_skip.json:3: error: malformed JSON: object value separator ',' expected "
        "(on line 4) (--skip-bad-rows cannot skip it: the JSON cannot be resumed after a syntax "
        "error)");
    read_skip = false;
    CHECK_EQ_I64(read_all("pj_skip.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(
        diag,
        "pj_skip.json:3: error: malformed JSON: object value separator ',' expected (on line 4)");
    /* A bad field leaves the parser in step: that job alone is skipped. */
    check_put(
        "pj_field.json",
        "[\n" PJOB("a", PATT("2017-10-03 11:00:10", "2017-10-03 12:00:10",
                             "\"g0\"")) ",\n"
                                        "{\"jobid\": \"b\", \"vc\": \"v\", \"submitted_time\": "
                                        "\"soon\"},\n" PJOB("c", PATT("2017-10-03 11:00:10",
                                                                      "2017-10-03 12:00:10",
                                                                      "\"g0\"")) "\n]\n");
    read_skip = true;
    CHECK_EQ_I64(read_all("pj_field.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag), SIM_OK);
    CHECK_EQ_I64((int64_t)n, 2);
    CHECK_EQ_I64((int64_t)read_skipped, 1);
    read_skip = false;

    check_put("pj_nul.json", "[" PJOB("a\\u0000b", PATT("2017-10-03 11:00:10",
                                                        "2017-10-03 12:00:10", "\"g0\"")) "]");
    CHECK_EQ_I64(read_all("pj_nul.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(diag, "pj_nul.json:1: error: field 'jobid': a string holds a NUL character "
                    "(\\u0000)");
    check_put("pj_nul2.json", "[" PJOB("a", "{\"start_time\": \"x\\u0000\"}") "]");
    CHECK_EQ_I64(read_all("pj_nul2.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(diag, "pj_nul2.json:1: error: field 'start_time': a string holds a NUL character "
                    "(\\u0000)");

    /* Times on the first attempt, GPUs on the second only: never ran as one attempt. */
    check_put("pj_split.json", "[" PJOB("a",
                                        "{\"start_time\": \"2017-10-03 11:00:10\", \"end_time\": "
                                        "\"2017-10-03 12:00:10\"}, {\"start_time\": \"2017-10-03 "
                                        "12:00:10\", \"detail\": [{\"ip\": \"m1\", \"gpus\": "
                                        "[\"g0\"]}]}") "," PJOB("b", PATT("2017-10-03 11:00:10",
                                                                          "2017-10-03 12:00:10",
                                                                          "\"g0\"")) "]");
    CHECK_EQ_I64(read_all("pj_split.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag), SIM_OK);
    CHECK_EQ_I64((int64_t)n, 1);
}

/* Lines that end in a lone CR: the readers whose ids are line numbers (philly CSV,
 * gavel) number their jobs by the real lines, and errors cite them. */
static void test_cr_lines(void)
{
    char *text = NULL, diag[2048];
    uint64_t n = 0;
    check_put("cr_philly.csv", "timestamp,duration,num_gpus,gpu_time,cluster\r"
                               "2017-10-09 07:01:55,60,1,60,vc1\r"
                               "2017-10-09 07:01:56,60,1,60,vc1\r\r"
                               "2017-10-09 07:01:57,60,1,60,vc1\r");
    CHECK_EQ_I64(read_all("cr_philly.csv", "philly", NULL, 0, &text, &n, diag, sizeof diag),
                 SIM_OK);
    CHECK_EQ_I64((int64_t)n, 3);
    CHECK(text && strstr(text, "2|") == text && strstr(text, "\n3|") && strstr(text, "\n5|"));
    free(text);
    check_put("cr_gavel.trace", "ResNet-50 (batch size 64)\tpython3 main.py\timagenet\t"
                                "--num_steps\t1\t1000\t1\t1\t-1\t0\r"
                                "ResNet-50 (batch size 64)\tpython3 main.py\timagenet\t"
                                "--num_steps\t1\tmany\t1\t1\t-1\t10\r");
    CHECK_EQ_I64(read_all("cr_gavel.trace", "gavel", GAVEL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(diag, "cr_gavel.trace:2:6: error: field 'total_steps': expected an integer "
                    "1..1125899906842624, got \"many\"");
}

/* Duplicate ids skipped with skip_bad_rows: each is skipped and counted (without a
 * second read of the file to find its first line, which made the read quadratic); without
 * skipping, the first one still cites its first line. */
static void test_skipped_duplicates(void)
{
    FILE *f = fopen("dups.csv", "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("job_id,submit_time,duration,num_gpus\n", f);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 10000; i++)
            fprintf(f, "job%c%d,%d,10,1\n", 'a' + i % 7, i, k * 10000 + i);
    fclose(f);
    uint64_t n = 0;
    char diag[1024];
    read_skip = true;
    CHECK_EQ_I64(read_all("dups.csv", "native", NULL, 0, NULL, &n, diag, sizeof diag), SIM_OK);
    read_skip = false;
    CHECK_EQ_I64((int64_t)n, 10000);
    CHECK_EQ_I64((int64_t)read_skipped, 10000);
    /* Without skipping, the first duplicate still cites its first line. */
    CHECK_EQ_I64(read_all("dups.csv", "native", NULL, 0, NULL, &n, diag, sizeof diag), SIM_EPARSE);
    CHECK_STR(diag, "dups.csv:10002:1: error: duplicate job id 'joba0' (first seen on line 2)");
    remove("dups.csv");
}

#define HELIOS_HDR                                                                                 \
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"      \
    "queue\n"

/* Times and durations a reader computes are bounded as the native reader bounds its
 * fields (1e10 s): a field error on the row, which skip_bad_rows skips. */
static void test_time_limits(void)
{
    char diag[2048];
    uint64_t n = 0;
    check_put("lim_span.csv", HELIOS_HDR "h1,u1,vc1,1,1,1,COMPLETED,0001-01-01 00:00:00,,,10,0\n"
                                         "h2,u1,vc1,1,1,1,COMPLETED,9999-12-31 00:00:00,,,10,0\n"
                                         "h3,u1,vc1,1,1,1,COMPLETED,0001-01-02 00:00:00,,,10,0\n");
    CHECK_EQ_I64(read_all("lim_span.csv", "helios", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(diag, "lim_span.csv:3:8: error: job 'h2': submitted 315537811200 s after midnight "
                    "of the earliest submission's day, more than the limit of 1e+10 s");
    read_skip = true;
    CHECK_EQ_I64(read_all("lim_span.csv", "helios", NULL, 0, NULL, &n, diag, sizeof diag), SIM_OK);
    CHECK_EQ_I64((int64_t)n, 2);
    CHECK_EQ_I64((int64_t)read_skipped, 1);
    read_skip = false;

    check_put("lim_dur.csv", HELIOS_HDR "h1,u1,vc1,1,1,1,COMPLETED,2020-01-01 00:00:00,"
                                        "0001-01-01 00:00:00,9999-12-31 00:00:00,,0\n");
    CHECK_EQ_I64(read_all("lim_dur.csv", "helios", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(diag, "lim_dur.csv:2:10: error: field 'end_time': expected a time at most 1e+10 s "
                    "after start_time, got \"9999-12-31 00:00:00\"");

    check_put("lim_steps.csv",
              "job_type,scale_factor,gpu_type,steps_per_sec\nX,1,V100M16,0.0001\n");
    check_put("lim_gavel.trace", "X\tc\td\t--n\t0\t1000000000000000\t1\t1\t-1\t0\n");
    CHECK_EQ_I64(read_all("lim_gavel.trace", "gavel", "steps_table=lim_steps.csv", 0, NULL, &n,
                          diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(diag, "lim_gavel.trace:1:6: error: field 'total_steps': expected steps that take at "
                    "most 1e+10 s at 0.0001 steps/s, got \"1000000000000000\"");

    check_put("lim_philly.json",
              "[" PJOB("a", PATT("0001-01-01 00:00:00", "9999-12-31 00:00:00", "\"g0\"")) "]");
    CHECK_EQ_I64(read_all("lim_philly.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK_STR(diag, "lim_philly.json:1: error: job 'a': its attempts last 315537811200 s in all, "
                    "more than the limit of 1e+10 s");
}

/* A steps-table entry of 0 steps/s on the reference type means the job cannot run so:
 * an error, not a fall back to a smaller scale factor; one the table lacks falls back. */
static void test_gavel_zero_steps(void)
{
    char diag[2048], *text = NULL;
    uint64_t n = 0;
    check_put("steps0.csv", "job_type,scale_factor,gpu_type,steps_per_sec\nX,1,V100M16,10\n"
                            "X,2,V100M16,0\n");
    check_put("steps0.trace", "X\tc\td\t--n\t0\t1000\t2\t1\t-1\t0\n");
    CHECK_EQ_I64(
        read_all("steps0.trace", "gavel", "steps_table=steps0.csv", 0, NULL, &n, diag, sizeof diag),
        SIM_EPARSE);
    CHECK_STR(diag, "steps0.trace:1:7: error: field 'scale_factor': expected a scale factor at "
                    "which the job type can run on V100M16 (the steps table steps0.csv gives it "
                    "0 steps/s at scale factor 2: cannot run there), got \"2\"");
    check_put("steps0b.trace", "X\tc\td\t--n\t0\t1000\t1\t1\t-1\t0\n"
                               "X\tc\td\t--n\t0\t1000\t4\t1\t-1\t5\n");
    check_put("steps1.csv", "job_type,scale_factor,gpu_type,steps_per_sec\nX,1,V100M16,10\n");
    CHECK_EQ_I64(read_all("steps0b.trace", "gavel", "steps_table=steps1.csv", 0, &text, &n, diag,
                          sizeof diag),
                 SIM_OK);
    /* Scale factor 4 falls back to 1: 10 x 4 / 1 = 40 steps/s, so 25 s. */
    CHECK(text && strstr(text, "\n2|5000000|25.000000|4|"));
    free(text);
}

/* alibaba2020: requests too large for the job's integers are errors, checked before any
 * conversion (4,294,967,297 GPUs wrapped to 1, 10^18 milli-CPUs overflowed); a task
 * table without task rows is an error; the job table's header is not a row. */
static void test_pai_limits(void)
{
    char diag[2048];
    uint64_t n = 0;
    check_put("pl_jobs.csv", "j1,i1,u1,Terminated,1000,2000\n");
    check_put("pl_gpu.csv", "j1,worker,1,Terminated,1010,2000,600,10,429496729700,V100\n");
    CHECK_EQ_I64(
        read_all("pl_jobs.csv", "alibaba2020", "tasks=pl_gpu.csv", 0, NULL, &n, diag, sizeof diag),
        SIM_EPARSE);
    CHECK_STR(diag, "pl_jobs.csv:1:1: error: field 'job_name': expected a job of at most 65536 "
                    "GPUs in the task table, got \"j1\"");
    check_put("pl_cpu.csv", "j1,worker,1000,Terminated,1010,2000,1000000000000000,10,,\n");
    CHECK_EQ_I64(
        read_all("pl_jobs.csv", "alibaba2020", "tasks=pl_cpu.csv", 0, NULL, &n, diag, sizeof diag),
        SIM_EPARSE);
    CHECK_STR(diag, "pl_cpu.csv:1:7: error: field 'plan_cpu': expected a request whose inst_num x "
                    "plan_cpu x 10, summed over the job's tasks, is at most 2^40 milli-CPUs, got "
                    "\"1000000000000000\"");
    check_put("pl_mem.csv", "j1,worker,1,Terminated,1010,2000,1,1e12,,\n");
    CHECK_EQ_I64(
        read_all("pl_jobs.csv", "alibaba2020", "tasks=pl_mem.csv", 0, NULL, &n, diag, sizeof diag),
        SIM_EPARSE);
    CHECK(strncmp(diag, "pl_mem.csv:1:8: error: field 'plan_mem'", 39) == 0);
    static const char *const empty[] = {"", "job_name,task_name,inst_num,status,start_time,"
                                            "end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n"};
    for (int k = 0; k < 2; k++) {
        check_put("pl_empty.csv", empty[k]);
        CHECK_EQ_I64(read_all("pl_jobs.csv", "alibaba2020", "tasks=pl_empty.csv", 0, NULL, &n, diag,
                              sizeof diag),
                     SIM_EPARSE);
        CHECK_STR(diag, "pl_empty.csv:1: error: the task table has no task rows: expected "
                        "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
                        "plan_mem,plan_gpu,gpu_type");
    }
    /* Header, a job, a job still running: two rows, one job, one ignored. */
    check_put("pl_jobs_h.csv", "job_name,inst_id,user,status,start_time,end_time\n"
                               "j1,i1,u1,Terminated,1000,2000\nj2,i2,u2,Running,1500,\n");
    check_put("pl_ok.csv", "j1,worker,1,Terminated,1010,2000,600,10,50,V100\n");
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    const char *opts[1] = {"tasks=pl_ok.csv"};
    trace_options o = {.format = "alibaba2020",
                       .tenants = tenants,
                       .models = models,
                       .gpu_types = model_catalog_names(cat),
                       .opts = opts,
                       .n_opts = 1};
    trace_reader *r = NULL;
    sim_diag d;
    job_spec j;
    CHECK_EQ_I64(trace_reader_open(&r, "pl_jobs_h.csv", &o, &d), SIM_OK);
    n = 0;
    while (r && trace_reader_next(r, &j, &d) == 1)
        n++;
    CHECK_EQ_I64((int64_t)n, 1);
    CHECK_EQ_I64(r ? (int64_t)trace_reader_rows(r) : -1, 2);
    CHECK_EQ_I64(r ? (int64_t)trace_reader_ignored(r) : -1, 1);
    trace_reader_close(r);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
}

/* Philly JSON from standard input: the layout is told from the stream already open, not
 * by opening the path again (which read "-" as the CSV). Also after more white space
 * than one buffer holds, whose lines still count. */
static void test_philly_stdin(void)
{
    char diag[2048];
    uint64_t n = 0;
    check_put("pj_stdin.json",
              "[" PJOB("a", PATT("2017-10-03 11:00:10", "2017-10-03 12:00:10", "\"g0\"")) "]\n");
    int saved = dup(0);
    int fd = open("pj_stdin.json", O_RDONLY);
    CHECK(fd >= 0 && saved >= 0);
    if (fd < 0 || saved < 0)
        return;
    dup2(fd, 0);
    close(fd);
    CHECK_EQ_I64(read_all("-", "philly", NULL, 0, NULL, &n, diag, sizeof diag), SIM_OK);
    dup2(saved, 0);
    close(saved);
    CHECK_EQ_I64((int64_t)n, 1);
    FILE *f = fopen("pj_space.json", "w");
    CHECK(f != NULL);
    if (!f)
        return;
    for (int i = 0; i < 70000; i++)
        fputs(i % 2 ? "\n" : " \r\n", f);
    fputs("[\n{\"jobid\": \"a\",,}]\n", f);
    fclose(f);
    CHECK_EQ_I64(read_all("pj_space.json", "philly", NULL, 0, NULL, &n, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK(strncmp(diag, "pj_space.json:70002: error: malformed JSON", 42) == 0);
}

/* Header errors cite the header's own line, after blank lines. */
static void test_header_lines(void)
{
    char diag[2048];
    check_put("hl_helios.csv", "\n\njob_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time\n");
    CHECK_EQ_I64(read_all("hl_helios.csv", "helios", NULL, 0, NULL, NULL, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK(strncmp(diag, "hl_helios.csv:3: error: header lacks column 'duration'", 54) == 0);
    check_put("hl_a23.csv", "\nname,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
                            "pod_phase,scheduled_time\n");
    CHECK_EQ_I64(read_all("hl_a23.csv", "alibaba2023", NULL, 0, NULL, NULL, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK(strncmp(diag, "hl_a23.csv:2: error: header lacks column 'creation_time'", 56) == 0);
    check_put("hl_tir.csv", "\n\n\njob_id,num_gpu,submit_time,iterations,model_name,duration,"
                            "interval,resource_time_0\n");
    CHECK_EQ_I64(read_all("hl_tir.csv", "tiresias", NULL, 0, NULL, NULL, diag, sizeof diag),
                 SIM_EPARSE);
    CHECK(strncmp(diag, "hl_tir.csv:4: error: the header has Muri's", 42) == 0);
}

static void test_options(void)
{
    char diag[1024];
    CHECK_EQ_I64(read_all(FIX "good_philly.csv", "philly", "user=1", 0, NULL, NULL, diag,
                          sizeof diag), SIM_EINVAL);
    CHECK_STR(diag, "error: --trace-opt 'user=1': unknown key for the philly format (known: tenant)");
    CHECK_EQ_I64(read_all(FIX "good_muri.csv", "muri", "x=1", 0, NULL, NULL, diag, sizeof diag),
                 SIM_EINVAL);
    CHECK_STR(diag, "error: --trace-opt 'x=1': the muri format has no options");
    CHECK_EQ_I64(read_all(FIX "good_pai_jobs.csv", "alibaba2020", NULL, 0, NULL, NULL, diag,
                          sizeof diag), SIM_EINVAL);
    CHECK_STR(diag, "error: the alibaba2020 format reads pai_job_table.csv joined with the task "
                    "table: give --trace-opt tasks=pai_task_table.csv");
    CHECK_EQ_I64(read_all(FIX "good_philly.csv", "philly", "tenant=user", 0, NULL, NULL, diag,
                          sizeof diag), SIM_EINVAL);
    CHECK_STR(diag, "error: --trace-opt tenant=user: the derived Philly CSV has no user column "
                    "(only the VC, 'cluster')");
    CHECK_STR(trace_format_options("gavel"), "steps_table, ref_gpu_type");
}

static void test_timestamps(void)
{
    int64_t s = 0;
    CHECK(trace_parse_timestamp("1970-01-01 00:00:00", 19, &s) && s == 0);
    /* 2017-10-09 07:01:55 UTC is 1507532515 (date -u -d ... +%s). */
    CHECK(trace_parse_timestamp("2017-10-09 07:01:55", 19, &s) && s == 1507532515);
    CHECK(trace_parse_timestamp(" 2020-02-29 23:59:59 ", 21, &s) && s == 1583020799);
    CHECK(!trace_parse_timestamp("2019-02-29 00:00:00", 19, &s));
    CHECK(!trace_parse_timestamp("2017-10-09T07:01:55", 19, &s));
    CHECK(!trace_parse_timestamp("2017-10-09 24:00:00", 19, &s));
    CHECK(!trace_parse_timestamp("2017-1-09 07:01:55", 18, &s));
}

static void test_clusters(void)
{
    char buf[1024], dg[2048];
    sim_diag d;
    cluster_spec *c = NULL;
    const sim_intern *types = model_catalog_names(cat);
    CHECK_EQ_I64(cluster_spec_load(&c, FIX "bad_cluster_switch.csv", types, &d), SIM_EPARSE);
    CHECK_STR(sim_diag_format(&d, dg, sizeof dg),
              FIX "bad_cluster_switch.csv:1: error: header lacks column 'mem_p_node'; expected "
                  "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node");
    CHECK_EQ_I64(cluster_spec_load(&c, FIX "bad_cluster_pai.csv", types, &d), SIM_EPARSE);
    CHECK_STR(sim_diag_format(&d, dg, sizeof dg),
              FIX "bad_cluster_pai.csv:2:2: error: field 'gpu_type': expected a known GPU type (" KNOWN
                  "), got \"Z9000\"");
    CHECK_EQ_I64(cluster_spec_load_typed(&c, "1xV100M16:8", types, "X1", &d), SIM_EINVAL);
    const char *p;
    /* SOURCE.txt says 1,896 machines; the file holds 1,897 rows with 1,897 distinct
     * machine names (wc -l; cut -d, -f1 | sort -u | wc -l), and the 6,742 GPUs agree. */
    if ((p = check_shared("alibaba_pai_v2020/pai_machine_spec.csv", buf, sizeof buf))) {
        CHECK_EQ_I64(cluster_spec_load(&c, p, types, &d), SIM_OK);
        CHECK_EQ_I64(c ? c->n_nodes : 0, 1897);
        CHECK_EQ_I64(c ? cluster_spec_gpus(c) : 0, 6742);
        cluster_spec_destroy(c);
        c = NULL;
    }
    if ((p = check_shared("alibaba_pai_v2020/pai_machine_spec_with_header.csv", buf, sizeof buf))) {
        CHECK_EQ_I64(cluster_spec_load(&c, p, types, &d), SIM_OK);
        CHECK_EQ_I64(c ? c->n_nodes : 0, 1897);
        CHECK_EQ_I64(c ? cluster_spec_gpus(c) : 0, 6742);
        cluster_spec_destroy(c);
        c = NULL;
    }
    if ((p = check_shared("muri/n8g8.csv", buf, sizeof buf))) {
        CHECK_EQ_I64(cluster_spec_load_typed(&c, p, types, "V100M32", &d), SIM_OK);
        CHECK_EQ_I64(c ? c->n_nodes : 0, 8);
        CHECK_EQ_I64(c ? cluster_spec_gpus(c) : 0, 64);
        CHECK(c && c->nodes[0].cpu_milli == 92000 && c->nodes[0].mem_mib == 520 * 1024);
        CHECK(c && strcmp(c->nodes[7].name, "s0-n007") == 0);
        cluster_spec_destroy(c);
        c = NULL;
    }
    if ((p = check_shared("tiresias/n160g8.csv", buf, sizeof buf))) {
        CHECK_EQ_I64(cluster_spec_load(&c, p, types, &d), SIM_OK);
        CHECK_EQ_I64(c ? c->n_nodes : 0, 160);
        CHECK_EQ_I64(c ? cluster_spec_gpus(c) : 0, 1280);
        cluster_spec_destroy(c);
        c = NULL;
    }
}

static void staged_count(const char *rel, const char *format, const char *opt, uint64_t want)
{
    char buf[1024], diag[2048];
    const char *p = check_shared(rel, buf, sizeof buf);
    if (!p)
        return;
    uint64_t n = 0;
    int st = read_all(p, format, opt, 0, NULL, &n, diag, sizeof diag);
    CHECK_EQ_I64(st, SIM_OK);
    if (st != SIM_OK)
        fprintf(stderr, "%s: %s\n", rel, diag);
    CHECK_EQ_I64(n, want);
}

/* Lines of a (possibly gzipped) file, by zcat -f. */
static uint64_t file_lines(const char *path)
{
    char cmd[2100];
    snprintf(cmd, sizeof cmd, "zcat -f '%.2048s' | wc -l", path);
    FILE *f = popen(cmd, "r");
    unsigned long long n = 0;
    if (f && fscanf(f, "%llu", &n) != 1)
        n = 0;
    if (f)
        pclose(f);
    return n;
}

/* Every openb variant of pod_lists_gz/: one job per pod line, or, for the lists without
 * times (multigpu), the error that says only pack can read them. */
static void test_openb_variants(void)
{
    char dir[1024];
    if (!check_shared("alibaba_gpu_v2023/pod_lists_gz", dir, sizeof dir))
        return;
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    if (!dp)
        return;
    int seen = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!strstr(de->d_name, ".csv"))
            continue;
        char path[2048], diag[2048] = "";
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        uint64_t n = 0;
        int st = read_all(path, "alibaba2023", NULL, 0, NULL, &n, diag, sizeof diag);
        bool ok = strstr(de->d_name, "multigpu")
                      ? st == SIM_EPARSE && strstr(diag, "this pod list has no times")
                      : st == SIM_OK && n > 0 && n == file_lines(path) - 1;
        if (!ok) {
            check_failed++;
            fprintf(stderr, "%s: status %d, %llu jobs: %s\n", de->d_name, st,
                    (unsigned long long)n, diag);
        }
        seen++;
    }
    closedir(dp);
    CHECK_EQ_I64(seen, 23);
}

static void test_staged(void)
{
    staged_count("pollux_adaptdl/traces/philly.csv.gz", "philly", NULL, 82247);
    staged_count("alibaba_gpu_v2023/openb_pod_list_default.csv", "alibaba2023", NULL, 8152);
    staged_count("muri/sim_trace_data/trace1.csv", "muri", NULL, 1494);
    staged_count("muri/sim_trace_data/trace2.csv.gz", "muri", NULL, 5755);
    staged_count("muri/sim_trace_data/trace3.csv", "muri", NULL, 992);
    staged_count("muri/sim_trace_data/trace4.csv", "muri", NULL, 2638);
    staged_count("muri/sim_trace_data/trace1_pr.csv", "muri", NULL, 1494);
    staged_count("muri/testbed/cluster_trace.csv", "muri", NULL, 400);
    staged_count("tiresias/60_job.csv", "tiresias", NULL, 60);
    char buf[1024];
    const char *iso = check_shared("gavel/gavel_simulation_isolated_throughputs.csv", buf,
                                   sizeof buf);
    if (iso && derive_steps(iso, "gavel_steps_derived.csv")) {
        const char *opt = "steps_table=gavel_steps_derived.csv";
        staged_count("gavel/traces/physical_cluster/max_min_fairness.trace", "gavel", opt, 96);
        staged_count("gavel/traces/physical_cluster/minimize_makespan.trace", "gavel", opt, 100);
        staged_count("gavel/traces/msr_seed0/6214e9.trace.gz", "gavel", opt, 2000);
        staged_count("gavel/traces/msr_seed0/0e4a51.trace.gz", "gavel", opt, 1181);
    }
}

/* Drop the "|L<line>" suffix of each canonical line (lines differ after a rewrite). */
static void strip_lines(char *t)
{
    char *o = t;
    for (char *p = t; *p;) {
        char *nl = strchr(p, '\n');
        char *cut = nl ? nl : p + strlen(p);
        char *l = cut;
        while (l > p && l[-1] != '|')
            l--;
        size_t keep = (size_t)(l - p);
        memmove(o, p, keep);
        o += keep;
        if (nl)
            *o++ = '\n';
        p = nl ? nl + 1 : cut;
    }
    *o = '\0';
}

/* Every fixture written in the native format and read back gives the same jobs. */
static void test_round_trip(void)
{
    for (size_t g = 0; g < sizeof goods / sizeof goods[0]; g++) {
        char path[1024];
        snprintf(path, sizeof path, FIX "%s", goods[g].file);
        sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
        const char *opts[1] = {goods[g].opt};
        trace_options o = {.format = goods[g].format,
                           .tenants = tenants,
                           .models = models,
                           .gpu_types = model_catalog_names(cat),
                           .opts = opts,
                           .n_opts = goods[g].opt ? 1 : 0};
        trace_reader *r = NULL;
        trace_writer *w = NULL;
        sim_diag d;
        CHECK_EQ_I64(trace_reader_open(&r, path, &o, &d), SIM_OK);
        CHECK_EQ_I64(trace_writer_open(&w, "round_trip.csv", tenants, models,
                                       model_catalog_names(cat), &d),
                     SIM_OK);
        job_spec j;
        while (r && w && trace_reader_next(r, &j, &d) == 1)
            CHECK_EQ_I64(trace_writer_put(w, &j), SIM_OK);
        CHECK_EQ_I64(trace_writer_close(w, true, &d), SIM_OK);
        trace_reader_close(r);
        sim_intern_destroy(tenants);
        sim_intern_destroy(models);
        char *a = NULL, *b = NULL;
        read_all(path, goods[g].format, goods[g].opt, 0, &a, NULL, NULL, 0);
        read_all("round_trip.csv", "native", NULL, 0, &b, NULL, NULL, 0);
        if (a && b) {
            strip_lines(a);
            strip_lines(b);
        }
        CHECK(a && b && strcmp(a, b) == 0);
        if (a && b && strcmp(a, b) != 0)
            fprintf(stderr, "%s round trip:\n%s---\n%s", goods[g].file, a, b);
        free(a);
        free(b);
        remove("round_trip.csv");
    }
}

/* Fail the k-th allocation of an open and whole read, for k = 1.. until a read
 * succeeds: every failure is SIM_ENOMEM (or a clean read), and nothing leaks. */
static void test_fault_injection(void)
{
    for (size_t g = 0; g < sizeof goods / sizeof goods[0]; g++) {
        char path[1024];
        snprintf(path, sizeof path, FIX "%s", goods[g].file);
        int failures = 0, leaks = 0;
        for (uint64_t k = 1; k < 400; k++) {
            int64_t live = sim_alloc_live();
            sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
            const char *opts[1] = {goods[g].opt};
            trace_options o = {.format = goods[g].format,
                               .tenants = tenants,
                               .models = models,
                               .gpu_types = model_catalog_names(cat),
                               .opts = opts,
                               .n_opts = goods[g].opt ? 1 : 0};
            sim_alloc_fail_after(k);
            trace_reader *r = NULL;
            sim_diag d;
            int st = trace_reader_open(&r, path, &o, &d);
            job_spec j;
            while (st == SIM_OK && (st = trace_reader_next(r, &j, &d)) == 1)
                st = SIM_OK;
            trace_reader_close(r);
            sim_alloc_fail_after(0);
            if (st != 0 && st != SIM_ENOMEM && st != SIM_EIO) {
                failures++;
                fprintf(stderr, "%s: allocation %llu: status %d: %s\n", goods[g].file,
                        (unsigned long long)k, st, d.msg);
            }
            sim_intern_destroy(tenants);
            sim_intern_destroy(models);
            if (sim_alloc_live() != live)
                leaks++;
            if (st == 0)
                break;
        }
        CHECK_EQ_I64(failures, 0);
        CHECK_EQ_I64(leaks, 0);
    }
}

int main(void)
{
    sim_diag d;
    if (model_catalog_load(&cat, model_catalog_default_path(), &d) != SIM_OK) {
        fprintf(stderr, "cannot load the catalog: %s\n", d.msg);
        return 1;
    }
    test_golden();
    test_chunk_invariance();
    test_bad_fixtures();
    test_philly_json_line_ends();
    test_sorting();
    test_numbered_ids();
    test_generated();
    test_options();
    test_philly_json();
    test_cr_lines();
    test_skipped_duplicates();
    test_time_limits();
    test_header_lines();
    test_gavel_zero_steps();
    test_pai_limits();
    test_philly_stdin();
    test_timestamps();
    test_clusters();
    test_staged();
    test_openb_variants();
    test_fault_injection();
    test_round_trip();
    model_catalog_destroy(cat);
    return check_done();
}
