// Package contract defines Docket's wire types, identifiers and error codes: the one
// definition shared by the authority, the gateway, the worker and the agent runtime.
package contract
