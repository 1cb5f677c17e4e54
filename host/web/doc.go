// Package web serves cairn's HTTP API and the web view built on it: the
// agents of a store with their status, conversations, runs, events (live,
// over Server-Sent Events), diffs and approvals, and the actions that
// steer them — approve, deny, resume, pause, snapshot, fork.
//
// Every answer comes from the same host calls the command line makes
// (host.Inspect, host.ReadHistory, host.Pending, Engine.Decide,
// Engine.Resume, Engine.Changes, Engine.Snapshot, Engine.Fork), so the
// API and the CLI cannot disagree. docs/http-api.md describes the routes.
//
// # Safety
//
// A Server holds a token. State-changing requests are POSTs that carry it
// in an "Authorization: Bearer" header (a cookie never authorizes one, so
// another site cannot forge them) and whose Origin, when sent, is the
// server itself; no CORS headers are ever set. A server bound beyond
// loopback wants the token on every request, in the header, or, for a
// read, the cookie its one-time login link sets: that cookie holds a
// random secret of the server's, never the token, because a browser
// sends it to every port of the host. A loopback server refuses a Host
// header that is not a loopback name, so a DNS-rebound page cannot read
// it. A read-only server refuses every state-changing request. Nothing
// the API renders holds an environment value: the store keeps none. A
// request's body must come within Config.BodyTimeout, and one answered
// before its body is read closes its connection rather than wait for it.
//
// A Server is safe for concurrent use. Runs it resumes hold the agent's
// lock like any process; Close pauses them, those still loading their
// agent too, and waits for them to end, and refuses (503) a resume asked
// for once it has begun, so it may be called while requests are in
// flight.
package web
