/* glob.c: a placeholder until doublestar matching lands: '*' within a
 * segment, "**" across segments. */
#include "glob.h"

int glob_valid(const char *pat, size_t n)
{
	(void)pat, (void)n;
	return 1;
}

int glob_match(const char *p, size_t pn, const char *s, size_t n)
{
	if (pn == 0)
		return n == 0;
	if (pn >= 2 && p[0] == '*' && p[1] == '*') {
		size_t rest = pn >= 3 && p[2] == '/' ? 3 : 2;
		for (size_t i = 0; i <= n; i++)
			if ((i == 0 || s[i - 1] == '/') && glob_match(p + rest, pn - rest, s + i, n - i))
				return 1;
		return 0;
	}
	if (p[0] == '*') {
		for (size_t i = 0; i <= n; i++) {
			if (glob_match(p + 1, pn - 1, s + i, n - i))
				return 1;
			if (i < n && s[i] == '/')
				return 0;
		}
		return 0;
	}
	return n > 0 && (p[0] == '?' ? s[0] != '/' : p[0] == s[0]) && glob_match(p + 1, pn - 1, s + 1, n - 1);
}
