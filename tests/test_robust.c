/*
 * test_robust.c: the clustersim command under ordinary misuse and hostile conditions.
 *  - a horizon counts run time, GPU time and makespan up to itself, and lists the jobs
 *    submitted after it;
 *  - empty and repeated option values are errors that say so;
 *  - outputs written through a symlink, to a FIFO or to a character device leave them in
 *    place, the figures of plot and compare (gnuplot's images and their data) included;
 *    write errors name the path and the system's reason;
 *  - interrupted commands leave no temporary file and no orphaned child.
 */
#include "check.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run `args` through the binary; stdout to out.txt, stderr to err.txt; exit status. */
static int run(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s >out.txt 2>err.txt", SIM_BINARY, args);
    return check_system(cmd);
}

/* The command's stderr contains `want`, and it exited with `status`. */
static void expect_err(const char *args, int status, const char *want, int line)
{
    int rc = run(args);
    char *err = check_slurp("err.txt", NULL);
    if (rc != status || !err || !strstr(err, want)) {
        check_failed++;
        fprintf(stderr,
                "%s:%d: clustersim %s\n  status %d (expected %d)\n  stderr: %s\n"
                "  expected to contain: %s\n",
                __FILE__, line, args, rc, status, err ? err : "(none)", want);
    } else {
        check_passed++;
    }
    free(err);
}
#define EXPECT_ERR(args, status, want) expect_err(args, status, want, __LINE__)

/* One 3,600 s job on one GPU with --horizon 100: it ran 100 s, 100 GPU-seconds, on a
 * fully used GPU; the job submitted after the horizon is listed, not dropped. */
static void test_horizon(void)
{
    check_put("rb_horizon.csv", "job_id,submit_time,duration,num_gpus\n"
                                "long,0,3600,1\nlate,200,10,1\n");
    CHECK_EQ_I64(run("run --trace rb_horizon.csv --cluster 1xT4:1 --horizon 100 --out "
                     "rb_horizon_out --quiet"),
                 0);
    char *jobs = check_slurp("rb_horizon_out/jobs.csv", NULL);
    char *sum = check_slurp("rb_horizon_out/summary.json", NULL);
    CHECK(jobs && strstr(jobs, "\nlong,,,0,unfinished,0.000000,0.000000,,0.000000,,,100.000000,"));
    CHECK(jobs && strstr(jobs, "\nlate,,,0,unfinished,200.000000,") &&
          strstr(jobs, "not arrived: submitted after the horizon"));
    CHECK(sum && strstr(sum, "\"makespan_s\": 100.000000"));
    CHECK(sum && strstr(sum, "\"gpu_util\": {\"allocated\": 1.000000"));
    CHECK(sum && strstr(sum, "\"jobs_not_arrived\": 1"));
    free(jobs);
    free(sum);
}

static void test_policy_options(void)
{
    check_put("rb_one.csv", "job_id,submit_time,duration,num_gpus\nj,0,10,1\n");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt thresholds=", 2,
               "clustersim: error: policy 'las': option 'thresholds': empty value (leave the "
               "option out to use its default, \"3600,36000\")");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt starve=1 "
               "--policy-opt las:starve=2",
               2,
               "clustersim: error: --policy-opt 'starve=1' and 'las:starve=2' set the same "
               "option: give it once");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt "
               "thresholds=10,",
               2, "option 'thresholds': expected up to");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt "
               "'starve= 2'",
               2, "clustersim: error: policy 'las': option 'starve': expected a number in");
}

static bool is_link(const char *p)
{
    struct stat sb;
    return lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode);
}

static long file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (long)sb.st_size : -1;
}

/* No "*.tmp.*" file is left in dir. */
static bool no_temporaries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q '\\.tmp\\.'", dir);
    return check_system(cmd) != 0;
}

#define GEN "trace gen --jobs 50 --seed 3 "

