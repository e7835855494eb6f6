/*
 * paths.c: the files of one run, and the check that no output is one of its inputs or
 * another of its outputs. Outputs are written to a temporary and renamed over their
 * path (base/outfile.h), so an output that is an input would replace it with the run's
 * results, and of two outputs on one file the last one closed would win.
 */
/* realpath is an XSI extension of POSIX. */
#define _DEFAULT_SOURCE 1

#include "study/paths.h"

#include "base/alloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATHS_MAX 4096

typedef struct paths_file {
    const char *noun; /* inputs: what the file is; NULL for outputs */
    const char *what; /* how the user named it */
    const char *path; /* as given */
    const char *norm; /* outputs not yet created: the normalised absolute path, else "" */
    bool exists;      /* stat succeeded: compared by dev and ino */
    dev_t dev;
    ino_t ino;
    char *block; /* the strings above */
} paths_file;

struct study_paths {
    paths_file *in, *out;
    uint32_t n_in, cap_in, n_out, cap_out;
    bool oom; /* a file could not be added: the check fails with SIM_ENOMEM */
};

study_paths *study_paths_create(void)
{
    study_paths *p = sim_calloc(1, sizeof *p);
    return p;
}

void study_paths_destroy(study_paths *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->n_in; i++)
        sim_free(p->in[i].block);
    for (uint32_t i = 0; i < p->n_out; i++)
        sim_free(p->out[i].block);
    sim_free(p->in);
    sim_free(p->out);
    sim_free(p);
}

static bool append(char *out, size_t size, const char *a, size_t alen)
{
    size_t n = strlen(out);
    if (n + alen + 1 > size)
        return false;
    memcpy(out + n, a, alen);
    out[n + alen] = '\0';
    return true;
}

/* The absolute form of path with the symlinks of its existing part resolved, for a file
 * that may not exist yet: realpath where the whole path exists, else the normalised
 * parent with the last component appended ("." dropped, ".." going up), a dangling
 * symlink followed to its target (at most 40 links). false when it cannot be formed
 * (too long, too many links, no current directory). */
static bool norm_path(const char *path, char *out, size_t size, int links)
{
    char buf[PATHS_MAX];
    if (realpath(path, buf)) {
        if (strlen(buf) + 1 > size)
            return false;
        strcpy(out, buf);
        return true;
    }
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    if (len == 0 || len >= sizeof buf)
        return false;
    size_t slash = len;
    while (slash > 0 && path[slash - 1] != '/')
        slash--;
    /* dir: everything before the last component ("." when there is none). */
    char dir[PATHS_MAX];
    if (slash == 0)
        strcpy(dir, ".");
    else if (slash == 1)
        strcpy(dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - 1), path);
    const char *base = path + slash;
    size_t blen = len - slash;
    char whole[PATHS_MAX];
    snprintf(whole, sizeof whole, "%.*s", (int)len, path);
    ssize_t n = readlink(whole, buf, sizeof buf - 1);
    if (n > 0) {
        /* A dangling symlink: the output will be written at its target. */
        if (links >= 40)
            return false;
        buf[n] = '\0';
        char target[PATHS_MAX];
        int w = buf[0] == '/' ? snprintf(target, sizeof target, "%s", buf)
                              : snprintf(target, sizeof target, "%s/%s", dir, buf);
        if (w < 0 || (size_t)w >= sizeof target)
            return false;
        return norm_path(target, out, size, links + 1);
    }
    if (!norm_path(dir, out, size, links))
        return false;
    if (blen == 1 && base[0] == '.')
        return true;
    if (blen == 2 && base[0] == '.' && base[1] == '.') {
        char *last = strrchr(out, '/');
        if (last == out)
            out[1] = '\0';
        else if (last)
            *last = '\0';
        return true;
    }
    if (strcmp(out, "/") != 0 && !append(out, size, "/", 1))
        return false;
    return append(out, size, base, blen);
}

static int add(paths_file **arr, uint32_t *n, uint32_t *cap, const char *noun, const char *what,
               const char *path, const char *norm, const struct stat *sb)
{
    if (!sim_reserve((void **)arr, cap, *n + 1, sizeof **arr))
        return SIM_ENOMEM;
    size_t ln = noun ? strlen(noun) + 1 : 0, lw = strlen(what) + 1, lp = strlen(path) + 1,
           lr = strlen(norm) + 1;
    char *b = sim_malloc(ln + lw + lp + lr);
    if (!b)
        return SIM_ENOMEM;
    paths_file *f = &(*arr)[(*n)++];
    *f = (paths_file){.block = b, .exists = sb != NULL};
    if (sb) {
        f->dev = sb->st_dev;
        f->ino = sb->st_ino;
    }
    if (noun) {
        f->noun = memcpy(b, noun, ln);
        b += ln;
    }
    f->what = memcpy(b, what, lw);
    f->path = memcpy(b + lw, path, lp);
    f->norm = memcpy(b + lw + lp, norm, lr);
    return SIM_OK;
}

int study_paths_input(study_paths *p, const char *noun, const char *what, const char *path)
{
    struct stat sb;
    if (!path || strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return SIM_OK;
    if (add(&p->in, &p->n_in, &p->cap_in, noun, what, path, "", &sb) != SIM_OK)
        p->oom = true;
    return p->oom ? SIM_ENOMEM : SIM_OK;
}

int study_paths_output(study_paths *p, const char *what, const char *path)
{
    struct stat sb;
    if (!path || !*path)
        return SIM_OK;
    if (stat(path, &sb) == 0) {
        /* Written through (a FIFO, /dev/null) or refused when opened (a directory):
         * nothing is replaced. */
        if (!S_ISREG(sb.st_mode))
            return SIM_OK;
        if (add(&p->out, &p->n_out, &p->cap_out, NULL, what, path, "", &sb) != SIM_OK)
            p->oom = true;
        return p->oom ? SIM_ENOMEM : SIM_OK;
    }
    char norm[PATHS_MAX];
    if (!norm_path(path, norm, sizeof norm, 0))
        norm[0] = '\0'; /* opening it will say what is wrong */
    if (add(&p->out, &p->n_out, &p->cap_out, NULL, what, path, norm, NULL) != SIM_OK)
        p->oom = true;
    return p->oom ? SIM_ENOMEM : SIM_OK;
}

static bool same(const paths_file *a, const paths_file *b)
{
    if (a->exists || b->exists)
        return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
    return a->norm[0] && strcmp(a->norm, b->norm) == 0;
}

int study_paths_check(const study_paths *p, sim_diag *d)
{
    if (p->oom)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (uint32_t i = 0; i < p->n_out; i++) {
        const paths_file *o = &p->out[i];
        for (uint32_t k = 0; k < p->n_in; k++)
            if (same(o, &p->in[k]))
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                    "%s would write '%s', which is %s (%s): an output may not "
                                    "replace an input; name another output path",
                                    o->what, o->path, p->in[k].noun, p->in[k].what);
        for (uint32_t k = 0; k < i; k++)
            if (same(o, &p->out[k]))
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                    "%s would write '%s', which %s writes too: two outputs may "
                                    "not share a file; give each its own path",
                                    o->what, o->path, p->out[k].what);
    }
    return SIM_OK;
}
