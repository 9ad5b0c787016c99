// Package capability reads capability packages: it decodes and validates capability.toml
// and the *.dl rule files beside it, converts them into board declarations, and computes
// the release digest.
//
// # Layout
//
// A capability is a directory, or a .tar.gz of one, holding capability.toml and any number
// of *.dl rule files (see package syntax) at its top level. Other files (a README, say) are
// neither read nor digested. A tarball may wrap everything in one top-level directory.
//
// # capability.toml
//
// Keys are snake_case, and decoding is strict: an unknown key is a problem, named with its
// line. Every problem found is reported at once, each with file:line where it can be found.
//
//	id          = "docket.verified-calculation" # lower case, digits, . _ -; starts with a letter
//	version     = "1.0.0"                       # MAJOR.MINOR.PATCH, optionally -prerelease
//	title       = "Verified calculation"        # required
//	description = "…"                           # optional
//
//	[[source]]                  # a Source the capability needs
//	name  = "workspace"         # a name, unique in the package
//	type  = "file"              # file | http | db | mcp
//	words = ["calculation_input", "output_file"] # predicates its facts may carry
//	tier  = "attested"          # the tier its facts take; default attested
//
//	[[case_type]]               # a Case Type and its contract
//	name        = "verified_calculation"
//	title       = "…"           # optional
//	description = "…"           # optional
//	key         = { predicate = "calculation_input", args = ["job_id"] } # business key
//	opening       = "calculation_input"    # must hold, at opening_floor, before the Case opens
//	opening_floor = "attested"
//	acceptance    = "calculation_verified" # must be derived by a rule of the package
//	minimum_grounding_floor = "attested"   # the acceptance floor
//	once_per_case = ["write_result"]       # terminal Actions that succeed at most once
//	direct_actions = true                  # its Cases take the direct Actions of locked Tools
//
// A Case Type named "exploration" is the exploration type: its key, opening and acceptance
// may be left out, and its Cases may hold Case-local predicates, rules, Actions and goals.
// The key predicate and the opening predicate must be producible (a Source word, a rule
// head, an Action effect or an execution's returns); the acceptance predicate must be the
// head of a rule, and every such rule head, like every returns mapping of the opening
// predicate, must carry the key arguments.
//
//	[[action]]
//	name        = "write_result"
//	description = "…"           # required: the model reads it
//	approval    = "person"      # none | person | a delegation class name; default person
//	preconditions = ["calculation_result(job_id: ?job_id, total: ?total)"] # literals; may use not
//	bindings      = { total = "?total" }        # param = variable bound by a precondition
//	effects       = ["result_written(job_id: ?job_id)", "~pending(job_id: ?job_id)"]
//
//	[[action.param]]
//	name        = "job_id"
//	type        = "string"      # string | integer | number | boolean
//	description = "…"
//	optional    = false
//
//	[action.execution]          # optional; without it the Action is Board-only
//	tool         = "docket.workspace.write_json@1" # vendor.name@N
//	source_types = ["file"]     # each must be the type of a [[source]]
//	source       = "workspace"  # optional: the [[source]] it runs against; default the only one of its types
//	kind         = "write"      # read | write | run
//	returns      = [{ predicate = "output_file", args = { job_id = "$job_id", total = "$total" } }]
//
// Preconditions, effects and bindings name a parameter as the variable of the same name
// (?job_id). A precondition may bind new variables; a variable of a not literal, of an
// effect or of a binding must be a parameter or bound by a positive precondition, and a
// binding's variable must come from a positive precondition (a trusted premise), since the
// model never passes a bound parameter. An effect written ~p(...) consumes the matching
// fact. A returns mapping names a predicate that is a word of a Source of one of the
// execution's source_types; each argument is "$column" (a column of the Tool's rows) or a
// constant string. A Board-only Action must have effects.
//
// # Rules
//
// Rule files hold rules only (facts come from Sources and agents). Each rule must be
// range-restricted; its id is the capability id, '/', and its syntax id, so that two
// capabilities never collide. Rules take tier verified on the Board: a derived fact is as
// strong as its weakest premise.
//
// # Releases
//
// [Digest] is the sha256 over a canonical encoding of the package's content: the digested
// files sorted by name, each as its name, its length and its bytes with CRLF line endings
// turned into LF. It is the same on every machine and for a directory and its tarball.
package capability
