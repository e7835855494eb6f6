/*
 * test_outputs_stable.c: the outputs of `clustersim demo`, `compare` and `pack` are
 * byte-identical to those recorded in tests/fixtures/outputs_stable.txt (an FNV-1a 64
 * hash and the path of every output file; the source folder's path counts as "@SRC@").
 * The files that carry wall times or absolute paths (run.json, run.log) and gnuplot's own
 * images are left out; everything else a run writes is compared. demo and pack on a fixture need nothing else; compare and pack
 * on the first 1,500 tasks of openb need ../shared (skipped when absent).
 *
 * After a change that means to alter outputs, regenerate the table with
 *   SIM_STABLE_WRITE=$PWD/tests/fixtures/outputs_stable.txt ctest -R outputs_stable
 * and review the difference.
 */
#include "check.h"

#include <dirent.h>
#include <stdint.h>

#define STABLE_DIR "stable_out"
#define MAX_FILES 256

typedef struct entry {
    char path[256];
    char hash[17];
} entry;

static entry actual[MAX_FILES];
static size_t n_actual;

static uint64_t fnv1a(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The hash of a file's bytes, with the source folder's path (which reports name for the
 * bundled model tables) written as "@SRC@", so that a checkout anywhere hashes alike. */
static uint64_t fnv1a_file(const char *path, bool *ok)
{
    size_t len;
    char *text = check_slurp(path, &len);
    *ok = text != NULL;
    if (!text)
        return 0;
    const char *src = SIM_SOURCE_DIR;
    size_t src_len = strlen(src);
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0, from = 0;
    while (i + src_len <= len) {
        if (memcmp(text + i, src, src_len) == 0) {
            h = fnv1a(h, text + from, i - from);
            h = fnv1a(h, "@SRC@", 5);
            i += src_len;
            from = i;
        } else {
            i++;
        }
    }
    h = fnv1a(h, text + from, len - from);
    free(text);
    return h;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Files that vary from run to run or from machine to machine. */
static bool excluded(const char *name)
{
    return strcmp(name, "run.json") == 0 || strcmp(name, "run.log") == 0 ||
           ends_with(name, ".png") || ends_with(name, ".svg") || ends_with(name, ".log");
}

/* Hash every file under dir (relative to STABLE_DIR) into actual[]. */
static void collect(const char *dir)
{
    char full[600];
    snprintf(full, sizeof full, STABLE_DIR "/%s", dir);
    DIR *d = opendir(full);
    CHECK(d != NULL);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || excluded(e->d_name))
            continue;
        char rel[512], path[600];
        snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
        snprintf(path, sizeof path, STABLE_DIR "/%s", rel);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            collect(rel);
            continue;
        }
        CHECK(n_actual < MAX_FILES);
        if (n_actual >= MAX_FILES)
            break;
        bool ok;
        uint64_t h = fnv1a_file(path, &ok);
        CHECK(ok);
        entry *a = &actual[n_actual++];
        CHECK(strlen(rel) < sizeof a->path);
        snprintf(a->path, sizeof a->path, "%.255s", rel);
        snprintf(a->hash, sizeof a->hash, "%016llx", (unsigned long long)h);
    }
    closedir(d);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return check_system(cmd);
}

/* Compare actual[] with the recorded table's lines for the outputs under the given
 * top-level folders (so a skipped part is not reported missing). */
