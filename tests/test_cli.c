/*
 * test_cli.c: the clustersim command as users run it — each bad option or input gives
 * its one-line error and a non-zero status; the demo and the policy list work; a run
 * writes its five outputs; two runs with the same seed write identical bytes; and the
 * Alibaba openb trace replays under binpack with every pod in jobs.csv exactly once and
 * the cluster's accounting verified after every event; a run whose preemptions lose
 * every segment stops at --stall-limit; every policy runs or rejects a job with a master
 * and a parameter server; every policy replays generated gang traces with the accounting
 * verified, every job counted once and the same bytes from the same seed; the summary's
 * lost work is the sum of jobs.csv's column.
 */
#include "check.h"

#include <zlib.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run `args` through the binary; stdout to out.txt, stderr to err.txt; exit status. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s >out.txt 2>err.txt", SIM_BINARY, args);
    return check_system(cmd);
}

static char *first_line(const char *path)
{
    char *s = check_slurp(path, NULL);
    if (s)
        s[strcspn(s, "\n")] = '\0';
    return s;
}

static void expect(const char *args, int status, const char *err)
{
    int rc = run(args);
    char *line = first_line("err.txt");
    if (rc != status || !line || strcmp(line, err) != 0) {
        check_failed++;
        fprintf(stderr, "clustersim %s\n  status %d (expected %d)\n  got:      %s\n"
                        "  expected: %s\n", args, rc, status, line ? line : "(none)", err);
    } else {
        check_passed++;
    }
    free(line);
}

static bool same_file(const char *a, const char *b);

/* An empty file or directory name (an unset shell variable, most often) is named as
 * such; an empty output directory is refused before anything is written (demo wrote its
 * report under the root directory); compare refuses --check, which its runs would take
 * and leave nothing to compare. */
static void test_empty_names(void)
{
    check_put("en_t.csv", "job_id,submit_time,duration,num_gpus\na,0,10,1\n");
    expect("run --trace '' --cluster 1xT4:1", 2,
           "clustersim: \"\" (an empty file name): error: cannot open: No such file or directory");
    expect("run --trace en_t.csv --cluster 1xT4:1 --failures '' --out en_o", 2,
           "clustersim: \"\" (an empty file name): error: cannot open: No such file or directory");
    expect("trace stats ''", 2,
           "clustersim: \"\" (an empty file name): error: cannot open: No such file or directory");
    static const char *const cmds[] = {
        "run --trace en_t.csv --cluster 1xT4:1 --out ''",
        "compare --trace en_t.csv --cluster 1xT4:1 --policies fifo,sjf --out ''",
        "pack --trace en_t.csv --cluster 1xT4:1 --out ''",
        "sweep en_grid.json --out ''",
        "demo --jobs 10 --out ''",
    };
    check_put("en_grid.json", "{\"traces\": [\"en_t.csv\"], \"clusters\": [\"1xT4:1\"], "
                              "\"policies\": [\"fifo\"]}");
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        expect(cmds[k], 2,
               "clustersim: error: option --out: expected a directory name, got an "
               "empty one");
    expect("compare --trace en_t.csv --cluster 1xT4:1 --policies fifo,sjf --out en_c --check", 2,
           "clustersim: error: clustersim compare has no --check: check the inputs with "
           "clustersim run --check (same trace, cluster and options)");
}

static void test_errors(void)
{
    expect("frobnicate", 2, "clustersim: error: unknown command 'frobnicate'");
    expect("run --cluster 1xT4:1", 2,
           "clustersim: error: clustersim run needs --trace FILE (see clustersim run --help)");
    expect("run --trace x.csv", 2,
           "clustersim: error: clustersim run needs --cluster FILE|SPEC (see clustersim run "
           "--help)");
    expect("run --trace x.csv --cluster 1xT4:1 --bogus", 2,
           "clustersim: error: unknown option '--bogus' for 'clustersim run' (see clustersim run "
           "--help)");
    expect("run --trace x.csv --cluster 1xT4:1 --seed", 2,
           "clustersim: error: option --seed needs a value");
    expect("run --trace x.csv --cluster 1xT4:1 --seed abc", 2,
           "clustersim: error: option --seed: expected an integer 0..18446744073709551615, got "
           "\"abc\"");
    expect("run --trace x.csv --cluster 1xT4:1 --sample-interval 5parsecs", 2,
           "clustersim: error: option --sample-interval: expected a duration such as 90, 90s, "
           "15m, 2h or 1d, got \"5parsecs\"");
    expect("run --trace x.csv --cluster 1xT4:1 --sample-interval 1e-9", 2,
           "clustersim: error: option --sample-interval: expected 0 (no samples) or at least "
           "0.001 s, got 1e-9");
    /* 1e-9 s was a horizon of 0 µs: the run stopped at time 0, where 0 means none. */
    expect("run --trace x.csv --cluster 1xT4:1 --horizon 1e-9", 2,
           "clustersim: error: option --horizon: expected 0 (no horizon) or at least 1e-6 s, got "
           "1e-9");
    expect("run --trace x.csv --cluster 1xT4:1 --mtbf 1h --mttr 1m", 2,
           "clustersim: error: --mtbf needs --horizon T (random failures go on forever)");
    /* The zoo's options without --zoo would be ignored: refused, as in trace gen. */
    expect("run --trace x.csv --cluster 1xT4:1 --zoo-over 2", 2,
           "clustersim: error: --zoo-ref, --zoo-over and --zoo-slo describe the annotation of "
           "--zoo; give --zoo");
    expect("run --trace x.csv --cluster 1xT4:1 --policy-opt backfill", 2,
           "clustersim: error: --policy-opt 'backfill': expected KEY=VALUE or POLICY:KEY=VALUE");
    char fx[1024], args[2048];
    snprintf(fx, sizeof fx, "%s/tests/fixtures/good_native_quoted.csv", SIM_SOURCE_DIR);
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --policy nosuch", fx);
    int rc0 = run(args);
    char *l0 = first_line("err.txt");
    CHECK_EQ_I64(rc0, 2);
    CHECK(l0 && strncmp(l0, "clustersim: error: unknown policy 'nosuch' (known: fifo, binpack, "
                            "random, ", 74) == 0);
    free(l0);
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --policy-opt depth=3", fx);
    expect(args, 2, "clustersim: error: --policy-opt 'depth=3': policy 'binpack' has no option "
                    "'depth' (see clustersim policies)");
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --policy-opt binpak:depth=3", fx);
    expect(args, 2,
           "clustersim: error: --policy-opt 'binpak:depth=3': unknown policy 'binpak' "
           "(known: fifo, binpack, random, predictive, fgd, bestfit, dotprod, "
           "gpupacking, gpuclustering, fairshare, quota, sjf, qssf, las, "
           "srtf, srsf, gittins, "
           "themis, antman, "
           "interleave, hetero, "
           "static-order, data-parallel, gavel, elastic, rigid-min, static, optimus)");
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --policy-opt backfill=maybe", fx);
    expect(args, 2, "clustersim: error: policy 'binpack': option 'backfill': expected true or "
                    "false, got \"maybe\"");
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --policy fifo "
                                "--policy-opt binpack:backfill=false --quiet", fx);
    expect(args, 2, "clustersim: error: --policy-opt 'binpack:backfill=false': policy "
                    "'binpack' is not run here (the policies run: fifo)");
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --policy binpack "
                                "--policy-opt binpack:backfill=false --quiet", fx);
    CHECK_EQ_I64(run(args), 0);
    expect("run --trace no/such.csv --cluster 1xT4:1", 2,
           "clustersim: no/such.csv: error: cannot open: No such file or directory");
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT9:1", fx);
    int rc = run(args);
    char *line = first_line("err.txt");
    CHECK_EQ_I64(rc, 2);
    CHECK(line && strstr(line, "group '1xT9:1': unknown GPU type (known: K80, P100,"));
    free(line);
    snprintf(args, sizeof args, "run --trace %s --format philly2 --cluster 1xT4:1", fx);
    rc = run(args);
    line = first_line("err.txt");
    CHECK_EQ_I64(rc, 2);
    CHECK(line && strncmp(line, "clustersim: error: unknown trace format 'philly2' (known: native,",
                          64) == 0);
    free(line);
    FILE *f = fopen("not_a_dir", "w");
    fclose(f);
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --out not_a_dir/sub --quiet", fx);
    rc = run(args);
    line = first_line("err.txt");
    CHECK(rc != 0);
    CHECK(line && strstr(line, "cannot create directory 'not_a_dir/sub'"));
    free(line);
    char *all = check_slurp("err.txt", NULL);
    CHECK(all && strchr(all, '\n') == all + strlen(all) - 1); /* one line, not two */
    free(all);
    /* An output may not replace an input: a trace read from the output directory, and a
     * cluster file that is one of its files, stop the run before anything is written. */
    CHECK(check_system("rm -rf clob && mkdir clob") == 0);
    snprintf(args, sizeof args, "cp %s clob/jobs.csv", fx);
    CHECK(check_system(args) == 0);
    expect("run --trace clob/jobs.csv --cluster 1xT4:8 --out clob --quiet", 2,
           "clustersim: error: --out clob would write 'clob/jobs.csv', which is the trace "
           "(--trace clob/jobs.csv): an output may not replace an input; name another output "
           "path");
    CHECK(same_file("clob/jobs.csv", fx));
    CHECK(access("clob/summary.json", F_OK) != 0);
    check_put("clob/summary.json", "node_id,gpus,gpu_type\nn0,4,T4\n");
    snprintf(args, sizeof args, "run --trace %s --cluster ./clob/summary.json --out clob/ --quiet",
             fx);
    expect(args, 2,
           "clustersim: error: --out clob/ would write 'clob/summary.json', which is the "
           "cluster file (--cluster ./clob/summary.json): an output may not replace an input; "
           "name another output path");
    mkdir("ro_dir", 0555);
    snprintf(args, sizeof args, "run --trace %s --cluster 1xT4:1 --out ro_dir --quiet", fx);
    rc = run(args);
    line = first_line("err.txt");
    /* As root, a read-only directory is still writable; the check matters for users. */
    if (geteuid() != 0) {
        CHECK(rc != 0);
        CHECK(line && strstr(line, "cannot write to directory 'ro_dir'"));
    }
    free(line);
}

