package netguard

import (
	"net/http"
	"sort"
	"strings"
)

// methodOverrideHeaders are the request headers by which a client asks a
// server to take a request as another method (a POST taken as a DELETE,
// a GET as a POST), as many frameworks and APIs honour them.
var methodOverrideHeaders = map[string]bool{
	"X-Http-Method-Override": true,
	"X-Http-Method":          true,
	"X-Method-Override":      true,
}

// MethodOverride is one value of a request's method override header:
// Header as the request named it, Method the method it asks for, in
// upper case and as RecordedMethod keeps it.
type MethodOverride struct {
	Header string
	Method string
}

// MethodOverrides lists the methods h asks the server to take its
// request as, by X-HTTP-Method-Override, X-HTTP-Method or
// X-Method-Override in any letter case, and with "_" for "-" (a server
// that reads headers by their CGI names, HTTP_X_HTTP_METHOD_OVERRIDE, as
// WSGI, Rack and PHP do, takes the two alike), in the order of their
// names. A request is as safe to repeat, and as granted, as the stricter
// of its method and these.
func MethodOverrides(h map[string][]string) []MethodOverride {
	var out []MethodOverride
	for k, vs := range h {
		if !methodOverrideHeaders[http.CanonicalHeaderKey(strings.ReplaceAll(k, "_", "-"))] {
			continue
		}
		for _, v := range vs {
			if m := strings.ToUpper(strings.TrimSpace(v)); m != "" {
				out = append(out, MethodOverride{Header: k, Method: RecordedMethod(m)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Header < out[j].Header })
	return out
}
