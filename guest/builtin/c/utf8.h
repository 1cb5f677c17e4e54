/* utf8.h: decoding UTF-8 as Go's unicode/utf8 does, shared by the tools,
 * the regex matcher and the glob matcher (which the tests build apart from
 * the rest, so it depends on nothing). */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>
#include <stdint.h>

#define RUNE_ERROR 0xFFFD

/* utf8_decode decodes the rune at s as Go's utf8.DecodeRune does: an
 * invalid or truncated sequence is RUNE_ERROR of width 1, and no bytes
 * (n == 0) RUNE_ERROR of width 0. */
int32_t utf8_decode(const char *s, size_t n, size_t *width);

#endif
