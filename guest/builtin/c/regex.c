/* regex.c: a placeholder until the RE2-syntax engine lands: a pattern
 * matches where it occurs literally. */
#include <stdlib.h>
#include <string.h>

#include "regex.h"

struct re {
	size_t n;
	char p[];
};

int re_compile(struct re **out, const char *pat, size_t n, int icase, char *err, size_t errlen)
{
	(void)icase, (void)err, (void)errlen;
	struct re *re = malloc(sizeof *re + n + 1);
	if (!re)
		return -1;
	re->n = n;
	memcpy(re->p, pat, n);
	*out = re;
	return 0;
}

int re_match(const struct re *re, const char *s, size_t n)
{
	if (re->n == 0)
		return 1;
	for (size_t i = 0; i + re->n <= n; i++)
		if (memcmp(s + i, re->p, re->n) == 0)
			return 1;
	return 0;
}

void re_free(struct re *re) { free(re); }
