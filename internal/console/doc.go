// Package console provides Docket's REST API, all of /api/v1, the console's
// server-rendered pages at / for the members who see and decide, and the security of its
// loopback web listener: Host checks, cross-origin refusal, session cookies with CSRF
// tokens and a strict Content-Security-Policy.
package console
