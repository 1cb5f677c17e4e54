/* json.c: a small JSON reader. It first checks that the input starts with
 * one well-formed value, reporting the first bad byte as encoding/json's
 * scanner does; then it decodes that value into the fields, keeping the
 * first type error or unknown field as encoding/json does. */
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_DEPTH 10000

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* syntax_error writes "invalid character 'c' context". */
static void syntax_error(struct buf *e, unsigned char c, const char *context)
{
	buf_str(e, "invalid character ");
	if (c == '\'') {
		buf_str(e, "'\\''");
	} else if (c == '"') {
		buf_str(e, "'\"'");
	} else {
		struct buf r = {0}, q = {0};
		utf8_encode(&r, c);
		go_quote(&q, r.p, r.n);
		buf_byte(e, '\'');
		buf_add(e, q.p + 1, q.n - 2);
		buf_byte(e, '\'');
		buf_free(&r);
		buf_free(&q);
	}
	buf_byte(e, ' ');
	buf_str(e, context);
}

struct scan {
	const char *s;
	size_t n, i;
	struct buf *e;
};

#define EOF_ERR(sc) (buf_str((sc)->e, "unexpected EOF"), -1)
#define BAD(sc, ctx) (syntax_error((sc)->e, (unsigned char)(sc)->s[(sc)->i], ctx), -1)

static int scan_string(struct scan *sc)
{
	sc->i++; /* the opening quote */
	for (;;) {
		if (sc->i >= sc->n)
			return EOF_ERR(sc);
		unsigned char c = sc->s[sc->i];
		if (c == '"') {
			sc->i++;
			return 0;
		}
		if (c < 0x20)
			return BAD(sc, "in string literal");
		if (c != '\\') {
			sc->i++;
			continue;
		}
		if (++sc->i >= sc->n)
			return EOF_ERR(sc);
		c = sc->s[sc->i];
		if (strchr("\"\\/bfnrt", c) && c) {
			sc->i++;
			continue;
		}
		if (c != 'u')
			return BAD(sc, "in string escape code");
		sc->i++;
		for (int k = 0; k < 4; k++, sc->i++) {
			if (sc->i >= sc->n)
				return EOF_ERR(sc);
			if (!is_hex(sc->s[sc->i]))
				return BAD(sc, "in \\u hexadecimal character escape");
		}
	}
}

/* scan_number scans a number; at the end of the input a number is whole
 * only at the top level. */
static int scan_number(struct scan *sc, int top)
{
	if (sc->s[sc->i] == '-') {
		if (++sc->i >= sc->n)
			return EOF_ERR(sc);
		if (!is_digit(sc->s[sc->i]))
			return BAD(sc, "in numeric literal");
	}
	if (sc->s[sc->i] == '0') {
		sc->i++;
	} else {
		while (sc->i < sc->n && is_digit(sc->s[sc->i]))
			sc->i++;
	}
	if (sc->i < sc->n && sc->s[sc->i] == '.') {
		if (++sc->i >= sc->n)
			return EOF_ERR(sc);
		if (!is_digit(sc->s[sc->i]))
			return BAD(sc, "after decimal point in numeric literal");
		while (sc->i < sc->n && is_digit(sc->s[sc->i]))
			sc->i++;
	}
	if (sc->i < sc->n && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
		if (++sc->i >= sc->n)
			return EOF_ERR(sc);
		if (sc->s[sc->i] == '+' || sc->s[sc->i] == '-')
			if (++sc->i >= sc->n)
				return EOF_ERR(sc);
		if (!is_digit(sc->s[sc->i]))
			return BAD(sc, "in exponent of numeric literal");
		while (sc->i < sc->n && is_digit(sc->s[sc->i]))
			sc->i++;
	}
	if (sc->i >= sc->n && !top)
		return EOF_ERR(sc);
	return 0;
}

static int scan_literal(struct scan *sc, const char *word)
{
	static char ctx[48];
	for (size_t k = 1; word[k]; k++) {
		if (++sc->i >= sc->n)
			return EOF_ERR(sc);
		if (sc->s[sc->i] != word[k]) {
			strcpy(ctx, "in literal ");
			strcat(ctx, word);
			strcat(ctx, " (expecting ' ')");
			ctx[strlen(ctx) - 3] = word[k];
			return BAD(sc, ctx);
		}
	}
	sc->i++;
	return 0;
}

