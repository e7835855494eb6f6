/*
 * jsonin.h: a small, strict JSON reader for the files clustersim itself writes
 * (summary.json, run.json), so that reports can read them back without a JSON library.
 * The whole document is parsed (RFC 8259 grammar: no comments, no trailing commas, no
 * NaN, no leading zeros, no duplicate keys in an object, nesting at most 64 deep) into a
 * flat array of nodes; each node knows its parent, so objects are walked by key.
 * Errors name the file, line and column: "summary.json:3:14: error: JSON: expected ...".
 */
#ifndef STUDY_JSONIN_H
#define STUDY_JSONIN_H

#include "sim/types.h"

typedef enum json_type {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
} json_type;

/* One value of the document. Node 0 is the root; children follow their parent in
 * document order. */
typedef struct json_node {
    json_type type;
    int32_t parent;   /* index of the enclosing array or object; -1 for the root */
    const char *key;  /* member name inside an object ("" for array elements, the root) */
    const char *str;  /* JSON_STRING: the decoded UTF-8 text, NUL-terminated */
    double num;       /* JSON_NUMBER: the value; JSON_BOOL: 0 or 1 */
    uint32_t n_children;
    uint32_t end;     /* index just after the node's last descendant */
    long line;        /* where the value (or its key) begins, 1-based */
    int column;
} json_node;

typedef struct json_doc json_doc;

/* Parse text[0..len) (`name` is used in diagnostics). On success *out is a new document
 * to free with json_doc_destroy(). Errors: SIM_EPARSE (d says where and what),
 * SIM_ENOMEM. O(len). */
int json_doc_parse(json_doc **out, const char *text, size_t len, const char *name,
                   sim_diag *d);
/* Read and parse a file. Errors: SIM_EIO (cannot read), SIM_EPARSE, SIM_ENOMEM. */
int json_doc_load(json_doc **out, const char *path, sim_diag *d);
void json_doc_destroy(json_doc *j);

/* Number of nodes, and node i (0 = root). Borrowed while j lives. */
uint32_t json_doc_count(const json_doc *j);
const json_node *json_doc_node(const json_doc *j, uint32_t i);

/* Index of the member `key` of object node `obj`, or -1. O(members). */
int32_t json_doc_member(const json_doc *j, int32_t obj, const char *key);
/* Index of the node at a dotted path from the root ("jct_s.p95"), or -1 when absent.
 * Keys containing a dot cannot be reached this way: walk with json_doc_member. */
int32_t json_doc_find(const json_doc *j, const char *path);
/* The number at `path`: true with *out set; false when absent or not a number. A JSON
 * null (how clustersim writes a value that is not finite) gives true with NAN. */
bool json_doc_number(const json_doc *j, const char *path, double *out);
/* The string at `path`, or NULL when absent or not a string. */
const char *json_doc_string(const json_doc *j, const char *path);

#endif
