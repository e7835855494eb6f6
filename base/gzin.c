/*
 * gzin.c: read(2) into a 64 KiB input buffer, then inflate (gzip members, one after the
 * other, as gzip(1) concatenates them) or copy. `in_off` is the file offset of in[0], so
 * every error names the byte offset where the decompressor stopped. The bytes inflated
 * before an error are handed out first, and the error at the next read, so what a reader
 * gets does not depend on the size of its reads. Optionally (sim_gzin_ahead) a thread of
 * its own does the reading and inflating into a few blocks that sim_gzin_read copies
 * from. The decompressor is ISA-L's igzip where the build found it (SIM_HAVE_ISAL: about
 * 2.5 times zlib's speed), else zlib; both check each member's CRC-32 and length.
 */
#include "base/gzin.h"

#include "base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef SIM_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#define IN_CAP (64u * 1024u)
#define STAGE_CAP (64u * 1024u)
#define AHEAD_BLOCKS 4u
#define AHEAD_CAP (256u * 1024u)

enum { MODE_UNKNOWN, MODE_PLAIN, MODE_GZIP };

struct sim_gzin {
    char path[512];
    int fd;
    unsigned char *in;     /* IN_CAP bytes */
    size_t in_pos, in_len; /* unread input: in[in_pos..in_len) */
    long long in_off;      /* file offset of in[0] */
    bool in_eof;
    int mode;
    bool member_done; /* the last gzip member ended; another may follow */
    bool done;
    int err; /* a final error, repeated by every later read */
    /* Inflated bytes not yet handed out, when a read asked for fewer than STAGE_CAP:
     * stage[stage_pos..stage_len). */
    unsigned char *stage;
    size_t stage_pos, stage_len;
#ifdef SIM_HAVE_ISAL
    struct inflate_state *z; /* NULL until the input shows a gzip member */
    int z_err;               /* the error met, while the output held before it drains */
#else
    z_stream z;
    bool z_init;
#endif
    char msg[200];
    struct ahead *ahead; /* inflating on a thread of its own (sim_gzin_ahead) */
    int told;            /* the error sim_gzin_read handed out (0: none yet) ... */
    sim_diag told_diag;  /* ... and its diagnostic */
};

/* Blocks of output filled in order by the thread and taken in order by the reader. The
 * block that ends the input holds its status: 0 bytes at the end, or the error with its
 * diagnostic, each after the bytes before it. */
typedef struct ahead {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *blk[AHEAD_BLOCKS];
    size_t len[AHEAD_BLOCKS];
    /* Under mu: blocks filled (monotonic), taken (monotonic), whether to stop, and the
     * final status (1 while the input goes on) with its diagnostic. */
    uint64_t filled, taken;
    bool stop;
    int final;
    sim_diag final_diag;
    bool is_gzip;
    /* The reader's own: the block it reads and its position in it, and whether the
     * input is gzip (as the thread last said; g->mode is the thread's). */
    size_t pos;
    bool holding, reader_gzip;
} ahead;

static void ahead_stop(sim_gzin *g);

int sim_gzin_open(sim_gzin **out, const char *path, sim_diag *d)
{
    *out = NULL;
    sim_gzin *g = sim_calloc(1, sizeof *g);
    if (!g)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    snprintf(g->path, sizeof g->path, "%s", path);
    g->in = sim_malloc(IN_CAP);
    if (!g->in) {
        sim_free(g);
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    if (strcmp(path, "-") == 0) {
        g->fd = 0;
    } else {
        g->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (g->fd < 0) {
            int e = errno;
            sim_free(g->in);
            sim_free(g);
            return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(e));
        }
    }
    *out = g;
    return SIM_OK;
}

void sim_gzin_close(sim_gzin *g)
{
    if (!g)
        return;
    if (g->ahead)
        ahead_stop(g);
#ifdef SIM_HAVE_ISAL
    sim_free(g->z);
#else
    if (g->z_init)
        inflateEnd(&g->z);
#endif
    if (g->fd > 0)
        close(g->fd);
    sim_free(g->stage);
    sim_free(g->in);
    sim_free(g);
}

bool sim_gzin_is_gzip(const sim_gzin *g)
{
    if (g->ahead)
        return g->ahead->reader_gzip;
    return g->mode == MODE_GZIP;
}

static int fail(sim_gzin *g, int st, sim_diag *d, const char *fmt, long long off, const char *what)
{
    g->err = st;
    snprintf(g->msg, sizeof g->msg, fmt, off, what);
    return sim_diag_set(d, st, g->path, 0, 0, "%s", g->msg);
}

static int fail_nomem(sim_gzin *g, sim_diag *d)
{
    g->err = SIM_ENOMEM;
    snprintf(g->msg, sizeof g->msg, "out of memory");
    return sim_diag_set(d, SIM_ENOMEM, g->path, 0, 0, "%s", g->msg);
}