/* scan_value checks one value at sc->i, iteratively: stack holds 'o' or
 * 'a' for each object or array open. */
static int scan_value(struct scan *sc)
{
	char *stack = NULL;
	size_t depth = 0;
	int rc = -1;
	enum { VALUE, KEY_OR_END, KEY, AFTER_VALUE } want = VALUE;
	for (;;) {
		while (sc->i < sc->n && is_space(sc->s[sc->i]))
			sc->i++;
		if (sc->i >= sc->n) {
			EOF_ERR(sc);
			goto out;
		}
		char c = sc->s[sc->i];
		switch (want) {
		case VALUE:
			if (c == '{' || c == '[') {
				if (depth >= MAX_DEPTH) {
					buf_str(sc->e, "exceeded max depth");
					goto out;
				}
				char *p = realloc(stack, depth + 1);
				if (!p) {
					buf_str(sc->e, "out of memory");
					goto out;
				}
				stack = p;
				stack[depth++] = c == '{' ? 'o' : 'a';
				sc->i++;
				if (c == '{') {
					want = KEY_OR_END;
					continue;
				}
				/* An empty array? */
				while (sc->i < sc->n && is_space(sc->s[sc->i]))
					sc->i++;
				if (sc->i < sc->n && sc->s[sc->i] == ']') {
					sc->i++;
					depth--;
					want = AFTER_VALUE;
				}
				continue;
			}
			if (c == '"') {
				if (scan_string(sc))
					goto out;
			} else if (c == '-' || is_digit(c)) {
				if (scan_number(sc, depth == 0))
					goto out;
			} else if (c == 't') {
				if (scan_literal(sc, "true"))
					goto out;
			} else if (c == 'f') {
				if (scan_literal(sc, "false"))
					goto out;
			} else if (c == 'n') {
				if (scan_literal(sc, "null"))
					goto out;
			} else {
				BAD(sc, "looking for beginning of value");
				goto out;
			}
			want = AFTER_VALUE;
			break;
		case KEY_OR_END:
		case KEY:
			if (c == '}' && want == KEY_OR_END) {
				sc->i++;
				depth--;
				want = AFTER_VALUE;
				break;
			}
			if (c != '"') {
				BAD(sc, "looking for beginning of object key string");
				goto out;
			}
			if (scan_string(sc))
				goto out;
			while (sc->i < sc->n && is_space(sc->s[sc->i]))
				sc->i++;
			if (sc->i >= sc->n) {
				EOF_ERR(sc);
				goto out;
			}
			if (sc->s[sc->i] != ':') {
				BAD(sc, "after object key");
				goto out;
			}
			sc->i++;
			want = VALUE;
			break;
		case AFTER_VALUE:
			break;
		}
		/* After a value: close what it ends, up to the next one. */
		while (want == AFTER_VALUE) {
			if (depth == 0) {
				rc = 0;
				goto out;
			}
			while (sc->i < sc->n && is_space(sc->s[sc->i]))
				sc->i++;
			if (sc->i >= sc->n) {
				EOF_ERR(sc);
				goto out;
			}
			c = sc->s[sc->i];
			int obj = stack[depth - 1] == 'o';
			if (c == ',') {
				sc->i++;
				want = obj ? KEY : VALUE;
			} else if (c == (obj ? '}' : ']')) {
				sc->i++;
				depth--;
			} else {
				BAD(sc, obj ? "after object key:value pair" : "after array element");
				goto out;
			}
		}
	}
out:
	free(stack);
	return rc;
}

/* The decoding pass, over text the scan accepted. */

struct dec {
	const char *s;
	size_t n, i;
	struct buf saved; /* the first type error or unknown field */
	const char *type;
};

static void ws(struct dec *d)
{
	while (d->i < d->n && is_space(d->s[d->i]))
		d->i++;
}

/* skip_value skips a value known to be well-formed. */
static void skip_value(struct dec *d)
{
	size_t depth = 0;
	do {
		ws(d);
		char c = d->s[d->i];
		if (c == '"') {
			d->i++;
			while (d->s[d->i] != '"')
				d->i += d->s[d->i] == '\\' ? 2 : 1;
			d->i++;
		} else if (c == '{' || c == '[') {
			depth++;
			d->i++;
		} else if (c == '}' || c == ']') {
			depth--;
			d->i++;
		} else if (c == ',' || c == ':') {
			d->i++;
		} else {
			while (d->i < d->n && !is_space(d->s[d->i]) && !strchr(",:]}", d->s[d->i]))
				d->i++;
		}
		if (depth)
			ws(d);
	} while (depth > 0);
}