static void test_commands(void)
{
    /* A calibrated contention file slows co-located jobs only beyond time-slicing: two
     * half-GPU jobs that use half a GPU each, with every C entry 3, get x = 3 x 0.5 and
     * run at (1 + 0.5) / (1 + 1.5) = 0.6 of their speed (100 s -> 166.67 s); with
     * entries 0.5 the factor is above 1 and nothing changes. */
    FILE *sh = fopen("share2.csv", "w");
    fputs("job_id,submit_time,duration,num_gpus,gpu_milli\na,0,100,1,500\nb,0,100,1,500\n", sh);
    fclose(sh);
    static const char *const res[] = {"sm", "mem", "l2", "pcie"};
    static const char *const coef[] = {"3", "0.5"};
    for (int k = 0; k < 2; k++) {
        char name[32];
        snprintf(name, sizeof name, "contention%d.csv", k);
        FILE *cf = fopen(name, "w");
        fputs("victim,aggressor,coefficient\n", cf);
        for (int v = 0; v < 4; v++)
            for (int a = 0; a < 4; a++)
                fprintf(cf, "%s,%s,%s\n", res[v], res[a], coef[k]);
        fclose(cf);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "run --trace share2.csv --cluster 1xV100M16:1 --quiet "
                                  "--interference %s --out contended%d", name, k);
        CHECK_EQ_I64(run(cmd), 0);
        snprintf(name, sizeof name, "contended%d/jobs.csv", k);
        char *jobs = check_slurp(name, NULL);
        const char *end = k == 0 ? "166.666667" : "100.000000";
        char want[96];
        snprintf(want, sizeof want, "\na,,,0,done,0.000000,0.000000,%s,", end);
        CHECK(jobs && strstr(jobs, want));
        free(jobs);
    }
    /* A trace that can be read only once (standard input, a FIFO) is read once: the
     * fragmentation workload is the arrivals, and a duplicate id is still caught. */
    FILE *dup = fopen("dup_ids.csv", "w");
    fputs("job_id,submit_time,duration,num_gpus\nj1,0,10,1\nj2,1,10,1\nj1,2,10,1\n", dup);
    fclose(dup);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s run --trace - --cluster 1xT4:1 <dup_ids.csv >/dev/null "
                              "2>err.txt", SIM_BINARY);
    CHECK(check_system(cmd) == 2);
    char *derr = check_slurp("err.txt", NULL);
    CHECK(derr && strstr(derr, "clustersim: -:4:1: error: duplicate job id 'j1' (seen before; a "
                               "stream cannot be read again to find its first line)\n"));
    free(derr);
    remove("fifo.csv");
    CHECK(mkfifo("fifo.csv", 0600) == 0);
    snprintf(cmd, sizeof cmd, "(cat share2.csv >fifo.csv &) && %s run --trace fifo.csv "
                              "--cluster 1xT4:1 --quiet --out fifo_run 2>err.txt",
             SIM_BINARY);
    CHECK(check_system(cmd) == 0);
    char *fj = check_slurp("fifo_run/jobs.csv", NULL);
    CHECK(fj && strstr(fj, "\na,") && strstr(fj, "\nb,"));
    free(fj);
    remove("fifo.csv");
    /* A run ended by a signal leaves no temporary file: the trace comes from a pipe that
     * stays open, so the run is still reading when it is killed. */
    CHECK_EQ_I64(run("trace gen --jobs 2000 --out sig_trace.csv"), 0); /* > 64 KiB */
    snprintf(cmd, sizeof cmd,
             "(cat sig_trace.csv; sleep 3) | %s run --trace - --cluster 4xV100M32:8 --out "
             "sig_run --quiet 2>/dev/null & p=$!; sleep 1; kill -TERM $p; wait $p; "
             "echo $? >sig.txt",
             SIM_BINARY);
    check_system(cmd);
    char *sig = check_slurp("sig.txt", NULL);
    CHECK(sig && atoi(sig) == 128 + 15);
    free(sig);
    DIR *sd = opendir("sig_run");
    CHECK(sd != NULL);
    int leftovers = 0;
    for (struct dirent *de; sd && (de = readdir(sd));)
        leftovers += strstr(de->d_name, ".tmp.") != NULL;
    if (sd)
        closedir(sd);
    CHECK_EQ_I64(leftovers, 0);
    /* --check opens the inputs and sets the policy up, and writes nothing. */
    CHECK_EQ_I64(run("run --trace share2.csv --cluster 1xT4:1 --check --out checked"), 0);
    CHECK(access("checked/jobs.csv", F_OK) != 0);
    expect("run --trace share2.csv --cluster 1xT4:1 --check --policy fgd --policy-opt cache=3",
           2, "clustersim: error: policy 'fgd': option 'cache': expected 0 or a power of two, "
              "got 3");
    /* A rejected job is named with its reason at the end of the run. */
    FILE *t = fopen("reject.csv", "w");
    fputs("job_id,submit_time,duration,num_gpus\nsmall,0,10,1\nhuge,1,10,4\n", t);
    fclose(t);
    CHECK_EQ_I64(run("run --trace reject.csv --cluster 1xT4:2 --quiet --out reject"), 0);
    char *err = check_slurp("err.txt", NULL);
    CHECK(err && strstr(err, "\nclustersim: note: 1 job rejected; the first, 'huge': the "
                             "whole cluster can hold only 1 of the job's 2 replicas at once "
                             "(every reason is in jobs.csv)\n"));
    free(err);
    CHECK_EQ_I64(run("policies"), 0);
    char *out = check_slurp("out.txt", NULL);
    CHECK(out && strstr(out, "fifo") && strstr(out, "binpack") && strstr(out, "random") &&
          strstr(out, "--policy-opt backfill=true"));
    free(out);
    CHECK_EQ_I64(run("demo --jobs 300"), 0);
    out = check_slurp("out.txt", NULL);
    CHECK(out && strstr(out, "\nfifo ") && strstr(out, "\nbinpack "));
    free(out);
    CHECK_EQ_I64(run("--version"), 0);
    /* Every command and model verb answers --help on stdout with status 0. */
    static const char *const helps[] = {"run", "demo", "policies", "trace", "compare", "plot",
                                        "pack", "calibrate", "model", "model show",
                                        "model eval", "model derive", "model train",
                                        "trace stats", "trace gen", "trace convert"};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "%s --help", helps[i]);
        int rc = run(args);
        out = check_slurp("out.txt", NULL);
        if (rc != 0 || !out || !strstr(out, "usage")) {
            check_failed++;
            fprintf(stderr, "'clustersim %s': status %d, stdout without 'usage'\n", args, rc);
        }
        free(out);
    }
}

