/* cairn.h: what the C built-in tools share: a growable byte buffer, UTF-8
 * and Go-compatible text helpers, the request, and the tools' entry points. */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>

#include "utf8.h"

/* buf is a growable byte string. A failed allocation sets oom and keeps
 * what was there; the caller answers with an error. */
struct buf {
	char *p;
	size_t n, cap;
	int oom;
};

void buf_grow(struct buf *b, size_t more);
void buf_add(struct buf *b, const void *s, size_t n);
void buf_str(struct buf *b, const char *s);
void buf_byte(struct buf *b, char c);
void buf_int(struct buf *b, int64_t v);
void buf_free(struct buf *b);

/* A string that is a slice of another buffer: not NUL-terminated. */
struct str {
	const char *p;
	size_t n;
};

int utf8_valid(const char *s, size_t n);
void utf8_encode(struct buf *b, int32_t r);
/* valid_text appends s with each run of invalid bytes made one U+FFFD, as
 * Go's strings.ToValidUTF8(s, "\uFFFD"). */
void valid_text(struct buf *out, const char *s, size_t n);
/* go_quote appends s quoted as Go's strconv.Quote (and fmt's %q). */
void go_quote(struct buf *out, const char *s, size_t n);
int go_isprint(int32_t r);

/* The tools. Each appends its output to out and returns 0, or appends its
 * error text to err and returns -1. ws is the workspace's guest path. */
struct call {
	struct str ws;
	struct buf *out, *err;
};

int tool_read_file(struct call *c, const char *input, size_t n);
int tool_write_file(struct call *c, const char *input, size_t n);
int tool_edit_file(struct call *c, const char *input, size_t n);
int tool_list_dir(struct call *c, const char *input, size_t n);
int tool_glob(struct call *c, const char *input, size_t n);
int tool_grep(struct call *c, const char *input, size_t n);

/* serve answers one request (CBOR bytes) with one response (CBOR bytes). */
void serve(const char *req, size_t n, struct buf *resp);

#endif