/* Outputs never replace a FIFO, a device or a symlink. */
static void test_special_outputs(void)
{
    check_system("rm -rf rb_out && mkdir rb_out");
    /* A symlink: the target gets the trace, the link stays a link. */
    check_put("rb_out/target.csv", "old\n");
    CHECK(symlink("target.csv", "rb_out/link.csv") == 0);
    CHECK_EQ_I64(run(GEN "--out rb_out/link.csv"), 0);
    CHECK(is_link("rb_out/link.csv"));
    CHECK(file_size("rb_out/target.csv") > 1000);
    /* A dangling symlink: the file is created where it points. */
    CHECK(symlink("made.csv", "rb_out/dangling.csv") == 0);
    CHECK_EQ_I64(run(GEN "--out rb_out/dangling.csv"), 0);
    CHECK(is_link("rb_out/dangling.csv"));
    CHECK(file_size("rb_out/made.csv") > 1000);
    /* A character device (the numbers of /dev/null) is written through, not replaced. */
    if (check_system("mknod rb_out/null c 1 3 2>/dev/null") == 0) {
        CHECK_EQ_I64(run(GEN "--out rb_out/null"), 0);
        struct stat sb;
        CHECK(stat("rb_out/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    }
    /* A symlink to /dev/null: the link and the device stay. */
    CHECK(symlink("/dev/null", "rb_out/devnull") == 0);
    CHECK_EQ_I64(run(GEN "--out rb_out/devnull"), 0);
    CHECK(is_link("rb_out/devnull"));
    struct stat dn;
    CHECK(stat("/dev/null", &dn) == 0 && S_ISCHR(dn.st_mode));
    /* A FIFO: a reader gets the whole trace; the FIFO stays. */
    CHECK(mkfifo("rb_out/fifo", 0666) == 0);
    CHECK_EQ_I64(check_system("(cat rb_out/fifo > rb_out/from_fifo.csv &) ; '" SIM_BINARY "' " GEN
                              "--out rb_out/fifo 2>err.txt; s=$?; sleep 0.2; exit $s"),
                 0);
    struct stat ff;
    CHECK(lstat("rb_out/fifo", &ff) == 0 && S_ISFIFO(ff.st_mode));
    CHECK(file_size("rb_out/from_fifo.csv") > 1000);
    /* run's outputs: jobs.csv as a symlink into another directory. */
    check_put("rb_one.csv", "job_id,submit_time,duration,num_gpus\nj,0,10,1\n");
    check_system("rm -rf rb_run rb_keep && mkdir rb_run rb_keep");
    CHECK(symlink("../rb_keep/jobs.csv", "rb_run/jobs.csv") == 0);
    CHECK_EQ_I64(run("run --trace rb_one.csv --cluster 1xT4:1 --out rb_run --quiet"), 0);
    CHECK(is_link("rb_run/jobs.csv"));
    CHECK(file_size("rb_keep/jobs.csv") > 100);
    CHECK(no_temporaries("rb_out") && no_temporaries("rb_run") && no_temporaries("rb_keep"));
}

/* The file starts with the PNG signature. */
static bool is_png(const char *p)
{
    unsigned char sig[8] = {0};
    FILE *f = fopen(p, "rb");
    size_t n = f ? fread(sig, 1, sizeof sig, f) : 0;
    if (f)
        fclose(f);
    return n == 8 && !memcmp(sig, "\x89PNG\r\n\x1a\n", 8);
}

/* No scratch file of a figure (".<name>.<pid>.<ext>") nor temporary is left in dir. */
static bool no_scratch(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -Eq '^\\.[a-z_]+\\.[0-9]+\\.|\\.tmp\\.'", dir);
    return check_system(cmd) != 0;
}

/* plot's and compare's figures: images and data files written through symlinks, to a
 * FIFO (gnuplot must not read the FIFO back) or to a device leave them in place; a
 * directory in a figure's place is an error naming it. */
static void test_plot_outputs(void)
{
    if (check_system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("test_plot_outputs skipped: gnuplot is not installed\n");
        return;
    }
    check_system("rm -rf rb_plot rb_plot_keep rb_cmpfig && mkdir rb_plot_keep");
    CHECK_EQ_I64(run(GEN "--out rb_plot_trace.csv"), 0);
    CHECK_EQ_I64(run("run --trace rb_plot_trace.csv --cluster 4xT4:8 --out rb_plot --quiet"), 0);
    check_system("mkdir -p rb_plot/figures/data");
    check_put("rb_plot_keep/j.png", "old\n");
    CHECK(symlink("../../rb_plot_keep/j.png", "rb_plot/figures/jct_cdf.png") == 0);
    CHECK(symlink("../../rb_plot_keep/w.svg", "rb_plot/figures/wait_cdf.svg") == 0);
    CHECK(symlink("../../../rb_plot_keep/j.dat", "rb_plot/figures/data/jct_cdf.dat") == 0);
    CHECK(mkfifo("rb_plot/figures/data/wait_cdf.dat", 0666) == 0);
    bool dev = check_system("mknod rb_plot/figures/queue.png c 1 3 2>/dev/null && "
                            "mknod rb_plot/figures/data/queue.dat c 1 3 2>/dev/null") == 0;
    /* A reader on the FIFO; the command is bounded, since gnuplot reading a FIFO with no
     * writer would wait forever. */
    CHECK_EQ_I64(check_system("(cat rb_plot/figures/data/wait_cdf.dat > rb_plot_keep/from_fifo.dat"
                              " &) ; timeout 120 '" SIM_BINARY "' plot rb_plot >out.txt "
                              "2>err.txt; s=$?; sleep 0.2; exit $s"),
                 0);
    CHECK(check_file_has("out.txt", "7 figures in rb_plot/figures/"));
    CHECK(is_link("rb_plot/figures/jct_cdf.png"));
    CHECK(is_png("rb_plot_keep/j.png"));
    CHECK(is_link("rb_plot/figures/wait_cdf.svg"));
    CHECK(file_size("rb_plot_keep/w.svg") > 1000);
    CHECK(is_link("rb_plot/figures/data/jct_cdf.dat"));
    CHECK(file_size("rb_plot_keep/j.dat") > 100);
    struct stat sb;
    CHECK(lstat("rb_plot/figures/data/wait_cdf.dat", &sb) == 0 && S_ISFIFO(sb.st_mode));
    CHECK(file_size("rb_plot_keep/from_fifo.dat") > 100);
    if (dev) {
        CHECK(lstat("rb_plot/figures/queue.png", &sb) == 0 && S_ISCHR(sb.st_mode));
        CHECK(lstat("rb_plot/figures/data/queue.dat", &sb) == 0 && S_ISCHR(sb.st_mode));
    }
    /* The data gnuplot drew from reached the figure (the device took queue.dat's). */
    CHECK(is_png("rb_plot/figures/utilisation.png"));
    CHECK(check_file_has("rb_plot/figures/data/queue.vars.gp",
                         "datafile = 'rb_plot/figures/data/queue.dat'"));
    CHECK(no_scratch("rb_plot/figures") && no_scratch("rb_plot/figures/data"));
    /* A directory where an image goes: refused with its name; it stays as it was. (The
     * FIFO goes first: with no reader, writing it would wait for one.) */
    check_system("rm -f rb_plot/figures/data/wait_cdf.dat rb_plot/figures/utilisation.png && "
                 "mkdir -p "
                 "rb_plot/figures/utilisation.png && touch rb_plot/figures/utilisation.png/x");
    EXPECT_ERR("plot rb_plot", 2,
               "clustersim: rb_plot/figures/utilisation.png: error: cannot create the file: Is a "
               "directory");
    CHECK(file_size("rb_plot/figures/utilisation.png/x") == 0);
    CHECK(no_scratch("rb_plot/figures") && no_scratch("rb_plot/figures/data"));
    /* compare's figures: the same rules. */
    check_system("mkdir -p rb_cmpfig/figures");
    CHECK(symlink("../../rb_plot_keep/c.svg", "rb_cmpfig/figures/jct_cdf.svg") == 0);
    CHECK_EQ_I64(run("compare --trace rb_plot_trace.csv --cluster 4xT4:8 --policies "
                     "fifo,binpack --quiet --out rb_cmpfig"),
                 0);
    CHECK(is_link("rb_cmpfig/figures/jct_cdf.svg"));
    CHECK(file_size("rb_plot_keep/c.svg") > 1000);
    CHECK(is_png("rb_cmpfig/figures/jct_cdf.png"));
    CHECK(no_scratch("rb_cmpfig/figures") && no_scratch("rb_cmpfig/figures/data"));
    /* pack's figure: through a symlink; none is drawn from a pack.csv that is a device. */
    check_system("rm -rf rb_packfig && mkdir rb_packfig");
    CHECK(symlink("../rb_plot_keep/p.png", "rb_packfig/pack.png") == 0);
    const char *pack = "pack --trace " SIM_SOURCE_DIR "/tests/fixtures/pack_tasks.csv "
                       "--cluster 4xT4:8 --seeds 1..2 --out rb_packfig";
    CHECK_EQ_I64(run(pack), 0);
    CHECK(is_link("rb_packfig/pack.png"));
    CHECK(is_png("rb_plot_keep/p.png"));
    CHECK(no_scratch("rb_packfig"));
    if (dev) {
        check_system("rm -f rb_packfig/pack.csv && mknod rb_packfig/pack.csv c 1 3");
        EXPECT_ERR(pack, 0, "rb_packfig/pack.csv is not a regular file, so no figure was drawn");
        CHECK(lstat("rb_packfig/pack.csv", &sb) == 0 && S_ISCHR(sb.st_mode));
    }
}

/* Write errors name the path and the reason. */
static void test_write_errors(void)
{
    check_system("rm -rf rb_full && mkdir rb_full");
    CHECK(symlink("/dev/full", "rb_full/summary.json") == 0);
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --out rb_full --quiet", 2,
               "clustersim: rb_full/summary.json: error: cannot write: No space left on device");
    CHECK(is_link("rb_full/summary.json"));
    CHECK(no_temporaries("rb_full"));
    CHECK(symlink("/dev/full", "rb_full/trace.csv") == 0);
    EXPECT_ERR(GEN "--out rb_full/trace.csv", 2,
               "clustersim: rb_full/trace.csv: error: cannot write: No space left on device");
    EXPECT_ERR(GEN "--out rb_full", 2,
               "clustersim: rb_full: error: cannot create the file: Is a directory");
    EXPECT_ERR(GEN "--out rb_no/such/t.csv", 2,
               "clustersim: rb_no/such/t.csv: error: cannot create the file: No such file or "
               "directory");
    if (geteuid() != 0) {
        check_system("rm -rf rb_ro && mkdir rb_ro && chmod 555 rb_ro");
        EXPECT_ERR(GEN "--out rb_ro/t.csv", 2,
                   "clustersim: rb_ro/t.csv: error: cannot create the file: Permission denied");
    }
}

/* trace gen interrupted: no temporary is left (SIGINT and SIGHUP). */
static void test_interrupted_gen(void)
{
    static const int sigs[] = {SIGINT, SIGHUP};
    for (int k = 0; k < 2; k++) {
        check_system("rm -rf rb_sig && mkdir rb_sig");
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            dup2(fd, 2);
            execl(SIM_BINARY, SIM_BINARY, "trace", "gen", "--jobs", "20000000", "--out",
                  "rb_sig/big.csv.gz", (char *)NULL);
            _exit(127);
        }
        /* Wait for the temporary to appear, then interrupt. */
        for (int i = 0; i < 200 && no_temporaries("rb_sig"); i++)
            nanosleep(&(struct timespec){0, 20000000}, NULL);
        CHECK(!no_temporaries("rb_sig"));
        kill(pid, sigs[k]);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k]);
        CHECK(no_temporaries("rb_sig"));
    }
}