static bool same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = check_slurp(a, &la), *y = check_slurp(b, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

static void test_outputs_and_determinism(void)
{
    CHECK_EQ_I64(run("trace gen --out gen.csv.gz --jobs 3000 --seed 5 --rate 200"), 0);
    const char *base = "run --trace gen.csv.gz --cluster 4xV100M32:8,6xT4:4 --quiet";
    char args[1024];
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "%s --policy random --seed 9 --out det%d", base, k);
        CHECK_EQ_I64(run(args), 0);
    }
    const char *files[] = {"jobs.csv", "timeseries.csv", "tenants.csv", "summary.json"};
    for (int i = 0; i < 4; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "det0/%s", files[i]);
        snprintf(b, sizeof b, "det1/%s", files[i]);
        CHECK(same_file(a, b));
    }
    char *runj = check_slurp("det0/run.json", NULL);
    CHECK(runj && strstr(runj, "\"crc32\"") && strstr(runj, "\"events_per_s\"") &&
          strstr(runj, "\"seed\": 9"));
    /* The trace's size and checksum (taken beside the run) are the file's. */
    size_t glen = 0;
    char *gz = check_slurp("gen.csv.gz", &glen);
    char want_in[160];
    snprintf(want_in, sizeof want_in,
             "{\"role\": \"trace\", \"path\": \"gen.csv.gz\", \"bytes\": %zu, "
             "\"crc32\": \"%08lx\"}",
             glen, gz ? crc32(0L, (const Bytef *)gz, (uInt)glen) : 0UL);
    CHECK(runj && gz && strstr(runj, want_in));
    free(gz);
    /* The shipped model tables the rate model read are inputs too. */
    CHECK(runj && strstr(runj, "{\"role\": \"throughput\", \"path\": ") &&
          strstr(runj, "/models/data/gavel_steps.csv\", \"bytes\": "));
    free(runj);
    /* Reading the trace on a second thread changes nothing. */
    snprintf(args, sizeof args, "%s --policy random --seed 9 --out det3 --no-prefetch", base);
    CHECK_EQ_I64(run(args), 0);
    for (int i = 0; i < 4; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "det0/%s", files[i]);
        snprintf(b, sizeof b, "det3/%s", files[i]);
        CHECK(same_file(a, b));
    }
    /* A different seed changes the random policy's placements. */
    snprintf(args, sizeof args, "%s --policy random --seed 10 --out det2", base);
    CHECK_EQ_I64(run(args), 0);
    CHECK(!same_file("det0/jobs.csv", "det2/jobs.csv"));
}

static void test_openb(void)
{
    char trace[1024], nodes[1024];
    if (!check_shared("alibaba_gpu_v2023/openb_pod_list_default.csv", trace, sizeof trace) ||
        !check_shared("alibaba_gpu_v2023/openb_node_list_gpu_node.csv", nodes, sizeof nodes))
        return;
    char args[3072];
    snprintf(args, sizeof args,
             "run --format alibaba2023 --trace %s --cluster %s --policy binpack --out openb "
             "--check-invariants --quiet",
             trace, nodes);
    CHECK_EQ_I64(run(args), 0);
    char *jobs = check_slurp("openb/jobs.csv", NULL);
    CHECK(jobs != NULL);
    if (!jobs)
        return;
    /* Every pod openb-pod-0000..8151 exactly once, done or rejected with a reason. */
    static unsigned char seen[8152];
    memset(seen, 0, sizeof seen);
    int rows = 0, dup = 0, bad_status = 0;
    for (char *line = strchr(jobs, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int id;
        char status[32];
        if (sscanf(line + 1, "openb-pod-%d,,%*[^,],%*[^,],%31[^,]", &id, status) != 2 || id < 0 ||
            id >= 8152) {
            bad_status++;
            continue;
        }
        rows++;
        dup += seen[id]++ > 0;
        if (strcmp(status, "done") != 0 && strcmp(status, "rejected") != 0)
            bad_status++;
    }
    CHECK_EQ_I64(rows, 8152);
    CHECK_EQ_I64(dup, 0);
    CHECK_EQ_I64(bad_status, 0);
    int missing = 0;
    for (int i = 0; i < 8152; i++)
        missing += !seen[i];
    CHECK_EQ_I64(missing, 0);
    free(jobs);
    char *sum = check_slurp("openb/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"arrived\": 8152"));
    free(sum);
    struct stat sb;
    CHECK(stat("openb/timeseries.csv", &sb) == 0 && sb.st_size > 0);
    CHECK(stat("openb/run.json", &sb) == 0);
    CHECK(stat("openb/tenants.csv", &sb) == 0);
}