static void compare_table(const char *const *tops, size_t n_tops)
{
    size_t len;
    char *text = check_slurp(SIM_SOURCE_DIR "/tests/fixtures/outputs_stable.txt", &len);
    CHECK(text != NULL);
    if (!text)
        return;
    bool seen[MAX_FILES] = {false};
    size_t n_expected = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char hash[32], path[256];
        if (line[0] == '#' || sscanf(line, "%31s %255s", hash, path) != 2)
            continue;
        bool wanted = false;
        for (size_t t = 0; t < n_tops; t++)
            if (strncmp(path, tops[t], strlen(tops[t])) == 0 && path[strlen(tops[t])] == '/')
                wanted = true;
        if (!wanted)
            continue;
        n_expected++;
        size_t i = 0;
        while (i < n_actual && strcmp(actual[i].path, path) != 0)
            i++;
        if (i == n_actual) {
            fprintf(stderr, "missing output: %s\n", path);
            CHECK(false);
            continue;
        }
        seen[i] = true;
        if (strcmp(actual[i].hash, hash) != 0)
            fprintf(stderr, "changed output: %s (%s, recorded %s)\n", path, actual[i].hash, hash);
        CHECK_STR(actual[i].hash, hash);
    }
    for (size_t i = 0; i < n_actual; i++)
        if (!seen[i]) {
            fprintf(stderr, "output not recorded: %s\n", actual[i].path);
            CHECK(false);
        }
    CHECK(n_expected > 0);
    free(text);
}

int main(void)
{
    CHECK_EQ_I64(sh("rm -rf " STABLE_DIR " && mkdir -p " STABLE_DIR), 0);
    /* demo: generated trace, fifo vs binpack, full report with figure data. */
    CHECK_EQ_I64(
        sh("cd " STABLE_DIR " && %s demo --out demo --jobs 300 >/dev/null 2>&1", SIM_BINARY), 0);
    /* pack on the fixture's tasks: three policies, two seeds. */
    CHECK_EQ_I64(sh("cd " STABLE_DIR " && %s pack --trace %s/tests/fixtures/pack_tasks.csv "
                    "--cluster 2xA100:4:cpu=32000:mem=262144,3xT4:2:cpu=16000:mem=131072 "
                    "--policies fgd,bestfit,random --seeds 1,2 --no-figure --out pack "
                    ">/dev/null 2>&1",
                    SIM_BINARY, SIM_SOURCE_DIR),
                 0);
    const char *tops[4] = {"demo", "pack"};
    size_t n_tops = 2;

    char trace[1024], nodes[1024];
    if (check_shared("alibaba_gpu_v2023/openb_pod_list_default.csv", trace, sizeof trace) &&
        check_shared("alibaba_gpu_v2023/openb_node_list_gpu_node.csv", nodes, sizeof nodes)) {
        /* Inputs under fixed relative names: the report names them. */
        CHECK_EQ_I64(sh("head -n 1501 %s > " STABLE_DIR "/openb_slice.csv && ln -sf %s " STABLE_DIR
                        "/openb_nodes.csv",
                        trace, nodes),
                     0);
        CHECK_EQ_I64(sh("cd " STABLE_DIR " && %s compare --format alibaba2023 --trace "
                        "openb_slice.csv --cluster openb_nodes.csv --policies fifo,fgd,binpack "
                        "--out compare --no-figures --quiet >/dev/null 2>&1",
                        SIM_BINARY),
                     0);
        CHECK_EQ_I64(sh("cd " STABLE_DIR " && %s pack --format alibaba2023 --trace "
                        "openb_slice.csv --cluster openb_nodes.csv --policies fgd,bestfit,random "
                        "--seeds 1,2 --demand 60 --no-figure --out pack_openb >/dev/null 2>&1",
                        SIM_BINARY),
                     0);
        tops[n_tops++] = "compare";
        tops[n_tops++] = "pack_openb";
    }
    for (size_t t = 0; t < n_tops; t++)
        collect(tops[t]);
    qsort(actual, n_actual, sizeof actual[0], by_path);

    const char *write = getenv("SIM_STABLE_WRITE");
    if (write && *write) {
        FILE *f = fopen(write, "w");
        CHECK(f != NULL);
        if (f) {
            fprintf(f, "# FNV-1a 64 of each output of tests/test_outputs_stable.c\n");
            for (size_t i = 0; i < n_actual; i++)
                fprintf(f, "%s %s\n", actual[i].hash, actual[i].path);
            CHECK(fclose(f) == 0);
        }
    }
    compare_table(tops, n_tops);
    return check_done();
}