/* Move the unread input to the front and read more after it, until at least `want`
 * bytes are unread or the file ends. */
static int refill(sim_gzin *g, size_t want, sim_diag *d)
{
    if (g->in_pos > 0) {
        memmove(g->in, g->in + g->in_pos, g->in_len - g->in_pos);
        g->in_off += (long long)g->in_pos;
        g->in_len -= g->in_pos;
        g->in_pos = 0;
    }
    while (!g->in_eof && g->in_len < want) {
        ssize_t n = read(g->fd, g->in + g->in_len, IN_CAP - g->in_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            g->err = SIM_EIO;
            snprintf(g->msg, sizeof g->msg, "cannot read: %s", strerror(errno));
            return sim_diag_set(d, SIM_EIO, g->path, 0, 0, "%s", g->msg);
        }
        if (n == 0)
            g->in_eof = true;
        g->in_len += (size_t)n;
    }
    return SIM_OK;
}

/* ---- The decompressor: start, restart at a member, and one step. ---- */

enum { INFL_MORE, INFL_END, INFL_BAD, INFL_NOMEM };

#ifdef SIM_HAVE_ISAL
static bool infl_start(sim_gzin *g)
{
    g->z = sim_malloc(sizeof *g->z);
    if (!g->z)
        return false;
    isal_inflate_init(g->z);
    g->z->crc_flag = ISAL_GZIP; /* parse the header, check the trailer */
    return true;
}

static bool infl_restart(sim_gzin *g)
{
    isal_inflate_reset(g->z);
    g->z->crc_flag = ISAL_GZIP;
    return true;
}

/* The reason for ISA-L's error r. */
static const char *isal_why(int r)
{
    switch (r) {
    case ISAL_INVALID_BLOCK:
        return "invalid block";
    case ISAL_INVALID_SYMBOL:
        return "invalid code";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
        return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: /* the trailer's CRC-32 or length */
        return "incorrect data or length check";
    default:
        return "invalid data";
    }
}

/* Hand out what ISA-L decoded ahead into its own buffer and still holds: up to cap
 * bytes into out. */
static size_t isal_drain(struct inflate_state *z, unsigned char *out, size_t cap)
{
    size_t left = z->tmp_out_valid > z->tmp_out_processed
                      ? (size_t)(z->tmp_out_valid - z->tmp_out_processed)
                      : 0;
    size_t k = left < cap ? left : cap;
    memcpy(out, z->tmp_out_buffer + z->tmp_out_processed, k);
    z->tmp_out_processed += (int32_t)k;
    return k;
}

/* Inflate from in[0..len) into out[0..cap): *used input bytes taken, *made output
 * bytes written; INFL_END when the member ended (trailer checked), INFL_MORE when it
 * wants more input or room, else an error with *why. ISA-L decodes ahead into a buffer
 * of its own and stops at damage with output still there: that output is handed out
 * first (the error waits in z_err), so what comes before the error does not depend on
 * the size of the reads. */
static int infl_step(sim_gzin *g, unsigned char *in, size_t len, unsigned char *out, size_t cap,
                     size_t *used, size_t *made, const char **why)
{
    struct inflate_state *z = g->z;
    if (g->z_err) {
        *used = 0;
        *made = isal_drain(z, out, cap);
        if (*made)
            return INFL_MORE;
        *why = isal_why(g->z_err);
        return INFL_BAD;
    }
    z->next_in = in;
    z->avail_in = (uint32_t)len;
    z->next_out = out;
    z->avail_out = (uint32_t)cap;
    int r = isal_inflate(z);
    *used = len - z->avail_in;
    *made = cap - z->avail_out;
    if (r == ISAL_DECOMP_OK)
        return z->block_state == ISAL_BLOCK_FINISH ? INFL_END : INFL_MORE;
    g->z_err = r < 0 ? r : ISAL_INVALID_BLOCK;
    *made += isal_drain(z, out + *made, cap - *made);
    if (*made)
        return INFL_MORE;
    *why = isal_why(g->z_err);
    return INFL_BAD;
}
#else
static bool infl_start(sim_gzin *g)
{
    memset(&g->z, 0, sizeof g->z);
    if (inflateInit2(&g->z, 15 + 16) != Z_OK)
        return false;
    g->z_init = true;
    return true;
}

static bool infl_restart(sim_gzin *g)
{
    return inflateReset(&g->z) == Z_OK;
}