/* Online services and parameter-server jobs as users give them: an LS row without a
 * demand curve, a curve naming no row, and servers without trainers stop the run with
 * a file:line error and status 2. */
static void test_services_and_servers(void)
{
    check_put("svc_t.csv", "job_id,submit_time,duration,num_gpus,qos,min_replicas,max_replicas\n"
                           "svc,0,100,1,LS,1,4\n"
                           "a,0,100,1,,1,4\n"
                           "b,0,100,1,LS,1,4\n");
    check_put("svc_d.csv", "service,time,replicas\nsvc,0,2\nsvc,50,3\n");
    check_put("svc_d2.csv", "service,time,replicas\nsvc,0,2\nb,0,1\nzz,5,1\n");
    check_put("svc_d3.csv", "service,time,replicas\nsvc,0,2\nb,0,1\n");
    expect("run --trace svc_t.csv --cluster 2xT4:4 --policy elastic --demand svc_d.csv", 2,
           "clustersim: svc_t.csv:4: error: job 'b' has qos LS, an online service, but no demand "
           "curve in svc_d.csv (services are the LS rows; give it a curve or another qos)");
    expect("run --trace svc_t.csv --cluster 2xT4:4 --policy elastic --demand svc_d2.csv", 2,
           "clustersim: svc_d2.csv:4: error: service 'zz' has a demand curve but no row in the "
           "trace svc_t.csv (an online service is a row of qos LS with this job id)");
    CHECK_EQ_I64(run("run --trace svc_t.csv --cluster 2xT4:4 --policy elastic --demand "
                     "svc_d3.csv --out svc_out"),
                 0);
    check_put("ps_t.csv", "job_id,submit_time,duration,num_gpus,min_replicas,max_replicas,"
                          "ps_replicas,ps_cpu_milli,master_cpu_milli\n"
                          "a,0,100,1,1,2,2,4000,2000\n"
                          "b,0,100,1,1,0,2,4000,2000\n");
    expect("run --trace ps_t.csv --cluster 2xT4:4 --policy elastic", 2,
           "clustersim: ps_t.csv:3:6: error: field 'max_replicas': expected at least 1 trainer "
           "(the job has a master and parameter servers, which need trainers), got \"0\"");
}

/* --tenant-rows changed: a tenant's row only when its figures changed, and one row of
 * zeros when it goes idle. One node of 2 GPUs, samples every 10 s: A holds a GPU 0..100,
 * B 50..70. "all" writes A at 0, 10, ..., 90 and B at 50 and 60 (12 rows); "changed"
 * writes A at 0 and 100 (idle) and B at 50 and 70 (idle); jobs.csv is the same. */
static void test_tenant_rows(void)
{
    FILE *f = fopen("tr.csv", "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("job_id,submit_time,duration,num_gpus,tenant\nj1,0,100,1,A\nj2,50,20,1,B\n", f);
    fclose(f);
    const char *mode[2] = {"all", "changed"};
    for (int k = 0; k < 2; k++) {
        char args[256];
        snprintf(args, sizeof args,
                 "run --trace tr.csv --cluster 1xT4:2 --policy fifo --sample-interval 10 "
                 "--tenant-rows %s --out tr_%s --quiet",
                 mode[k], mode[k]);
        CHECK_EQ_I64(run(args), 0);
    }
    char *all = check_slurp("tr_all/tenants.csv", NULL);
    char *chg = check_slurp("tr_changed/tenants.csv", NULL);
    CHECK(all && strstr(all, "50.000000,B,1.000,1,0,0.000\n60.000000,A,1.000,1,0,0.000\n"
                             "60.000000,B,1.000,1,0,0.000\n70.000000,A,"));
    CHECK(chg && strcmp(chg, "time_s,tenant,alloc_gpus,running,pending,quota_gpus\n"
                             "0.000000,A,1.000,1,0,0.000\n"
                             "50.000000,B,1.000,1,0,0.000\n"
                             "70.000000,B,0.000,0,0,0.000\n"
                             "100.000000,A,0.000,0,0,0.000\n") == 0);
    free(all);
    free(chg);
    char *j1 = check_slurp("tr_all/jobs.csv", NULL), *j2 = check_slurp("tr_changed/jobs.csv", NULL);
    CHECK(j1 && j2 && strcmp(j1, j2) == 0);
    free(j1);
    free(j2);
    CHECK_EQ_I64(run("run --trace tr.csv --cluster 1xT4:2 --policy fifo --tenant-rows some"), 2);
    char *e = first_line("err.txt");
    CHECK(e && strcmp(e, "clustersim: error: option --tenant-rows: expected all or changed, "
                         "got \"some\"") == 0);
    free(e);
}

/* A policy that cuts every run segment before its job ends (Tiresias' queues with the
 * starvation guard and no checkpoint) would run forever: on one GPU, a (1000 s) runs
 * from 0 and b (1000 s) comes at 1; at 10 GPU-s a moves down and b takes the GPU, a's
 * 10 s lost; a has waited as long as it ran by 20 s, goes back to the first queue and
 * takes the GPU as b moves down, and so on. --stall-limit ends the run after that many
 * preemptions in a row that left their job no nearer its end, with both jobs unfinished
 * and why; with checkpoints the same jobs end. So do a restart penalty longer than a
 * reallocation round, and a job a policy never starts while its timer runs. A bad limit
 * is refused. */
/* Work lost to a failure is the work done since the segment's start (no checkpoints),
 * whatever speeds it ran at: under antman O runs alone at speed 1 from 0 to 1000, then
 * at half speed beside G; the node is down 2000..3000, so O loses 1000 + 500 = 1500 s
 * of work and ends at 3000 + 10000 x 2 = 23000 (G alone after it). It used to lose the
 * segment's time x its speed at the failure: 1000, ending at 22000. */
static void test_lost_work_speed(void)
{
    check_put("lost_sp.csv", "job_id,submit_time,duration,num_gpus,gpu_milli,priority\n"
                             "O,0,10000,1,1000,1\nG,1000,100000,1,1000,0\n");
    check_put("lost_sp_down.csv", "node,down_s,up_s\nnode-0000,2000,3000\n");
    CHECK_EQ_I64(run("run --trace lost_sp.csv --cluster 1xV100M32:1 --policy antman --failures "
                     "lost_sp_down.csv --out lost_sp"),
                 0);
    char *jobs = check_slurp("lost_sp/jobs.csv", NULL);
    CHECK(jobs && strstr(jobs, "\nO,,,1,done,0.000000,0.000000,23000.000000,"));
    CHECK(jobs && strstr(jobs, ",0,1500.000000,,,\n"));
    free(jobs);
    char *sum = check_slurp("lost_sp/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"lost_work_s\": 2500.000000"));
    free(sum);
}