/* Processes whose command line contains pattern (pgrep's count). */
static int count_procs(const char *pattern)
{
    char cmd[512];
    /* "[x]yz" matches "xyz" but not the shell command line that carries it. */
    snprintf(cmd, sizeof cmd, "pgrep -f -- '[%c]%s' | wc -l > rb_count.txt", pattern[0],
             pattern + 1);
    check_system(cmd);
    char *s = check_slurp("rb_count.txt", NULL);
    int n = s ? atoi(s) : -1;
    free(s);
    return n;
}

static pid_t spawn(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("rb_spawn_err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0666);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(SIM_BINARY, argv);
        _exit(127);
    }
    return pid;
}

static void nap_ms(long ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

/* A path under a folder whose name carries this process's id, so that pgrep counts
 * only this test's processes when other copies of the suite run on the machine. */
static const char *own(const char *name, const char *rel)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s_%d%s", name, (int)getpid(), rel);
    return buf[k];
}

/* SIGINT to compare reaches its runs; they are waited for and marked incomplete. */
static void test_interrupted_compare(void)
{
    CHECK_EQ_I64(run("trace gen --jobs 400000 --seed 5 --out rb_cmp_trace.csv"), 0);
    char dir[256], runs[256];
    snprintf(dir, sizeof dir, "%s", own("rb_cmp", ""));
    snprintf(runs, sizeof runs, "%s", own("rb_cmp", "/runs/"));
    check_sh("rm -rf %s", dir);
    char *argv[] = {SIM_BINARY, "compare",      "--trace",      "rb_cmp_trace.csv", "--cluster",
                    "4xT4:8",   "--policies",   "fifo,binpack", "--jobs",           "2",
                    "--quiet",  "--no-figures", "--out",        dir,                NULL};
    pid_t pid = spawn(argv);
    int i = 0;
    while (i++ < 1000 && count_procs(runs) < 2)
        nap_ms(10);
    nap_ms(50);
    CHECK(count_procs(runs) == 2);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    /* The runs ended with their parent: none is left to write outputs later. */
    CHECK_EQ_I64(count_procs(runs), 0);
    nap_ms(300);
    CHECK(file_size(own("rb_cmp", "/INCOMPLETE")) > 0);
    CHECK(file_size(own("rb_cmp", "/runs/fifo/INCOMPLETE")) > 0);
    CHECK(file_size(own("rb_cmp", "/runs/binpack/INCOMPLETE")) > 0);
    CHECK(file_size(own("rb_cmp", "/runs/fifo/summary.json")) < 0);
    CHECK(file_size(own("rb_cmp", "/report.md")) < 0);
    CHECK(no_temporaries(own("rb_cmp", "/runs/fifo")) &&
          no_temporaries(own("rb_cmp", "/runs/binpack")));
    check_sh("rm -rf %s", dir);
}

