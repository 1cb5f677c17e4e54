/* utf8.c: see utf8.h. */
#include "utf8.h"

int32_t utf8_decode(const char *str, size_t n, size_t *width)
{
	const unsigned char *s = (const unsigned char *)str;
	if (n == 0) {
		*width = 0;
		return RUNE_ERROR;
	}
	unsigned c = s[0];
	*width = 1;
	if (c < 0x80)
		return c;
	size_t need;
	uint32_t r;
	unsigned lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF) {
		need = 2, r = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 3, r = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;
		if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 4, r = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;
		if (c == 0xF4)
			hi = 0x8F;
	} else {
		return RUNE_ERROR;
	}
	if (n < need || s[1] < lo || s[1] > hi)
		return RUNE_ERROR;
	r = r << 6 | (s[1] & 0x3F);
	for (size_t i = 2; i < need; i++) {
		if (s[i] < 0x80 || s[i] > 0xBF)
			return RUNE_ERROR;
		r = r << 6 | (s[i] & 0x3F);
	}
	*width = need;
	return (int32_t)r;
}
