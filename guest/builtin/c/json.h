/* json.h: decoding a tool's JSON input into its fields, as the guest
 * package's strict decoding (encoding/json with unknown fields refused)
 * does, with the same error texts. */
#ifndef CAIRN_JSON_H
#define CAIRN_JSON_H

#include <stdint.h>

#include "cairn.h"

enum jkind { J_STRING, J_INT, J_BOOL };

struct jfield {
	const char *name; /* the json tag */
	enum jkind kind;
	void *dst; /* struct buf *, int64_t * or int * */
};

/* json_decode decodes the n bytes of input into fields. Given the Go
 * type's name (say "readIn"), it returns 0, or -1 with "invalid arguments
 * for TOOL: ..." appended to err. */
int json_decode(const char *tool, const char *type, const char *input, size_t n,
		struct jfield *fields, int nfields, struct buf *err);

#endif