static int infl_step(sim_gzin *g, unsigned char *in, size_t len, unsigned char *out, size_t cap,
                     size_t *used, size_t *made, const char **why)
{
    g->z.next_in = in;
    g->z.avail_in = (uInt)len;
    g->z.next_out = out;
    g->z.avail_out = (uInt)cap;
    int zr = inflate(&g->z, Z_NO_FLUSH);
    *used = len - g->z.avail_in;
    *made = cap - g->z.avail_out;
    if (zr == Z_STREAM_END)
        return INFL_END;
    if (zr == Z_OK || zr == Z_BUF_ERROR)
        return INFL_MORE;
    if (zr == Z_MEM_ERROR)
        return INFL_NOMEM;
    *why = g->z.msg ? g->z.msg : "invalid data";
    return INFL_BAD;
}
#endif

static bool at_magic(const sim_gzin *g)
{
    return g->in_len - g->in_pos >= 2 && g->in[g->in_pos] == 0x1f && g->in[g->in_pos + 1] == 0x8b;
}

/* After a member's end: another member, the end of the file, or junk. */
static int next_member(sim_gzin *g, sim_diag *d)
{
    int st = refill(g, 2, d);
    if (st != SIM_OK)
        return st;
    if (g->in_pos == g->in_len) {
        g->done = true;
        return SIM_OK;
    }
    long long off = g->in_off + (long long)g->in_pos;
    if (!at_magic(g))
        return fail(g, SIM_EIO, d, "junk after the gzip stream at byte offset %lld (%s)", off,
                    "bytes that do not start another gzip member");
    if (!infl_restart(g))
        return fail(g, SIM_EIO, d, "corrupt gzip stream at byte offset %lld (%s)", off,
                    "cannot restart the decompressor");
    g->member_done = false;
    return SIM_OK;
}

/* Inflate into buf[0..cap): the bytes made (0 at the end), or an error. */
static long inflate_some(sim_gzin *g, unsigned char *buf, size_t cap, sim_diag *d)
{
    size_t made = 0;
    while (made == 0 && !g->done) {
        int st;
        if (g->member_done && (st = next_member(g, d)) != SIM_OK)
            return st;
        if (g->done)
            break;
        if (g->in_pos == g->in_len && (st = refill(g, 1, d)) != SIM_OK)
            return st;
        /* No input left means the file ends inside the member; the decompressor may
         * still hold output that needs none (the rest of a match), which comes first. */
        bool ends = g->in_pos == g->in_len;
        size_t used;
        const char *why = NULL;
        int r = infl_step(g, g->in + g->in_pos, g->in_len - g->in_pos, buf, cap, &used, &made,
                          &why);
        g->in_pos += used;
        long long at = g->in_off + (long long)g->in_pos;
        if (ends && r == INFL_MORE && made == 0)
            return fail(g, SIM_EIO, d,
                        "truncated gzip stream: the file ends at byte offset %lld inside it%s", at,
                        "");
        if (r == INFL_END) {
            g->member_done = true;
        } else if (r == INFL_BAD || r == INFL_NOMEM) {
            st = r == INFL_NOMEM
                     ? fail_nomem(g, d)
                     : fail(g, SIM_EIO, d, "corrupt gzip stream at byte offset %lld (%s)", at, why);
            /* What was inflated before the damage comes first; the error, kept in g,
             * at the next read. */
            return made ? (long)made : st;
        }
    }
    return (long)made;
}

static long take_stage(sim_gzin *g, unsigned char *buf, size_t n)
{
    size_t k = g->stage_len - g->stage_pos < n ? g->stage_len - g->stage_pos : n;
    memcpy(buf, g->stage + g->stage_pos, k);
    g->stage_pos += k;
    return (long)k;
}

/* Every call of the decompressor gets STAGE_CAP bytes of room, in the reader's buffer
 * when it has that much and in the stage otherwise, so the calls, and so where a
 * decompressor that decodes ahead (ISA-L) stops at damage, do not depend on the size
 * of the reads. */
static long read_gzip(sim_gzin *g, unsigned char *buf, size_t n, sim_diag *d)
{
    if (n >= STAGE_CAP)
        return inflate_some(g, buf, STAGE_CAP, d);
    long r = inflate_some(g, g->stage, STAGE_CAP, d);
    if (r <= 0)
        return r;
    g->stage_pos = 0;
    g->stage_len = (size_t)r;
    return take_stage(g, buf, n);
}

static long read_direct(sim_gzin *g, void *buf, size_t n, sim_diag *d)
{
    if (g->stage_pos < g->stage_len)
        return take_stage(g, buf, n); /* before an error met after them */
    if (g->err)
        return sim_diag_set(d, g->err, g->path, 0, 0, "%s", g->msg);
    if (g->mode == MODE_UNKNOWN) {
        int st = refill(g, 2, d);
        if (st != SIM_OK)
            return st;
        if (at_magic(g)) {
            if (!(g->stage = sim_malloc(STAGE_CAP)) || !infl_start(g))
                return fail_nomem(g, d);
            g->mode = MODE_GZIP;
        } else {
            g->mode = MODE_PLAIN;
        }
    }
    if (g->mode == MODE_GZIP)
        return read_gzip(g, buf, n, d);
    if (g->in_pos == g->in_len) {
        int st = refill(g, 1, d);
        if (st != SIM_OK)
            return st;
    }
    size_t k = g->in_len - g->in_pos;
    if (k > n)
        k = n;
    memcpy(buf, g->in + g->in_pos, k);
    g->in_pos += k;
    return (long)k;
}