/* Moments the core must get right (each computed by hand):
 *  - a node failing at the microsecond a job ends: the job is done (its run [0, 1000)
 *    and the outage [1000, 1100) do not overlap), nothing lost;
 *  - samples are not scheduling points: with the node down 400..5000 and a stall limit
 *    of 20, 100 s samples must not stop the run; the job restarts at 5000, ends at 6000;
 *  - a restarting scale-in redoes the lost work even where the job's speed does not
 *    change (--amdahl 0): o (2 replicas) is scaled in at 300 for the service's third
 *    replica, goes back to 0 with 1000 + 50 s of work, and ends at 1350;
 *  - checkpoints fall on whole microseconds: every 0.1 s, a failure at 0.3 keeps the
 *    0.3 s done; the job resumes at 1 and ends at 10.7. */
static void test_failure_moments(void)
{
    check_put("fm1.csv", "job_id,submit_time,duration,num_gpus\na,0,1000,1\n");
    check_put("fm_f1.csv", "node,down_s,up_s\nnode-0000,1000,1100\n");
    CHECK_EQ_I64(run("run --trace fm1.csv --cluster 1xV100M32:1 --policy fifo --failures "
                     "fm_f1.csv --quiet --out fm_a"),
                 0);
    CHECK(check_file_has("fm_a/jobs.csv", "\na,,,0,done,0.000000,0.000000,1000.000000,"));
    CHECK(check_file_has("fm_a/summary.json", "\"lost_work_s\": 0.000000"));

    check_put("fm_f2.csv", "node,down_s,up_s\nnode-0000,400,5000\n");
    CHECK_EQ_I64(run("run --trace fm1.csv --cluster 1xV100M32:1 --policy fifo --failures "
                     "fm_f2.csv --stall-limit 20 --sample-interval 100 --quiet --out fm_b"),
                 0);
    CHECK(check_file_has("fm_b/jobs.csv", "\na,,,0,done,0.000000,0.000000,6000.000000,"));

    check_put("fm3.csv", "job_id,submit_time,duration,num_gpus,replicas,min_replicas,"
                         "max_replicas,qos\ns,0,2000,1,1,1,4,LS\no,0,1000,2,2,1,4,BE\n");
    check_put("fm_d3.csv", "service,time,replicas\ns,0,1\ns,300,3\n");
    CHECK_EQ_I64(run("run --trace fm3.csv --cluster 1xV100M32:4 --policy elastic --demand "
                     "fm_d3.csv --amdahl 0 --restart-penalty 50 --quiet --out fm_c"),
                 0);
    CHECK(check_file_has("fm_c/jobs.csv", "\no,,BE,0,done,0.000000,0.000000,1350.000000,"));

    check_put("fm4.csv", "job_id,submit_time,duration,num_gpus\na,0,10,1\n");
    check_put("fm_f4.csv", "node,down_s,up_s\nnode-0000,0.3,1\n");
    CHECK_EQ_I64(run("run --trace fm4.csv --cluster 1xV100M32:1 --policy fifo --failures "
                     "fm_f4.csv --checkpoint-interval 0.1 --quiet --out fm_d"),
                 0);
    CHECK(check_file_has("fm_d/jobs.csv", "\na,,,0,done,0.000000,0.000000,10.700000,"));

    /* Lost GPU time counts the GPUs held at each moment: a service of 1 replica grows to
     * 3 at 100 and its node fails at 200 (no checkpoint): the 200 s lost held 100 x 1 +
     * 100 x 3 = 400 GPU-s, 0.111111 h (not 200 x 3). */
    check_put("fm5.csv", "job_id,submit_time,duration,num_gpus,replicas,min_replicas,"
                         "max_replicas,qos\ns,0,1000,1,1,1,4,LS\n");
    check_put("fm_d5.csv", "service,time,replicas\ns,0,1\ns,100,3\n");
    check_put("fm_f5.csv", "node,down_s,up_s\nnode-0000,200,300\n");
    CHECK_EQ_I64(run("run --trace fm5.csv --cluster 1xV100M32:4 --policy rigid-min --demand "
                     "fm_d5.csv --failures fm_f5.csv --quiet --out fm_e"),
                 0);
    CHECK(check_file_has("fm_e/summary.json", "\"lost_work_s\": 200.000000"));
    CHECK(check_file_has("fm_e/summary.json", "\"lost_gpu_hours\": 0.111111"));
}

/* Each malformed --failures list is refused with its file:line:column and what was
 * expected, before the run starts. */
