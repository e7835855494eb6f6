/*
 * report_doc.c: the report's writer — each call emits the same content as Markdown
 * (CommonMark + GitHub tables) and as HTML5 written in XML-compatible form (every
 * element closed, attributes quoted, text escaped), so report.html parses as XML too.
 * Figures are embedded in the HTML as base64 PNG (RFC 4648 section 4), so the file is
 * self-contained.
 */
#include "study/report_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char css[] =
    "body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #bbb;padding:0.25em 0.6em}"
    "th{background:#eee}td.r{text-align:right;font-variant-numeric:tabular-nums}"
    "code{background:#f4f4f4;padding:0 0.2em}"
    "figure{margin:1.5em 0}img{max-width:100%;height:auto}"
    "figcaption{font-size:0.9em;color:#444}";

static void html_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(c, f);
        }
    }
}

/* Text with `code` spans, as HTML. */
static void html_inline(FILE *f, const char *s)
{
    bool code = false;
    while (*s) {
        const char *q = strchr(s, '`');
        size_t n = q ? (size_t)(q - s) : strlen(s);
        html_text(f, s, n);
        if (!q)
            break;
        fputs(code ? "</code>" : "<code>", f);
        code = !code;
        s = q + 1;
    }
    if (code)
        fputs("</code>", f);
}

/* Markdown table cell: a '|' would end the cell. */
static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void close_list(report_doc *doc)
{
    if (!doc->in_list)
        return;
    fputc('\n', doc->md);
    fputs("</ul>\n", doc->html);
    doc->in_list = false;
}

void report__doc_begin(report_doc *doc, const char *title)
{
    doc->in_list = false;
    doc->cols = 0;
    fprintf(doc->md, "# %s\n\n", title);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>",
          doc->html);
    html_text(doc->html, title, strlen(title));
    fprintf(doc->html, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
    html_text(doc->html, title, strlen(title));
    fputs("</h1>\n", doc->html);
}

void report__doc_end(report_doc *doc)
{
    close_list(doc);
    fputs("</body>\n</html>\n", doc->html);
}

void report__doc_heading(report_doc *doc, int level, const char *text)
{
    close_list(doc);
    for (int k = 0; k < level; k++)
        fputc('#', doc->md);
    fprintf(doc->md, " %s\n\n", text);
    fprintf(doc->html, "<h%d>", level);
    html_inline(doc->html, text);
    fprintf(doc->html, "</h%d>\n", level);
}

void report__doc_para(report_doc *doc, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    close_list(doc);
    fprintf(doc->md, "%s\n\n", buf);
    fputs("<p>", doc->html);
    html_inline(doc->html, buf);
    fputs("</p>\n", doc->html);
}

void report__doc_item(report_doc *doc, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!doc->in_list) {
        fputs("<ul>\n", doc->html);
        doc->in_list = true;
    }
    fprintf(doc->md, "- %s\n", buf);
    fputs("<li>", doc->html);
    html_inline(doc->html, buf);
    fputs("</li>\n", doc->html);
}

void report__doc_list_end(report_doc *doc)
{
    close_list(doc);
}

void report__doc_table(report_doc *doc, uint32_t cols, const char *const *head, const char *align)
{
    close_list(doc);
    doc->cols = cols;
    fputs("<table>\n<thead><tr>", doc->html);
    fputc('|', doc->md);
    for (uint32_t c = 0; c < cols; c++) {
        fputc(' ', doc->md);
        md_cell(doc->md, head[c]);
        fputs(" |", doc->md);
        fputs("<th>", doc->html);
        html_inline(doc->html, head[c]);
        fputs("</th>", doc->html);
    }
    fputs("\n|", doc->md);
    for (uint32_t c = 0; c < cols; c++)
        fputs(align[c] == 'r' ? " ---: |" : " --- |", doc->md);
    fputc('\n', doc->md);
    fputs("</tr></thead>\n<tbody>\n", doc->html);
    /* The alignment is kept in the HTML as a class per cell, set row by row. */
    snprintf(doc->align, sizeof doc->align, "%s", align);
}

void report__doc_row(report_doc *doc, const char *const *cells)
{
    fputc('|', doc->md);
    fputs("<tr>", doc->html);
    for (uint32_t c = 0; c < doc->cols; c++) {
        fputc(' ', doc->md);
        md_cell(doc->md, cells[c]);
        fputs(" |", doc->md);
        fputs(doc->align[c] == 'r' ? "<td class=\"r\">" : "<td>", doc->html);
        html_inline(doc->html, cells[c]);
        fputs("</td>", doc->html);
    }
    fputc('\n', doc->md);
    fputs("</tr>\n", doc->html);
}

void report__doc_table_end(report_doc *doc)
{
    fputc('\n', doc->md);
    fputs("</tbody>\n</table>\n", doc->html);
    doc->cols = 0;
}

static void base64_file(FILE *out, FILE *in)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char b[3 * 1024];
    size_t n;
    while ((n = fread(b, 1, sizeof b, in)) > 0) {
        size_t i = 0;
        for (; i + 3 <= n; i += 3) {
            unsigned v = (unsigned)b[i] << 16 | (unsigned)b[i + 1] << 8 | b[i + 2];
            fputc(al[v >> 18], out);
            fputc(al[(v >> 12) & 63], out);
            fputc(al[(v >> 6) & 63], out);
            fputc(al[v & 63], out);
        }
        if (i < n) {
            /* Only the file's last block can be partial: fread fills b otherwise. */
            unsigned v = (unsigned)b[i] << 16 | (i + 1 < n ? (unsigned)b[i + 1] << 8 : 0u);
            fputc(al[v >> 18], out);
            fputc(al[(v >> 12) & 63], out);
            fputc(i + 1 < n ? al[(v >> 6) & 63] : '=', out);
            fputc('=', out);
        }
    }
}

void report__doc_figure(report_doc *doc, const char *png_path, const char *rel_png,
                        const char *rel_svg, const char *caption)
{
    close_list(doc);
    fprintf(doc->md, "![%s](%s)\n\n*%s* (SVG: `%s`)\n\n", caption, rel_png, caption, rel_svg);
    FILE *in = fopen(png_path, "rb");
    fputs("<figure>", doc->html);
    if (in) {
        fputs("<img alt=\"", doc->html);
        html_text(doc->html, caption, strlen(caption));
        fputs("\" src=\"data:image/png;base64,", doc->html);
        base64_file(doc->html, in);
        fclose(in);
        fputs("\"/>", doc->html);
    }
    fputs("<figcaption>", doc->html);
    html_inline(doc->html, caption);
    fputs(" (SVG: <code>", doc->html);
    html_text(doc->html, rel_svg, strlen(rel_svg));
    fputs("</code>)</figcaption></figure>\n", doc->html);
}
