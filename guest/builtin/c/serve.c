/* serve.c: one call of ABI v1. The request is a CBOR map read by hand,
 * keys in any order, unknown keys (of any well-formed value) skipped; the
 * response is written in the canonical form the abi package writes. */
#include <string.h>

#include "cairn.h"

#define MAX_MESSAGE (16u << 20)
#define ABI_VERSION 1

struct cbor {
	const unsigned char *p, *end;
	const char *err;
};

/* head reads an item's head: its major type and its definite argument. */
static int head(struct cbor *d, int *major, uint64_t *arg)
{
	if (d->p >= d->end) {
		d->err = "unexpected end of message";
		return -1;
	}
	unsigned c = *d->p++;
	*major = c >> 5;
	unsigned info = c & 0x1F;
	if (info < 24) {
		*arg = info;
		return 0;
	}
	int size;
	switch (info) {
	case 24: size = 1; break;
	case 25: size = 2; break;
	case 26: size = 4; break;
	case 27: size = 8; break;
	default:
		d->err = "indefinite lengths and reserved values are not accepted";
		return -1;
	}
	if (d->end - d->p < size) {
		d->err = "unexpected end of message";
		return -1;
	}
	uint64_t v = 0;
	for (int i = 0; i < size; i++)
		v = v << 8 | *d->p++;
	*arg = v;
	return 0;
}

/* skip skips one well-formed item, nested at most depth deep. */
static int skip(struct cbor *d, int depth)
{
	int major;
	uint64_t arg;
	if (depth > 16) {
		d->err = "items nested too deeply";
		return -1;
	}
	if (head(d, &major, &arg))
		return -1;
	switch (major) {
	case 0: case 1: case 7:
		return 0;
	case 2: case 3:
		if (arg > (uint64_t)(d->end - d->p)) {
			d->err = "unexpected end of message";
			return -1;
		}
		d->p += arg;
		return 0;
	case 6:
		return skip(d, depth + 1);
	}
	/* An array or a map: each element is at least one byte. */
	if (arg > (uint64_t)(d->end - d->p)) {
		d->err = "unexpected end of message";
		return -1;
	}
	uint64_t items = major == 5 ? arg * 2 : arg;
	for (uint64_t i = 0; i < items; i++)
		if (skip(d, depth + 1))
			return -1;
	return 0;
}

static int text(struct cbor *d, struct str *s)
{
	int major;
	uint64_t arg;
	if (head(d, &major, &arg))
		return -1;
	if (major != 3) {
		d->err = "a field is not a text string";
		return -1;
	}
	if (arg > (uint64_t)(d->end - d->p)) {
		d->err = "unexpected end of message";
		return -1;
	}
	s->p = (const char *)d->p;
	s->n = arg;
	d->p += arg;
	if (!utf8_valid(s->p, s->n)) {
		d->err = "a text string is not UTF-8";
		return -1;
	}
	return 0;
}

struct request {
	uint64_t abi;
	struct str tool, call_id, input, workspace;
};

static int is_key(struct str k, const char *name)
{
	return k.n == strlen(name) && memcmp(k.p, name, k.n) == 0;
}

static const char *decode_request(const char *b, size_t n, struct request *r)
{
	struct cbor d = {(const unsigned char *)b, (const unsigned char *)b + n, NULL};
	int major;
	uint64_t entries;
	unsigned seen = 0;
	memset(r, 0, sizeof *r);
	if (n == 0)
		return "empty message";
	if (n > MAX_MESSAGE)
		return "message is past the 16 MiB limit";
	if (head(&d, &major, &entries))
		return d.err;
	if (major != 5)
		return "the request is not a CBOR map";
	while (entries--) {
		struct str key;
		unsigned bit = 0;
		int rc;
		if (text(&d, &key))
			return d.err;
		if (is_key(key, "abi")) {
			bit = 1;
			rc = head(&d, &major, &r->abi);
			if (!rc && major != 0) {
				d.err = "abi is not an unsigned integer";
				rc = -1;
			}
		} else if (is_key(key, "tool")) {
			bit = 2, rc = text(&d, &r->tool);
		} else if (is_key(key, "call_id")) {
			bit = 4, rc = text(&d, &r->call_id);
		} else if (is_key(key, "input")) {
			bit = 8, rc = text(&d, &r->input);
		} else if (is_key(key, "workspace")) {
			bit = 16, rc = text(&d, &r->workspace);
		} else {
			rc = skip(&d, 1);
		}
		if (rc)
			return d.err;
		if (bit & seen)
			return "a key occurs twice";
		seen |= bit;
	}
	if (d.p != d.end)
		return "bytes follow the request";
	return NULL;
}