static void test_failures_bad(void)
{
    check_put("fb_t.csv", "job_id,submit_time,duration,num_gpus\na,0,1000,1\n");
    static const struct {
        const char *text, *err;
    } cases[] = {
        {"", "clustersim: fb.csv:1: error: empty file: expected the header node,down_s,up_s"},
        {"node,down_s\nnode-0000,1\n",
         "clustersim: fb.csv:1: error: header lacks column 'up_s'; expected node,down_s,up_s"},
        {"node,node,up_s\nnode-0000,1,2\n",
         "clustersim: fb.csv:1:2: error: column 'node' appears twice (first in column 1)"},
        {"node,down_s,up_s\nnode-0009,1,2\n",
         "clustersim: fb.csv:2:1: error: field 'node': expected the name of a node of the "
         "cluster, got \"node-0009\""},
        {"node,down_s,up_s\nnode-0000,abc,2\n",
         "clustersim: fb.csv:2:2: error: field 'down_s': expected a time in seconds in [0, "
         "1e+10], got \"abc\""},
        {"node,down_s,up_s\nnode-0000,-1,2\n",
         "clustersim: fb.csv:2:2: error: field 'down_s': expected a time in seconds in [0, "
         "1e+10], got \"-1\""},
        {"node,down_s,up_s\nnode-0001,1,\n",
         "clustersim: fb.csv:2:3: error: field 'up_s': expected a time in seconds in [0, "
         "1e+10], got \"\""},
        {"node,down_s,up_s\nnode-0000,1,1e300\n",
         "clustersim: fb.csv:2:3: error: field 'up_s': expected a time in seconds in [0, "
         "1e+10], got \"1e300\""},
        {"node,down_s,up_s\nnode-0000,5,2\n",
         "clustersim: fb.csv:2:3: error: field 'up_s': expected a time after down_s, got \"2\""},
        {"node,down_s,up_s\nnode-0000,1,2\nnode-0001,1,2,3\n",
         "clustersim: fb.csv:3:4: error: expected 3 fields, as in the header, got 4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_put("fb.csv", cases[i].text);
        expect("run --trace fb_t.csv --cluster 2xV100M32:1 --policy fifo --failures fb.csv "
               "--quiet --out fb_o",
               2, cases[i].err);
    }
    expect("run --trace fb_t.csv --cluster 2xV100M32:1 --policy fifo --failures fb_none.csv "
           "--quiet --out fb_o",
           2, "clustersim: fb_none.csv: error: cannot open: No such file or directory");
}

/* The JCT mean of summary.json in dir, or -1. */
static double jct_mean(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *s = check_slurp(path, NULL);
    const char *m = s ? strstr(s, "\"jct_s\": {\"count\": ") : NULL;
    m = m ? strstr(m, "\"mean\": ") : NULL;
    double v = m ? atof(m + 8) : -1;
    free(s);
    return v;
}

/* A published Pollux workload replayed under the elastic policies: every job done; the
 * profiles (found beside the workload's folder, or named) set each job's speed with its
 * trainers, and the summary says so; the native form of the same workload with
 * --pollux-profiles runs the same schedule, and without them a different one; a folder
 * without profiles is an error. */
static void test_pollux_replay(void)
{
    char wl[1024], prof[1024];
    if (!check_shared("pollux_adaptdl/workloads/workload-1.csv", wl, sizeof wl) ||
        !check_shared("pollux_adaptdl/traces", prof, sizeof prof))
        return;
    char args[4096];
    static const char *const pols[] = {"optimus", "elastic"};
    for (size_t k = 0; k < 2; k++) {
        snprintf(args, sizeof args,
                 "run --format pollux --trace %s --cluster 16xT4:4 --policy %s --quiet "
                 "--check-invariants --out px_%s",
                 wl, pols[k], pols[k]);
        CHECK_EQ_I64(run(args), 0);
        snprintf(args, sizeof args, "px_%s/summary.json", pols[k]);
        CHECK(check_file_has(args, "\"jobs\": {\"arrived\": 160, \"done\": 160, \"rejected\": "
                                   "0, \"unfinished\": 0}"));
        CHECK(check_file_has(args, "\"rate_model\": \"throughput=measured ref=job "
                                   "interference=none scaling=pollux+amdahl(0.95)\""));
    }
    snprintf(args, sizeof args,
             "run --format pollux --trace %s --trace-opt profiles=%s --cluster 16xT4:4 --policy "
             "optimus --quiet --out px_named",
             wl, prof);
    CHECK_EQ_I64(run(args), 0);
    CHECK(same_file("px_named/jobs.csv", "px_optimus/jobs.csv"));
    snprintf(args, sizeof args, "trace convert --format pollux --trace %s --out px_native.csv", wl);
    CHECK_EQ_I64(run(args), 0);
    snprintf(args, sizeof args,
             "run --trace px_native.csv --cluster 16xT4:4 --policy optimus --pollux-profiles %s "
             "--quiet --out px_native_prof",
             prof);
    CHECK_EQ_I64(run(args), 0);
    CHECK_EQ_I64(run("run --trace px_native.csv --cluster 16xT4:4 --policy optimus --quiet --out "
                     "px_native_none"),
                 0);
    double with = jct_mean("px_optimus"), native = jct_mean("px_native_prof"),
           none = jct_mean("px_native_none");
    CHECK(with > 0 && fabs(native - with) <= 1e-6 * with); /* durations written to 1e-6 s */
    CHECK(none > 0 && fabs(none - with) > 0.05 * with);
    snprintf(args, sizeof args,
             "run --format pollux --trace %s --trace-opt profiles=. --cluster 16xT4:4 --policy "
             "optimus --quiet --out px_bad",
             wl);
    expect(args, 2,
           "clustersim: .: error: no Pollux application profiles (bert/placements.csv, "
           "...) here");
}

static void test_stall_limit(void)
{
    check_put("stall.csv", "job_id,submit_time,duration,num_gpus\na,0,1000,1\nb,1,1000,1\n");
    const char *las = "run --trace stall.csv --cluster 1xV100M16:1 --policy las --policy-opt "
                      "mode=tiresias --policy-opt thresholds=10 --policy-opt starve=1 ";
    char args[1024];
    /* (The horizon ends the run should the limit not.) */
    snprintf(args, sizeof args,
             "%s --policy-opt checkpoint=false --stall-limit 50 --horizon 100000 --out st_a", las);
    CHECK_EQ_I64(run(args), 0);
    char *err = check_slurp("err.txt", NULL);
    CHECK(err && strstr(err, "clustersim: note: stopped at ") &&
          strstr(err, "over the last 50 scheduling points (idle, or in run segments a "
                      "loss threw away) no job finished or was left nearer its end") &&
          strstr(err, "the 2 jobs left are unfinished"));
    free(err);
    char *jobs = check_slurp("st_a/jobs.csv", NULL);
    CHECK(jobs && strstr(jobs, "\na,") && strstr(jobs, "\nb,") &&
          strstr(jobs, "still running when the run stalled: no job finished or was left "
                       "nearer its end for the stall limit") &&
          strstr(jobs, "still waiting when the run stalled"));
    free(jobs);
    char *sum = check_slurp("st_a/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"done\": 0, \"rejected\": 0, \"unfinished\": 2") &&
          strstr(sum, "\"stalled_at_s\": "));
    /* Each job's first loss leaves it nearer its end than none before: 2 + 50. */
    CHECK(sum && strstr(sum, "\"preemptions\": 52,"));
    free(sum);
    /* Lost segments count the scheduling points they spanned: a second node (without
     * GPUs) goes down and comes back each second, a point each time, while the two jobs
     * swap every 10 s. Each lost segment spans 10 points, so the 5 losses after each
     * job's first reach 50: 7 preemptions, stopped at 70 s (counted one a loss, the run
     * would go on to 52 preemptions at 520 s, 10 times as many points). */
    char flips[8192];
    size_t at = (size_t)snprintf(flips, sizeof flips, "node,down_s,up_s\n");
    for (int k = 0; k < 100; k++)
        at += (size_t)snprintf(flips + at, sizeof flips - at, "node-0001,%d.5,%d.5\n", 2 * k,
                               2 * k + 1);
    check_put("stall_flips.csv", flips);
    snprintf(args, sizeof args,
             "run --trace stall.csv --cluster 1xV100M16:1,1xV100M16:0 --policy las --policy-opt "
             "mode=tiresias --policy-opt thresholds=10 --policy-opt starve=1 --policy-opt "
             "checkpoint=false --failures stall_flips.csv --stall-limit 50 --horizon 100000 "
             "--out st_f");
    CHECK_EQ_I64(run(args), 0);
    sum = check_slurp("st_f/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"preemptions\": 7,") && strstr(sum, "\"stalled_at_s\": 70.000000"));
    free(sum);
    /* Without the limit the run goes on to the horizon. */
    snprintf(args, sizeof args,
             "%s --policy-opt checkpoint=false --stall-limit 0 --horizon 2000 --out st_b", las);
    CHECK_EQ_I64(run(args), 0);
    sum = check_slurp("st_b/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"unfinished\": 2") && !strstr(sum, "stalled_at_s"));
    free(sum);
    jobs = check_slurp("st_b/jobs.csv", NULL);
    CHECK(jobs && strstr(jobs, "at the horizon"));
    free(jobs);
    /* With checkpoints every segment counts: both jobs end. */
    snprintf(args, sizeof args, "%s --stall-limit 50 --out st_c", las);
    CHECK_EQ_I64(run(args), 0);
    sum = check_slurp("st_c/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"done\": 2, \"rejected\": 0, \"unfinished\": 0") &&
          !strstr(sum, "stalled_at_s"));
    free(sum);
    /* A restart penalty longer than what a round lets a job run: gavel's rounds of 1 s
     * restart both jobs, each paying 30 s, so neither gets nearer its end. */
    CHECK_EQ_I64(run("run --trace stall.csv --cluster 1xV100M16:1 --policy gavel --policy-opt "
                     "round=1 --restart-penalty 30 --stall-limit 100 --horizon 100000 "
                     "--out st_d"),
                 0);
    sum = check_slurp("st_d/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"unfinished\": 2") && strstr(sum, "\"stalled_at_s\": "));
    free(sum);
    /* A job waiting for the one node, down until long after the horizon, while gavel's
     * round timer runs: 100 idle scheduling points end the run. */
    check_put("stall2.csv", "job_id,submit_time,duration,num_gpus\nj1,0,100,1\n");
    check_put("stall2_down.csv", "node,down_s,up_s\nnode-0000,0,10000000000\n");
    CHECK_EQ_I64(run("run --trace stall2.csv --cluster 1xV100M16:1 --policy gavel --failures "
                     "stall2_down.csv --stall-limit 100 --horizon 10000000 --out st_e"),
                 0);
    sum = check_slurp("st_e/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"unfinished\": 1") && strstr(sum, "\"stalled_at_s\": "));
    free(sum);
    jobs = check_slurp("st_e/jobs.csv", NULL);
    CHECK(jobs && strstr(jobs, "still waiting when the run stalled"));
    free(jobs);
    expect("run --trace stall.csv --cluster 1xT4:1 --stall-limit -1", 2,
           "clustersim: error: option --stall-limit: expected an integer 0..18446744073709551615, "
           "got \"-1\"");
    expect("run --trace stall.csv --cluster 1xT4:1 --stall-limit many", 2,
           "clustersim: error: option --stall-limit: expected an integer 0..18446744073709551615, "
           "got \"many\"");
}

