// Package authority provides Docket's authority: identities (members, sessions, agents,
// connections), the credentials that prove them, capability releases and installs, sources,
// tool locks and the project Boards kept in step with the store and its event log.
package authority