/* CBOR encoding, as abi's envelope.go writes it. */
static void put_head(struct buf *b, unsigned major, uint64_t n)
{
	unsigned char h[9];
	int size = 0;
	h[0] = major << 5;
	if (n < 24) {
		h[0] |= n;
	} else if (n <= 0xFF) {
		h[0] |= 24, size = 1;
	} else if (n <= 0xFFFF) {
		h[0] |= 25, size = 2;
	} else if (n <= 0xFFFFFFFFu) {
		h[0] |= 26, size = 4;
	} else {
		h[0] |= 27, size = 8;
	}
	for (int i = 0; i < size; i++)
		h[1 + i] = n >> (8 * (size - 1 - i));
	buf_add(b, h, 1 + size);
}

static void put_text(struct buf *b, const char *s, size_t n)
{
	put_head(b, 3, n);
	buf_add(b, s, n);
}

static void put_key(struct buf *b, const char *k) { put_text(b, k, strlen(k)); }

static void encode_response(struct buf *b, struct buf *out, struct buf *err)
{
	put_head(b, 5, err->n ? 3 : 2);
	put_key(b, "abi");
	put_head(b, 0, ABI_VERSION);
	if (err->n) {
		put_key(b, "error");
		put_text(b, err->p, err->n);
	}
	put_key(b, "output");
	put_text(b, out->p, out->n);
}

struct tool {
	const char *name;
	int (*run)(struct call *c, const char *input, size_t n);
};

static const struct tool tools[] = {
	{"read_file", tool_read_file},
	{"write_file", tool_write_file},
	{"edit_file", tool_edit_file},
	{"list_dir", tool_list_dir},
	{"glob", tool_glob},
	{"grep", tool_grep},
};

#define NTOOLS (sizeof tools / sizeof tools[0])

static void handle(const char *b, size_t n, struct buf *out, struct buf *err)
{
	struct request r;
	const char *derr = decode_request(b, n, &r);
	if (derr) {
		buf_str(err, "decode request: ");
		buf_str(err, derr);
		return;
	}
	if (r.abi > ABI_VERSION) {
		buf_str(err, "decode request: ABI version ");
		buf_int(err, (int64_t)(r.abi > INT64_MAX ? INT64_MAX : r.abi));
		buf_str(err, ", this host speaks 1: built for a newer cairn ABI");
		return;
	}
	if (r.abi < 1) {
		buf_str(err, "decode request: ABI version 0 is not valid (want 1 to 1)");
		return;
	}
	for (size_t i = 0; i < NTOOLS; i++) {
		if (is_key(r.tool, tools[i].name)) {
			struct call c = {r.workspace, out, err};
			if (tools[i].run(&c, r.input.p, r.input.n) != 0)
				out->n = 0;
			return;
		}
	}
	buf_str(err, "this module has no tool ");
	go_quote(err, r.tool.p, r.tool.n);
	buf_str(err, "; it has ");
	for (size_t i = 0; i < NTOOLS; i++) {
		if (i)
			buf_str(err, ", ");
		buf_str(err, tools[i].name);
	}
}

void serve(const char *req, size_t n, struct buf *resp)
{
	struct buf out = {0}, err = {0}, vout = {0}, verr = {0};
	handle(req, n, &out, &err);
	if (out.oom || err.oom) {
		buf_free(&out);
		buf_free(&err);
		out.oom = err.oom = 0;
		buf_str(&err, "the tool ran out of memory");
	}
	valid_text(&vout, out.p, out.n);
	valid_text(&verr, err.p, err.n);
	buf_free(&out);
	buf_free(&err);
	encode_response(resp, &vout, &verr);
	buf_free(&vout);
	buf_free(&verr);
}
