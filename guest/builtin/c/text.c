/* text.c: byte buffers and the UTF-8 and quoting rules of Go's standard
 * library that the tools' texts follow. */
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "isprint.h"

void buf_grow(struct buf *b, size_t more)
{
	if (b->oom || b->cap - b->n >= more)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap - b->n < more) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void buf_add(struct buf *b, const void *s, size_t n)
{
	if (n == 0)
		return;
	buf_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

void buf_str(struct buf *b, const char *s) { buf_add(b, s, strlen(s)); }

void buf_byte(struct buf *b, char c) { buf_add(b, &c, 1); }

void buf_int(struct buf *b, int64_t v)
{
	char d[24];
	int i = sizeof d;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do {
		d[--i] = '0' + u % 10;
		u /= 10;
	} while (u);
	if (v < 0)
		d[--i] = '-';
	buf_add(b, d + i, sizeof d - i);
}

void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

int utf8_valid(const char *s, size_t n)
{
	size_t i = 0, w;
	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if (utf8_decode(s + i, n - i, &w) == 0xFFFD && w == 1)
			return 0;
		i += w;
	}
	return 1;
}

void utf8_encode(struct buf *b, int32_t r)
{
	char s[4];
	if (r < 0 || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF))
		r = 0xFFFD;
	if (r < 0x80) {
		buf_byte(b, (char)r);
	} else if (r < 0x800) {
		s[0] = 0xC0 | r >> 6, s[1] = 0x80 | (r & 0x3F);
		buf_add(b, s, 2);
	} else if (r < 0x10000) {
		s[0] = 0xE0 | r >> 12, s[1] = 0x80 | (r >> 6 & 0x3F), s[2] = 0x80 | (r & 0x3F);
		buf_add(b, s, 3);
	} else {
		s[0] = 0xF0 | r >> 18, s[1] = 0x80 | (r >> 12 & 0x3F);
		s[2] = 0x80 | (r >> 6 & 0x3F), s[3] = 0x80 | (r & 0x3F);
		buf_add(b, s, 4);
	}
}

void valid_text(struct buf *out, const char *s, size_t n)
{
	size_t i = 0, start = 0, w;
	int invalid = 0;
	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			invalid = 0;
			continue;
		}
		if (utf8_decode(s + i, n - i, &w) == 0xFFFD && w == 1) {
			buf_add(out, s + start, i - start);
			if (!invalid)
				buf_add(out, "\xEF\xBF\xBD", 3);
			invalid = 1;
			start = ++i;
			continue;
		}
		invalid = 0;
		i += w;
	}
	buf_add(out, s + start, n - start);
}

int go_isprint(int32_t r)
{
	if (r < 0x20)
		return 0;
	if (r < 0x7F)
		return 1;
	/* isprint_ranges holds the inclusive ranges of strconv.IsPrint. */
	size_t lo = 0, hi = sizeof isprint_ranges / sizeof isprint_ranges[0];
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if ((uint32_t)r < isprint_ranges[m][0])
			hi = m;
		else if ((uint32_t)r > isprint_ranges[m][1])
			lo = m + 1;
		else
			return 1;
	}
	return 0;
}

static const char hexdig[] = "0123456789abcdef";

static void hex(struct buf *out, const char *prefix, uint32_t v, int digits)
{
	buf_str(out, prefix);
	for (int s = (digits - 1) * 4; s >= 0; s -= 4)
		buf_byte(out, hexdig[v >> s & 0xF]);
}

void go_quote(struct buf *out, const char *s, size_t n)
{
	size_t i = 0, w;
	buf_byte(out, '"');
	while (i < n) {
		int32_t r = utf8_decode(s + i, n - i, &w);
		if (r == 0xFFFD && w == 1) {
			hex(out, "\\x", (unsigned char)s[i], 2);
			i++;
			continue;
		}
		if (r == '"' || r == '\\') {
			buf_byte(out, '\\');
			buf_byte(out, (char)r);
		} else if (go_isprint(r)) {
			buf_add(out, s + i, w);
		} else {
			switch (r) {
			case '\a': buf_str(out, "\\a"); break;
			case '\b': buf_str(out, "\\b"); break;
			case '\f': buf_str(out, "\\f"); break;
			case '\n': buf_str(out, "\\n"); break;
			case '\r': buf_str(out, "\\r"); break;
			case '\t': buf_str(out, "\\t"); break;
			case '\v': buf_str(out, "\\v"); break;
			default:
				if (r < ' ' || r == 0x7F)
					hex(out, "\\x", (uint32_t)r, 2);
				else if (r < 0x10000)
					hex(out, "\\u", (uint32_t)r, 4);
				else
					hex(out, "\\U", (uint32_t)r, 8);
			}
		}
		i += w;
	}
	buf_byte(out, '"');
}
