package pgstore

import (
	neturl "net/url"
	"regexp"
	"strings"
)

// A store is named by a URL (postgres://… or postgresql://…, the scheme
// in any case) or by a key=value connection string, as libpq and pgx read
// them: "host=db.internal port=5432 user=cairn dbname=cairn". A caller
// that also takes a directory (cairn's --store) tells the two apart with
// IsConnString; a string that may hold a password is shown only through
// Redact.

// connKeywords are libpq's connection keywords, and cairn's lease_ttl: a
// key=value connection string starts with one of them.
var connKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "channel_binding": true, "connect_timeout": true, "client_encoding": true,
	"options": true, "application_name": true, "fallback_application_name": true, "keepalives": true,
	"keepalives_idle": true, "keepalives_interval": true, "keepalives_count": true, "tcp_user_timeout": true,
	"replication": true, "gssencmode": true, "sslmode": true, "requiressl": true, "sslcompression": true,
	"sslcert": true, "sslkey": true, "sslpassword": true, "sslcertmode": true, "sslrootcert": true,
	"sslcrl": true, "sslcrldir": true, "sslsni": true, "requirepeer": true, "ssl_min_protocol_version": true,
	"ssl_max_protocol_version": true, "krbsrvname": true, "gsslib": true, "gssdelegation": true,
	"service": true, "target_session_attrs": true, "load_balance_hosts": true, "lease_ttl": true,
}

var leadingKeyword = regexp.MustCompile(`^\s*([a-z_]+)\s*=`)

// IsConnString reports whether s names a PostgreSQL database: a URL of
// scheme postgres or postgresql, in any case, or a key=value connection
// string, which starts with one of libpq's keywords and '=' (host=…,
// dbname=…, user=…). A directory whose name starts so is named as a path
// instead: ./host=….
func IsConnString(s string) bool {
	if isURL(s) {
		return true
	}
	m := leadingKeyword.FindStringSubmatch(s)
	return m != nil && connKeywords[m[1]]
}

// isURL reports whether s starts with postgres:// or postgresql://, in
// any case.
func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// lowerScheme is s with its URL scheme in lower case, as pgx reads it.
func lowerScheme(s string) string {
	if i := strings.Index(s, "://"); i > 0 && isURL(s) {
		return strings.ToLower(s[:i]) + s[i:]
	}
	return s
}

var (
	kvPassword  = regexp.MustCompile(`(password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)
	urlPassword = regexp.MustCompile(`(://[^/@:]*:)[^@/]*@`)
)

// Redact is s with the passwords it may hold masked, for a message: a
// URL's userinfo password and its password and sslpassword parameters, a
// key=value string's password=… and sslpassword=…. A string that is
// neither is masked as both, which leaves a path without them as it is.
func Redact(s string) string {
	if u, err := neturl.Parse(lowerScheme(s)); err == nil && isURL(s) {
		if _, ok := u.User.Password(); ok {
			u.User = neturl.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		for _, k := range []string{"password", "sslpassword"} {
			if q.Has(k) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	s = urlPassword.ReplaceAllString(s, "${1}xxxxx@")
	return kvPassword.ReplaceAllString(s, "${1}xxxxx")
}
