/*
 * files.c: output files written by rename, output directories, file checksums and the
 * path of this executable.
 */
#include "study/files.h"

#include "traces/trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int study_exit_status(int status)
{
    /* 1: the run itself failed (a policy's error, out of memory); 2: something in the
     * input, the options or the files given is wrong. */
    return status == SIM_EPOLICY || status == SIM_ENOMEM ? 1 : 2;
}

void study_print_diag(const sim_diag *d)
{
    if (!d->msg[0])
        return; /* reported where it happened */
    char buf[2048];
    fprintf(stderr, "clustersim: %s\n", sim_diag_format(d, buf, sizeof buf));
}

void study_verror(const char *fmt, va_list ap)
{
    fputs("clustersim: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void study_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    study_verror(fmt, ap);
    va_end(ap);
}

bool study_mkdirs(const char *dir)
{
    char buf[1024];
    if (strlen(dir) >= sizeof buf) {
        study_error("output directory name is too long");
        return false;
    }
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            study_error("cannot create directory '%s': %s", buf, strerror(errno));
            return false;
        }
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        study_error("cannot create directory '%s': %s", buf, strerror(errno));
        return false;
    }
    struct stat sb;
    if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        study_error("'%s' is not a directory", buf);
        return false;
    }
    if (access(buf, W_OK) != 0) {
        study_error("cannot write to directory '%s': %s", buf, strerror(errno));
        return false;
    }
    return true;
}

bool study_out_open(study_outfile *o, const char *dir, const char *name)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return study_out_open_path(o, path);
}

bool study_out_open_path(study_outfile *o, const char *path)
{
    sim_diag d = {0};
    o->f = NULL;
    if (sim_outfile_open(&o->o, path, &d) != SIM_OK || !(o->f = sim_outfile_stream(&o->o, &d))) {
        sim_outfile_close(&o->o, false, 0, NULL);
        study_print_diag(&d);
        return false;
    }
    return true;
}

bool study_out_close(study_outfile *o, bool commit)
{
    if (!o->f)
        return true;
    sim_diag d = {0};
    int st = sim_outfile_close(&o->o, commit, 0, &d);
    o->f = NULL;
    if (st != SIM_OK) {
        study_print_diag(&d);
        return false;
    }
    return true;
}

bool study_file_crc(const char *path, uint32_t *crc, uint64_t *bytes, const atomic_bool *stop)
{
    /* A stream was read already, and opening a FIFO again would wait for a writer. */
    if (trace_path_is_stream(path))
        return false;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    unsigned char buf[1 << 16];
    uLong c = crc32(0L, Z_NULL, 0);
    uint64_t n = 0;
    size_t k;
    bool stopped = false;
    while (!(stopped = stop && atomic_load_explicit(stop, memory_order_relaxed)) &&
           (k = fread(buf, 1, sizeof buf, f)) > 0) {
        c = crc32(c, buf, (uInt)k);
        n += k;
    }
    bool ok = !stopped && !ferror(f);
    fclose(f);
    *crc = (uint32_t)c;
    *bytes = n;
    return ok;
}

bool study_self_exe(char *buf, size_t size, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n > 0) {
        buf[n] = '\0';
        return true;
    }
    if (strchr(argv0, '/')) {
        snprintf(buf, size, "%s", argv0);
        return true;
    }
    study_error("cannot find the clustersim executable to run (/proc/self/exe is "
                "unreadable: %s)",
                strerror(errno));
    return false;
}
