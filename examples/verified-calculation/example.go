// Package verifiedcalculation embeds the verified-calculation example, Docket's reference workflow:
// its capability, input data, worker tool manifest, vault template and scripted-model
// script, so that `docket demo` runs it from any directory.
package verifiedcalculation

import "embed"

// Files holds capability/ (capability.toml and the rules), data/input.json, tools.json
// (the worker's tool manifest), vault.template.json (the worker's Source, with $WORKSPACE
// for the workspace's absolute path) and script.json (the scripted model's turns).
//
//go:embed capability data tools.json vault.template.json script.json
var Files embed.FS