/* The policies `clustersim policies` lists, into names[0..max); their count. */
static uint32_t policy_names(char (*names)[64], uint32_t max)
{
    CHECK_EQ_I64(run("policies"), 0);
    char *list = check_slurp("out.txt", NULL);
    uint32_t n = 0;
    for (const char *l = list; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
        size_t len = strcspn(l, " \n");
        if (*l < 'a' || *l > 'z' || len == 0 || len >= sizeof *names || n == max)
            continue;
        memcpy(names[n], l, len);
        names[n++][len] = '\0';
    }
    free(list);
    return n;
}

/* Every policy either runs a job with a master and a parameter server or rejects it with
 * the reason, and the run ends normally (the policies that place no such roles used to
 * start the job without them, which the core refused, ending the run). */
static void test_roles_every_policy(void)
{
    check_put("ps.csv", "job_id,submit_time,duration,num_gpus,ps_replicas,ps_cpu_milli,"
                        "master_cpu_milli\nj1,0,100,1,1,1000,1000\n");
    char names[64][64];
    uint32_t n = policy_names(names, 64), rejected = 0;
    for (uint32_t k = 0; k < n; k++) {
        const char *name = names[k];
        char args[512];
        snprintf(args, sizeof args,
                 "run --trace ps.csv --cluster 1xV100M16:4 --policy %.63s --check-invariants "
                 "--horizon 100000 --out ps_%.63s --quiet",
                 name, name);
        int rc = run(args);
        CHECK_EQ_I64(rc, 0);
        snprintf(args, sizeof args, "ps_%.63s/summary.json", name);
        char *sum = check_slurp(args, NULL);
        bool done = sum && strstr(sum, "\"done\": 1, \"rejected\": 0, \"unfinished\": 0");
        bool rej = sum && strstr(sum, "\"done\": 0, \"rejected\": 1, \"unfinished\": 0");
        CHECK(done || rej);
        if (rc != 0 || !(done || rej))
            fprintf(stderr, "policy %s: the job with roles was neither run nor rejected\n", name);
        rejected += rej;
        free(sum);
    }
    CHECK_EQ_I64(n, 28);
    CHECK(rejected >= 6 && rejected < n);
}

/* The number of rows of a CSV file after its header; -1 when it cannot be read. */
static long data_rows(const char *path)
{
    size_t len = 0;
    char *s = check_slurp(path, &len);
    if (!s)
        return -1;
    long n = -1;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    free(s);
    return n;
}

/* Every policy on generated traces in which most GPU jobs are gangs (2 to 32 replicas,
 * whole GPUs or shares, some typed, some CPU-only jobs) on clusters with nodes short of
 * CPU, mixed GPU types and random node failures: the accounting checked after every
 * event, every job in jobs.csv once and counted in the summary as done, rejected or
 * unfinished, and a second run with the same seed writing the same jobs.csv. */
static void test_gangs_every_policy(void)
{
    static const struct {
        const char *gen, *cluster, *extra;
        long jobs;
    } cases[] = {
        {"--jobs 300 --seed 3 --rate 1500 --frac-gang 0.6 --gang-max 16 --frac-share 0.3",
         "12xV100M32:8:cpu=24000:mem=131072", "", 300},
        {"--jobs 250 --seed 4 --rate 900 --frac-gang 0.5 --gang-max 8 --frac-cpu 0.1 "
         "--gpu-types 'V100M32|T4' --frac-constrained 0.3",
         "6xV100M32:8,8xT4:4", "--mtbf 100000 --mttr 2000 --horizon 400000", 250},
        {"--jobs 400 --seed 6 --rate 2500 --frac-gang 0.7 --gang-max 32 --frac-share 0.4 "
         "--duration-median 1200",
         "40xV100M32:8:cpu=96000:mem=786432", "", 400},
    };
    char names[64][64];
    uint32_t n = policy_names(names, 64);
    CHECK_EQ_I64(n, 28);
    char args[1024];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        snprintf(args, sizeof args, "trace gen --out gang%zu.csv %s", c, cases[c].gen);
        CHECK_EQ_I64(run(args), 0);
        for (uint32_t k = 0; k < n; k++) {
            int rc[2];
            for (int rep = 0; rep < 2; rep++) {
                /* No outputs of an earlier run of the test left to read. */
                snprintf(args, sizeof args, "rm -rf gang%zu_%.63s_%d", c, names[k], rep);
                CHECK_EQ_I64(check_system(args), 0);
                snprintf(args, sizeof args,
                         "run --trace gang%zu.csv --cluster %s --policy %.63s --seed 5 %s "
                         "--check-invariants --quiet --out gang%zu_%.63s_%d",
                         c, cases[c].cluster, names[k], cases[c].extra, c, names[k], rep);
                rc[rep] = run(args);
                CHECK_EQ_I64(rc[rep], 0);
            }
            char a[256], b[256];
            snprintf(a, sizeof a, "gang%zu_%.63s_0/jobs.csv", c, names[k]);
            snprintf(b, sizeof b, "gang%zu_%.63s_1/jobs.csv", c, names[k]);
            CHECK_EQ_I64(data_rows(a), cases[c].jobs);
            CHECK(same_file(a, b));
            snprintf(a, sizeof a, "gang%zu_%.63s_0/summary.json", c, names[k]);
            char *sum = check_slurp(a, NULL);
            long arrived = -1, done = -1, rej = -1, unf = -1;
            const char *m = sum ? strstr(sum, "\"jobs\": {\"arrived\": ") : NULL;
            CHECK(m && sscanf(m,
                              "\"jobs\": {\"arrived\": %ld, \"done\": %ld, \"rejected\": "
                              "%ld, \"unfinished\": %ld",
                              &arrived, &done, &rej, &unf) == 4);
            CHECK_EQ_I64(arrived, cases[c].jobs);
            CHECK_EQ_I64(done + rej + unf, cases[c].jobs);
            CHECK(done > 0);
            if (rc[0] != 0 || arrived != cases[c].jobs || done + rej + unf != arrived || done <= 0)
                fprintf(stderr,
                        "gang case %zu, policy %s: status %d, %ld arrived, %ld done, "
                        "%ld rejected, %ld unfinished\n",
                        c, names[k], rc[0], arrived, done, rej, unf);
            free(sum);
        }
    }
}

