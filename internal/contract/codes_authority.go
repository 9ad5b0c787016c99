package contract

// Error codes of the authority's identities and the console API.
const (
	CodeUnauthenticated    Code = "unauthenticated"      // no credential, or one that proves nothing
	CodeCredentialRevoked  Code = "credential_revoked"   // the token or key was revoked
	CodeSessionExpired     Code = "session_expired"      // the session is past its expiry
	CodeRateLimited        Code = "rate_limited"         // too many logins; Retry-After says when to try again
	CodeForbidden          Code = "forbidden"            // the principal may not do this
	CodeMemberOnly         Code = "member_only"          // a delegate asked for what only its member may do
	CodeConsentRequired    Code = "consent_required"     // a delegate asked for what needs its member's consent, on a server that keeps no cards
	CodeNotFound           Code = "not_found"            // the named record does not exist
	CodeAlreadyExists      Code = "already_exists"       // a name, id or version already in use
	CodeBodyTooLarge       Code = "body_too_large"       // the request body is over the limit
	CodeUnsupportedMedia   Code = "unsupported_media"    // the request body is not JSON
	CodeHostNotAllowed     Code = "host_not_allowed"     // the Host header is not this listener (DNS rebinding)
	CodeCrossOrigin        Code = "cross_origin"         // a state-changing request from another origin
	CodeCSRF               Code = "csrf_token"           // a cookie-authenticated write without the CSRF token
	CodeInternal           Code = "internal"             // the authority failed; the cause is in its log
	CodeUnavailable        Code = "unavailable"          // the authority is shutting down or its store is closed
	CodeEventChainBroken   Code = "event_chain_broken"   // events verify found a broken link
	CodeReleaseConflict    Code = "release_conflict"     // the same capability version with other content
	CodeCapabilityNotFound Code = "capability_not_found" // a capability directory or file is missing
	CodeBundleUntrusted    Code = "bundle_untrusted"     // a bundle holds only under the keys it carries, which prove nothing about who made it
)
