/*
 * check.h: the test harness. CHECK* macros print "file:line: expression" on failure
 * and count; check_done() prints "N passed, N failed" and returns the exit status.
 * check_shared() finds ../shared/data: absent, the parts that need it are skipped with a
 * message (check_skip) and the test exits 77, which ctest shows as skipped; under
 * CI=true absence is a failure.
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_passed, check_failed, check_skipped;

/* Tests write scratch files into the working directory. Run from the source tree (by
 * hand), they move to the build tree's tests folder first, so nothing lands in git. */
__attribute__((constructor)) static void check_leave_source_tree(void)
{
    struct stat here, src;
    if (stat(".", &here) != 0 || stat(SIM_SOURCE_DIR, &src) != 0 || here.st_dev != src.st_dev ||
        here.st_ino != src.st_ino)
        return;
    char bin[PATH_MAX];
    snprintf(bin, sizeof bin, "%s", SIM_BINARY);
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/tests", dirname(bin));
    if (chdir(dir) != 0) {
        fprintf(stderr, "run the tests from the build directory (ctest), not the sources\n");
        exit(1);
    }
}

#define CHECK(expr)                                                                           \
    do {                                                                                      \
        if (expr) {                                                                           \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr);          \
        }                                                                                     \
    } while (0)

#define CHECK_EQ_I64(a, b)                                                                    \
    do {                                                                                      \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                       \
        if (check_a_ == check_b_) {                                                           \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_EQ_I64 failed: %s == %s (%lld vs %lld)\n", __FILE__, \
                    __LINE__, #a, #b, check_a_, check_b_);                                    \
        }                                                                                     \
    } while (0)

#define CHECK_NEAR(a, b, rel)                                                                 \
    do {                                                                                      \
        double check_a_ = (double)(a), check_b_ = (double)(b);                                \
        double check_tol_ = (rel) * fmax(fabs(check_a_), fabs(check_b_));                     \
        if (fabs(check_a_ - check_b_) <= check_tol_ || check_a_ == check_b_) {                \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s ~ %s (%.9g vs %.9g, rel %g)\n",     \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_, (double)(rel));           \
        }                                                                                     \
    } while (0)

#define CHECK_STR(a, b)                                                                       \
    do {                                                                                      \
        const char *check_a_ = (a), *check_b_ = (b);                                          \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {                        \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s == %s\n  got:      %s\n  expected: %s\n", \
                    __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",               \
                    check_b_ ? check_b_ : "(null)");                                          \
        }                                                                                     \
    } while (0)

/* Record that a part of the test could not run, and why. */
static inline void check_skip(const char *why)
{
    check_skipped++;
    printf("SKIP: %s\n", why);
}

/* Exit status: 1 on any failure, else 77 (ctest: skipped) if a part was skipped. */
static inline int check_done(void)
{
    printf("%d passed, %d failed, %d skipped\n", check_passed, check_failed, check_skipped);
    return check_failed ? 1 : check_skipped ? 77 : 0;
}

/* Path of ../shared/data/<rel> if the shared folder exists, else NULL (after printing
 * a skip message, or a failure under CI=true). */
static inline const char *check_shared(const char *rel, char *buf, size_t size)
{
    snprintf(buf, size, "%s/data/%s", SIM_SHARED_DIR, rel);
    struct stat sb;
    if (stat(buf, &sb) == 0)
        return buf;
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0) {
        check_failed++;
        fprintf(stderr, "FAIL: %s is missing and CI=true\n", buf);
    } else {
        char why[1200];
        snprintf(why, sizeof why, "%s is absent (the shared data folder is not beside the "
                                  "project)", buf);
        check_skip(why);
    }
    return NULL;
}

/* Write text to path (a test's input file); a file that cannot be opened fails a check. */
static inline void check_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Read a whole file into a malloc'd NUL-terminated buffer (NULL on failure). */
static inline char *check_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t k;
    while (b && (k = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n - 1 == 0) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b)
        b[n] = '\0';
    if (len)
        *len = n;
    return b;
}

/* Run a shell command, returning its exit status (or -1). */
static inline int check_system(const char *cmd)
{
    int rc = system(cmd);
    if (rc == -1)
        return -1;
    return (rc >> 8) & 0xff;
}

/* Run a shell command given printf-style; its exit status (or -1). */
static inline int check_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int check_sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd)
        return -1;
    return check_system(cmd);
}

/* Whether the file at path contains needle (says so on stderr when not). */
static inline bool check_file_has(const char *path, const char *needle)
{
    char *s = check_slurp(path, NULL);
    bool ok = s && strstr(s, needle);
    if (!ok)
        fprintf(stderr, "  %s does not contain: %s\n", path, needle);
    free(s);
    return ok;
}

#endif
