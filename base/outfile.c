/*
 * outfile.c: the one way outputs are opened (outfile.h). The temporary sits in the
 * target's directory, so rename(2) replaces the target atomically; its name ends in
 * ".tmp.<pid>". Open temporaries are kept in a fixed table a signal handler can walk.
 */
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

/* Slots are taken and freed by compare-and-swap (the runs of a sweep open outputs from
 * several threads) and read by the signal handler (lock-free pointer atomics are
 * async-signal-safe). */
#define TMP_SLOTS 128
static _Atomic(const char *) tmp_open[TMP_SLOTS];

void sim_outfile_remove_temporaries(void)
{
    for (int i = 0; i < TMP_SLOTS; i++) {
        const char *p = atomic_load(&tmp_open[i]);
        if (p)
            unlink(p);
    }
}

static void tmp_register(const char *path)
{
    for (int i = 0; i < TMP_SLOTS; i++) {
        const char *none = NULL;
        if (atomic_compare_exchange_strong(&tmp_open[i], &none, path))
            return;
    }
}

static void tmp_unregister(const char *path)
{
    for (int i = 0; i < TMP_SLOTS; i++) {
        const char *p = path;
        atomic_compare_exchange_strong(&tmp_open[i], &p, NULL);
    }
}

void sim_outfile_track(const char *path)
{
    tmp_register(path);
}

void sim_outfile_untrack(const char *path)
{
    tmp_unregister(path);
}

/* Follow the symlinks at o->target (at most 40, as the kernel does); a relative link is
 * taken from the link's directory. *st is the final lstat, or errno ENOENT for a link
 * to a path that does not exist yet (it is created there). */
static int resolve(sim_outfile *o, struct stat *st, sim_diag *d)
{
    for (int hops = 0;; hops++) {
        if (lstat(o->target, st) != 0)
            return errno;
        if (!S_ISLNK(st->st_mode))
            return 0;
        if (hops == 40) {
            sim_diag_set(d, SIM_EIO, o->path, 0, 0, "cannot create the file: %s", strerror(ELOOP));
            return -1;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(o->target, link, sizeof link - 1);
        if (n < 0)
            return errno;
        link[n] = '\0';
        char next[sizeof o->target];
        const char *slash = strrchr(o->target, '/');
        int len = link[0] == '/' || !slash ? snprintf(next, sizeof next, "%s", link)
                                           : snprintf(next, sizeof next, "%.*s/%s",
                                                      (int)(slash - o->target), o->target, link);
        if (len < 0 || (size_t)len >= sizeof next - 16)
            return ENAMETOOLONG;
        memcpy(o->target, next, (size_t)len + 1);
    }
}

int sim_outfile_open(sim_outfile *o, const char *path, sim_diag *d)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    /* An empty name (an unset variable) names no file: the temporary would go to the
     * current directory and the rename at the end fail, after all the work. */
    if (!path[0])
        return sim_diag_set(d, SIM_EIO, NULL, 0, 0,
                            "cannot create the file: the output file name is empty");
    if (strlen(path) >= sizeof o->path - 16)
        return sim_diag_set(d, SIM_EIO, path, 0, 0,
                            "cannot create the file: the name is too "
                            "long");
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->target, sizeof o->target, "%s", path);
    struct stat st;
    int e = resolve(o, &st, d);
    if (e < 0)
        return SIM_EIO;
    if (e != 0 && e != ENOENT)
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot create the file: %s", strerror(e));
    if (e == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        /* Written through: a reader is at the other end (a FIFO), or the device is the
         * destination. Replacing either would break what the user set up. */
        o->fd = open(o->target, O_WRONLY | O_CLOEXEC);
        if (o->fd < 0)
            return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot open for writing: %s",
                                strerror(errno));
        return SIM_OK;
    }
    if (e == 0 && !S_ISREG(st.st_mode))
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot create the file: %s",
                            S_ISDIR(st.st_mode)   ? strerror(EISDIR)
                            : S_ISBLK(st.st_mode) ? "it is a block device (refused)"
                                                  : "it is a socket (refused)");
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->target, (long)getpid());
    mode_t mode = e == 0 ? (st.st_mode & 07777) : 0666;
    /* Tracked before it exists: a signal between the creation and the tracking would
     * leave it behind. */
    tmp_register(o->tmp);
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (o->fd < 0) {
        int err = errno;
        tmp_unregister(o->tmp);
        o->tmp[0] = '\0';
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot create the file: %s", strerror(err));
    }
    /* The creation mode passed through the umask; a replaced file keeps its bits. */
    if (e == 0)
        (void)fchmod(o->fd, mode);
    return SIM_OK;
}

FILE *sim_outfile_stream(sim_outfile *o, sim_diag *d)
{
    o->f = fdopen(o->fd, "w");
    if (!o->f) {
        sim_diag_set(d, SIM_ENOMEM, o->path, 0, 0, "out of memory");
        return NULL;
    }
    o->fd = -1;
    setvbuf(o->f, NULL, _IOFBF, 1 << 16);
    /* An output stream belongs to the one thread that writes it: stdio's per-call lock
     * (taken once another thread exists, such as the trace reader) is pure cost. */
    __fsetlocking(o->f, FSETLOCKING_BYCALLER);
    return o->f;
}

int sim_outfile_take_fd(sim_outfile *o)
{
    int fd = o->fd;
    o->fd = -1;
    return fd;
}

int sim_outfile_close(sim_outfile *o, bool commit, int write_errno, sim_diag *d)
{
    int err = write_errno;
    if (o->f) {
        /* A stream in error has failed a write; flushing again names the reason. */
        bool bad = ferror(o->f) != 0;
        errno = 0;
        if (fflush(o->f) != 0 && !err)
            err = errno ? errno : EIO;
        if (bad && !err)
            err = errno ? errno : EIO;
        if (fclose(o->f) != 0 && !err)
            err = errno ? errno : EIO;
        o->f = NULL;
    }
    if (o->fd >= 0) {
        if (close(o->fd) != 0 && !err)
            err = errno;
        o->fd = -1;
    }
    int st = SIM_OK;
    if (commit && err)
        st = sim_diag_set(d, SIM_EIO, o->path, 0, 0, "cannot write: %s", strerror(err));
    if (o->tmp[0]) {
        if (commit && !err && rename(o->tmp, o->target) != 0)
            st = sim_diag_set(d, SIM_EIO, o->path, 0, 0,
                              "cannot rename the finished file into place: %s", strerror(errno));
        if (!commit || st != SIM_OK)
            unlink(o->tmp);
        tmp_unregister(o->tmp);
        o->tmp[0] = '\0';
    }
    return st;
}

int sim_outfile_copy(const char *path, const char *src, sim_diag *d)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return sim_diag_set(d, SIM_EIO, src, 0, 0, "cannot open: %s", strerror(errno));
    sim_outfile o;
    int st = sim_outfile_open(&o, path, d);
    if (st != SIM_OK) {
        close(in);
        return st;
    }
    char buf[1 << 15];
    int read_err = 0, write_err = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            read_err = errno;
        if (n <= 0)
            break;
        for (ssize_t off = 0; off < n && !write_err;) {
            ssize_t w = write(o.fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno != EINTR)
                write_err = errno;
            else if (w > 0)
                off += w;
        }
        if (write_err)
            break;
    }
    close(in);
    if (read_err) {
        sim_outfile_close(&o, false, 0, NULL);
        return sim_diag_set(d, SIM_EIO, src, 0, 0, "cannot read: %s", strerror(read_err));
    }
    return sim_outfile_close(&o, true, write_err, d);
}
