// Package verifiedcalculation embeds the verified-calculation example of DESIGN.md §9.4
// (its capability and input data), so that `docket demo` runs it from any directory.
package verifiedcalculation

import "embed"

// Files holds capability/ (capability.toml and the rules) and data/input.json.
//
//go:embed capability data
var Files embed.FS