static int hexval(char c)
{
	if (c <= '9')
		return c - '0';
	return (c | 0x20) - 'a' + 10;
}

static int32_t hex4(const char *p)
{
	return hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]);
}

/* unquote decodes the string at d->i into out, as encoding/json does:
 * surrogate pairs joined, a lone surrogate and each invalid byte made
 * U+FFFD. */
static void unquote(struct dec *d, struct buf *out)
{
	d->i++;
	for (;;) {
		char c = d->s[d->i];
		if (c == '"') {
			d->i++;
			return;
		}
		if (c != '\\') {
			size_t w;
			int32_t r = utf8_decode(d->s + d->i, d->n - d->i, &w);
			if (r == 0xFFFD && w == 1)
				utf8_encode(out, 0xFFFD);
			else
				buf_add(out, d->s + d->i, w);
			d->i += w;
			continue;
		}
		c = d->s[d->i + 1];
		d->i += 2;
		switch (c) {
		case 'b': buf_byte(out, '\b'); continue;
		case 'f': buf_byte(out, '\f'); continue;
		case 'n': buf_byte(out, '\n'); continue;
		case 'r': buf_byte(out, '\r'); continue;
		case 't': buf_byte(out, '\t'); continue;
		case 'u': break;
		default: buf_byte(out, c); continue;
		}
		int32_t r = hex4(d->s + d->i);
		d->i += 4;
		if (r >= 0xD800 && r < 0xDC00 && d->s[d->i] == '\\' && d->s[d->i + 1] == 'u') {
			int32_t r2 = hex4(d->s + d->i + 2);
			if (r2 >= 0xDC00 && r2 < 0xE000) {
				d->i += 6;
				utf8_encode(out, 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00));
				continue;
			}
		}
		utf8_encode(out, r); /* a lone surrogate is made U+FFFD */
	}
}

static const char *kind_name(enum jkind k)
{
	return k == J_STRING ? "string" : k == J_INT ? "int" : "bool";
}

static void type_error(struct dec *d, const char *value, const char *field, enum jkind k)
{
	if (d->saved.n)
		return;
	buf_str(&d->saved, "json: cannot unmarshal ");
	buf_str(&d->saved, value);
	buf_str(&d->saved, " into Go struct field ");
	buf_str(&d->saved, d->type);
	buf_byte(&d->saved, '.');
	buf_str(&d->saved, field);
	buf_str(&d->saved, " of type ");
	buf_str(&d->saved, kind_name(k));
}