/* SIGTERM to pack --jobs 2 reaches its workers, which are waited for. */
static void test_interrupted_pack(void)
{
    char dir[256], pattern[300];
    snprintf(dir, sizeof dir, "%s", own("rb_pack", ""));
    snprintf(pattern, sizeof pattern, "out %s", dir);
    check_sh("rm -rf %s && mkdir %s", dir, dir);
    char *argv[] = {
        SIM_BINARY,  "pack",    "--trace", SIM_SOURCE_DIR "/tests/fixtures/pack_tasks.csv",
        "--cluster", "64xT4:8", "--seeds", "1..10000",
        "--jobs",    "2",       "--out",   dir,
        NULL};
    pid_t pid = spawn(argv);
    int i = 0;
    while (i++ < 1000 && count_procs(pattern) < 3)
        nap_ms(10);
    CHECK(count_procs(pattern) == 3);
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    CHECK_EQ_I64(count_procs(pattern), 0);
    CHECK(file_size(own("rb_pack", "/pack.csv")) < 0);
    check_sh("rm -rf %s", dir);
}

/* An option that holds one value, given twice, is an error naming both values. */
static void test_repeated_options(void)
{
    EXPECT_ERR("run --trace rb_one.csv --trace rb_horizon.csv --cluster 1xT4:1", 2,
               "clustersim: error: option --trace is given twice (\"rb_one.csv\", then "
               "\"rb_horizon.csv\"): give it once");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --out rb_a --out=rb_b", 2,
               "clustersim: error: option --out is given twice (\"rb_a\", then \"rb_b\"): give "
               "it once");
    EXPECT_ERR(GEN "--out rb_a.csv --out rb_b.csv", 2, "option --out is given twice");
    EXPECT_ERR("compare --trace rb_one.csv --cluster 1xT4:1 --policies las,fifo --policy-opt "
               "starve=1 --policy-opt las:starve=2 --out rb_cmp2",
               2,
               "clustersim: error: --policy-opt 'starve=1' and 'las:starve=2' set the same "
               "option: give it once");
    /* Repeatable ones still add up. */
    CHECK_EQ_I64(run("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt "
                     "starve=1 --policy-opt thresholds=10 --quiet"),
                 0);
}

int main(void)
{
    test_horizon();
    test_policy_options();
    test_repeated_options();
    test_special_outputs();
    test_plot_outputs();
    test_write_errors();
    test_interrupted_gen();
    test_interrupted_compare();
    test_interrupted_pack();
    return check_done();
}