/* The thread: fill each free block to the full (or to the end), in order. */
static void *ahead_main(void *arg)
{
    sim_gzin *g = arg;
    ahead *a = g->ahead;
    for (;;) {
        pthread_mutex_lock(&a->mu);
        while (a->filled - a->taken == AHEAD_BLOCKS && !a->stop)
            pthread_cond_wait(&a->cv, &a->mu);
        bool stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop)
            return NULL;
        uint32_t b = (uint32_t)(a->filled % AHEAD_BLOCKS);
        size_t got = 0;
        long n = 1;
        sim_diag d = {0};
        while (got < AHEAD_CAP && (n = read_direct(g, a->blk[b] + got, AHEAD_CAP - got, &d)) > 0)
            got += (size_t)n;
        pthread_mutex_lock(&a->mu);
        a->len[b] = got;
        a->is_gzip = g->mode == MODE_GZIP;
        if (n <= 0) {
            a->final = (int)n;
            a->final_diag = d;
        }
        a->filled++;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        if (n <= 0)
            return NULL;
    }
}

bool sim_gzin_ahead(sim_gzin *g)
{
    if (g->ahead)
        return true;
    ahead *a = sim_calloc(1, sizeof *a);
    if (!a)
        return false;
    a->final = 1;
    a->reader_gzip = g->mode == MODE_GZIP;
    bool ok = true;
    for (uint32_t b = 0; b < AHEAD_BLOCKS; b++)
        ok = ok && (a->blk[b] = sim_malloc(AHEAD_CAP)) != NULL;
    if (ok && pthread_mutex_init(&a->mu, NULL) == 0) {
        if (pthread_cond_init(&a->cv, NULL) == 0) {
            g->ahead = a;
            if (pthread_create(&a->thread, NULL, ahead_main, g) == 0)
                return true;
            g->ahead = NULL;
            pthread_cond_destroy(&a->cv);
        }
        pthread_mutex_destroy(&a->mu);
    }
    /* No thread (or no memory for one): the input is read in place, as without. */
    for (uint32_t b = 0; b < AHEAD_BLOCKS; b++)
        sim_free(a->blk[b]);
    sim_free(a);
    return false;
}

static void ahead_stop(sim_gzin *g)
{
    ahead *a = g->ahead;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    for (uint32_t b = 0; b < AHEAD_BLOCKS; b++)
        sim_free(a->blk[b]);
    sim_free(a);
    g->ahead = NULL;
}

static long read_ahead(sim_gzin *g, unsigned char *buf, size_t n, sim_diag *d)
{
    ahead *a = g->ahead;
    for (;;) {
        uint32_t b = (uint32_t)(a->taken % AHEAD_BLOCKS);
        if (a->holding && a->pos < a->len[b]) {
            size_t k = a->len[b] - a->pos < n ? a->len[b] - a->pos : n;
            memcpy(buf, a->blk[b] + a->pos, k);
            a->pos += k;
            return (long)k;
        }
        pthread_mutex_lock(&a->mu);
        if (a->holding) {
            /* The block is read through: the end of the input, or give it back. */
            if (a->filled == a->taken + 1 && a->final != 1) {
                int st = a->final;
                if (st < 0 && d)
                    *d = a->final_diag;
                pthread_mutex_unlock(&a->mu);
                return st;
            }
            a->taken++;
            a->holding = false;
            pthread_cond_broadcast(&a->cv);
        }
        while (a->filled == a->taken)
            pthread_cond_wait(&a->cv, &a->mu);
        a->reader_gzip = a->is_gzip;
        a->holding = true;
        a->pos = 0;
        pthread_mutex_unlock(&a->mu);
    }
}

long sim_gzin_read(sim_gzin *g, void *buf, size_t n, sim_diag *d)
{
    if (n == 0) {
        /* Nothing to read: 0, or the error once it was handed out (in either mode). */
        if (g->told < 0 && d)
            *d = g->told_diag;
        return g->told;
    }
    long r = g->ahead ? read_ahead(g, buf, n, d) : read_direct(g, buf, n, d);
    if (r < 0 && !g->told) {
        g->told = (int)r;
        if (d)
            g->told_diag = *d;
    }
    return r;
}