/* parse_int parses a JSON number as strconv.ParseInt(s, 10, 64). */
static int parse_int(const char *s, size_t n, int64_t *v)
{
	size_t i = 0;
	int neg = 0;
	uint64_t u = 0;
	if (n && s[0] == '-')
		neg = 1, i = 1;
	if (i == n)
		return -1;
	for (; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		if (u > (UINT64_MAX - 9) / 10)
			return -1;
		u = u * 10 + (s[i] - '0');
	}
	if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
		return -1;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

/* fold folds a key as encoding/json's foldName does, for matching
 * against ASCII names: ASCII letters upper-cased, and the two runes whose
 * fold set holds an ASCII letter (U+017F, U+212A) made that letter. */
static void fold(struct buf *out, const char *s, size_t n)
{
	size_t i = 0, w;
	while (i < n) {
		unsigned char c = s[i];
		if (c < 0x80) {
			buf_byte(out, c >= 'a' && c <= 'z' ? c - 32 : c);
			i++;
			continue;
		}
		int32_t r = utf8_decode(s + i, n - i, &w);
		if (r == 0x17F)
			buf_byte(out, 'S');
		else if (r == 0x212A)
			buf_byte(out, 'K');
		else
			buf_add(out, s + i, w);
		i += w;
	}
}

static struct jfield *find_field(struct jfield *f, int nf, struct buf *key)
{
	for (int k = 0; k < nf; k++)
		if (strlen(f[k].name) == key->n && memcmp(f[k].name, key->p, key->n) == 0)
			return &f[k];
	struct buf fk = {0}, fn = {0};
	struct jfield *hit = NULL;
	fold(&fk, key->p, key->n);
	for (int k = 0; k < nf && !hit; k++) {
		fn.n = 0;
		fold(&fn, f[k].name, strlen(f[k].name));
		if (fn.n == fk.n && memcmp(fn.p, fk.p, fk.n) == 0)
			hit = &f[k];
	}
	buf_free(&fk);
	buf_free(&fn);
	return hit;
}

static void decode_field(struct dec *d, struct jfield *f)
{
	ws(d);
	char c = d->s[d->i];
	if (c == 'n') { /* null leaves the field as it was */
		d->i += 4;
		return;
	}
	if (c == '{' || c == '[') {
		type_error(d, c == '{' ? "object" : "array", f->name, f->kind);
		skip_value(d);
		return;
	}
	if (c == '"') {
		if (f->kind != J_STRING) {
			type_error(d, "string", f->name, f->kind);
			skip_value(d);
			return;
		}
		struct buf *b = f->dst;
		b->n = 0;
		unquote(d, b);
		return;
	}
	if (c == 't' || c == 'f') {
		if (f->kind != J_BOOL)
			type_error(d, "bool", f->name, f->kind);
		else
			*(int *)f->dst = c == 't';
		d->i += c == 't' ? 4 : 5;
		return;
	}
	size_t start = d->i;
	skip_value(d);
	if (f->kind != J_INT) {
		type_error(d, "number", f->name, f->kind);
		return;
	}
	int64_t v;
	if (parse_int(d->s + start, d->i - start, &v)) {
		struct buf val = {0};
		buf_str(&val, "number ");
		buf_add(&val, d->s + start, d->i - start);
		buf_byte(&val, 0);
		type_error(d, val.oom ? "number" : val.p, f->name, f->kind);
		buf_free(&val);
		return;
	}
	*(int64_t *)f->dst = v;
}

static void decode_object(struct dec *d, struct jfield *f, int nf)
{
	struct buf key = {0};
	d->i++; /* { */
	for (;;) {
		ws(d);
		if (d->s[d->i] == '}') {
			d->i++;
			break;
		}
		if (d->s[d->i] == ',') {
			d->i++;
			ws(d);
		}
		key.n = 0;
		unquote(d, &key);
		ws(d);
		d->i++; /* : */
		struct jfield *hit = find_field(f, nf, &key);
		if (hit) {
			decode_field(d, hit);
		} else {
			if (!d->saved.n) {
				buf_str(&d->saved, "json: unknown field ");
				go_quote(&d->saved, key.p, key.n);
			}
			skip_value(d);
		}
	}
	buf_free(&key);
}

/* only_space tells whether s is empty once trimmed as strings.TrimSpace
 * trims: of the runes unicode.IsSpace accepts. */
static int only_space(const char *s, size_t n)
{
	size_t i = 0, w;
	while (i < n) {
		int32_t r = utf8_decode(s + i, n - i, &w);
		int space = (r >= '\t' && r <= '\r') || r == ' ' || r == 0x85 || r == 0xA0 ||
			    r == 0x1680 || (r >= 0x2000 && r <= 0x200A) || r == 0x2028 ||
			    r == 0x2029 || r == 0x202F || r == 0x205F || r == 0x3000;
		if (!space)
			return 0;
		i += w;
	}
	return 1;
}

int json_decode(const char *tool, const char *type, const char *input, size_t n,
		struct jfield *fields, int nfields, struct buf *err)
{
	struct buf e = {0};
	struct scan sc = {input, n, 0, &e};
	if (only_space(input, n)) {
		input = "{}";
		n = 2;
		sc.s = input;
		sc.n = n;
	}
	if (scan_value(&sc) == 0) {
		struct dec d = {input, sc.i, 0, {0}, type};
		ws(&d);
		char c = input[d.i];
		if (c == '{') {
			decode_object(&d, fields, nfields);
		} else if (c != 'n') {
			buf_str(&d.saved, "json: cannot unmarshal ");
			buf_str(&d.saved, c == '[' ? "array" : c == '"' ? "string" : (c == 't' || c == 'f') ? "bool" : "number");
			buf_str(&d.saved, " into Go value of type tools.");
			buf_str(&d.saved, type);
		}
		e = d.saved;
	}
	if (e.n == 0 && !e.oom) {
		buf_free(&e);
		return 0;
	}
	buf_str(err, "invalid arguments for ");
	buf_str(err, tool);
	buf_str(err, ": ");
	buf_add(err, e.p, e.n);
	buf_free(&e);
	return -1;
}