/* The summary's lost work is every loss of jobs.csv's lost_work_s, scale-ins included:
 * elastic services take trainers back from lossy elastic jobs (60 s checkpoints), and
 * the summary's total equals the column's sum, 365 reference seconds, of which the
 * scale-ins lose 315. */
static void test_lost_work_total(void)
{
    check_put("lw_t.csv", "job_id,submit_time,duration,num_gpus,gpu_milli,qos,min_replicas,"
                          "max_replicas,replicas,cpu_milli,mem_mib,model,tenant\n"
                          "svc0,0,5000,1,1000,LS,1,6,1,,,resnet50,s\n"
                          "e1,0,3000,2,1000,BE,1,8,2,,,resnet50,a\n"
                          "e2,10,2000,1,1000,BE,1,4,1,,,bert,b\n"
                          "r1,20,1000,2,1000,BE,,,,,,vgg16,a\n"
                          "e3,30,500,4,500,BE,2,8,4,,,resnet50,b\n"
                          "svc1,40,3000,2,1000,LS,1,3,1,4000,1000,bert,s\n");
    check_put("lw_d.csv", "service,time,replicas\nsvc0,0,2\nsvc0,100,6\nsvc0,500,0\n"
                          "svc0,1000,3\nsvc1,40,3\nsvc1,600,1\n");
    CHECK_EQ_I64(run("run --trace lw_t.csv --cluster 2xT4:4,1xV100M16:4 --policy elastic "
                     "--demand lw_d.csv --checkpoint-interval 60 --out lw_out --quiet"),
                 0);
    char *sum = check_slurp("lw_out/summary.json", NULL);
    char *jobs = check_slurp("lw_out/jobs.csv", NULL);
    CHECK(sum && jobs);
    if (!sum || !jobs) {
        free(sum);
        free(jobs);
        return;
    }
    const char *p = strstr(sum, "\"lost_work_s\": ");
    const char *q = strstr(sum, "\"scale_in_lost_work_s\": ");
    CHECK(p && q);
    double total = p ? strtod(p + strlen("\"lost_work_s\": "), NULL) : -1;
    double scale_in = q ? strtod(q + strlen("\"scale_in_lost_work_s\": "), NULL) : -1;
    /* The column's index in the header, then its sum over the rows (no field of this
     * run's rows holds a comma). */
    int col = -1, k = 0;
    const char *line = jobs;
    for (const char *f = line; *f && *f != '\n'; k++) {
        size_t len = strcspn(f, ",\n");
        if (len == strlen("lost_work_s") && strncmp(f, "lost_work_s", len) == 0)
            col = k;
        f += len + (f[len] == ',');
    }
    CHECK(col >= 0);
    double rows = 0;
    int n = 0;
    for (line = strchr(jobs, '\n'); col >= 0 && line && line[1]; line = strchr(line + 1, '\n')) {
        const char *f = line + 1;
        for (int c = 0; c < col; c++)
            f += strcspn(f, ",\n") + 1;
        rows += strtod(f, NULL);
        n++;
    }
    CHECK_EQ_I64(n, 6);
    CHECK_NEAR(rows, 365, 1e-9);
    CHECK_NEAR(total, rows, 1e-9);
    CHECK_NEAR(scale_in, 315, 1e-9);
    free(sum);
    free(jobs);
}

/* Demand curves with a step below a second keep their times (to the microsecond), so
 * --demand reads them back; a step finer than a microsecond is refused. */
static void test_curves_fractional_step(void)
{
    CHECK_EQ_I64(run("trace curves --out half_step.csv --services 1 --step 0.5 --length 2 "
                     "--noise 0"),
                 0);
    char *c = check_slurp("half_step.csv", NULL);
    CHECK(c && strstr(c, "\nsvc0,0,") && strstr(c, "\nsvc0,0.500000,") && strstr(c, "\nsvc0,1,") &&
          strstr(c, "\nsvc0,1.500000,") && strstr(c, "\nsvc0,2,"));
    free(c);
    check_put("half_step_ls.csv", "job_id,submit_time,duration,num_gpus,qos,replicas\n"
                                  "svc0,0,10,1,LS,1\n");
    CHECK_EQ_I64(run("run --trace half_step_ls.csv --cluster 2xV100M32:8 --policy elastic "
                     "--demand half_step.csv --quiet"),
                 0);
    expect("trace curves --out fine_step.csv --step 1e-7 --length 1e-6", 2,
           "clustersim: error: option --step: expected at least 1e-6 s (the time resolution of "
           "the curves), got 1e-07 s");
    CHECK(access("fine_step.csv", F_OK) != 0);
    /* 8.64e10 points a service used to be written (tens of gigabytes). */
    expect("trace curves --out many_points.csv --step 1e-6 --length 1d", 2,
           "clustersim: error: options --length and --step: 86400000001 points per service, at "
           "most 10,000,000 (give a larger --step or a shorter --length)");
    CHECK(access("many_points.csv", F_OK) != 0);
}

int main(void)
{
    test_errors();
    test_commands();
    test_outputs_and_determinism();
    test_openb();
    test_services_and_servers();
    test_tenant_rows();
    test_stall_limit();
    test_failure_moments();
    test_failures_bad();
    test_empty_names();
    test_pollux_replay();
    test_lost_work_speed();
    test_roles_every_policy();
    test_gangs_every_policy();
    test_lost_work_total();
    test_curves_fractional_step();
    return check_done();
}
