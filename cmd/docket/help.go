package main

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"
)

// examples are the examples each command's --help ends with, keyed by the command's path
// below docket. A command whose own Help method has examples (ops, why, doctor, case list,
// case show, events tail) is not listed; TestHelp_EveryCommandHasExamples checks them all.
var examples = map[string][]string{
	"":      {"docket start                  serve, a worker and the Agents' runtimes, until Ctrl-C", "docket demo                   the verified calculation end to end", "docket ops --waiting          what waits, and why", "docket help case show"},
	"demo":  {"docket demo", "docket demo --approve         the write waits for a person's decision", "docket demo --keep ./d        keep the data dir to look at afterwards"},
	"start": {"docket start                  the same URL as last time", "docket start --listen 127.0.0.1:7421", "docket start --rotate-key     a new run key: the old URL stops working"},
	"stop":  {"docket stop", "docket stop --wait 10s"},
	"init":  {"DOCKET_PASSPHRASE='correct horse battery' docket init --member ada", "docket init --member ada --passphrase-file pass.txt --db postgres://localhost/docket"},
	"serve": {"docket serve", "docket serve --listen 127.0.0.1:0 --log-level debug",
		"docket serve --listen 0.0.0.0:7420 --tls-cert ~/.docket/tls/server.pem --tls-key ~/.docket/tls/server.key --host docket.example.com",
		"docket serve --listen 10.0.0.2:7420 --behind-proxy 10.0.0.1 --host docket.example.com    behind Caddy (docs/deploy.md)"},
	"cert":    {"docket cert --host docket.example.com", "docket cert --host docket.example.com,10.0.0.2 --dir ./tls"},
	"backup":  {"docket backup --out /backups/docket-$(date +%F).db    while serve runs"},
	"restore": {"docket restore --data-dir ./restored docket-2026-12-02.db    after copying key and signing.key into ./restored"},
	"worker":  {"DOCKET_CONNECTION_KEY=dkt_con_… docket worker --manifest tools.json --vault vault.json    runs it (docket worker run --help: its flags)", "docket worker --manifest tools.json --print-tools", "docket worker mcp add files -- npx -y @modelcontextprotocol/server-filesystem /srv/docs", "docket worker tools discover --source files"},
	"worker run": {"DOCKET_CONNECTION_KEY=dkt_con_… docket worker run --manifest tools.json --vault vault.json --key-file con.key", "docket worker --manifest tools.json --print-tools",
		"docket worker --url https://a.example:7420,https://b.example:7420 --manifest tools.json --vault vault.json --key-file con.key    several serves over one PostgreSQL"},
	"worker mcp":   {"docket worker mcp add files -- npx -y @modelcontextprotocol/server-filesystem /srv/docs", "docket worker mcp add tracker --url https://mcp.example.com/mcp --header Authorization"},
	"worker tools": {"docket worker tools discover --source files", "docket worker tools discover --source files --add read_text_file --kind read"},
	"doctor":       {"docket doctor", "docket doctor --wait 10s", "docket doctor --vault vault.json    on the worker's machine: is every bound Source in the vault?"},
	"login": {"docket login --member ada", "docket login --member ada --passphrase-file pass.txt",
		"docket login --url https://docket.example.com:7420 --ca ca.pem --member ada    from another machine"},
	"logout":       {"docket logout"},
	"agent":        {"docket agent create calc", "docket agent list"},
	"agent create": {"docket agent create calc", "docket agent create boss --kind orchestrator -o json"},
	"agent token":  {"docket agent token calc"},
	"agent list":   {"docket agent list", "docket agent list -o json"},
	"agent revoke": {"docket agent revoke calc"},
	"agent run": {"DOCKET_AGENT_TOKEN=dkt_agt_… docket agent run --provider anthropic --model claude-sonnet-4-5 'Verify job calc-001.'",
		"docket agent run --token-file calc.token --wait 10m -o json 'Verify job calc-001.'   # exit 6 if still pending after 10m",
		"docket agent run --case-type verified_calculation --key job_id=calc-001 'Verify the job.'   # pinned like task post; closedCases reported",
		"docket agent run --model-url https://api.deepseek.com/chat/completions --model deepseek-reasoner --thinking on --model-attempts 8 'Verify job calc-001.'"},
	"agent chat": {"DOCKET_AGENT_TOKEN=dkt_agt_… docket agent chat --provider openai --model gpt-4.1"},
	"agent serve": {"DOCKET_AGENT_TOKEN=dkt_agt_… docket agent serve --provider anthropic    takes the Agent's tasks by long-poll",
		"docket agent serve --url https://a.example:7420/mcp,https://b.example:7420/mcp --token-file calc.token --provider anthropic    several serves over one PostgreSQL"},
	"task": {"docket task post --agent calc 'Verify job calc-001.'", "docket task list", "docket task show t-0123456789abcdef"},
	"task post": {"docket task post --agent calc 'Verify job calc-001.'",
		"docket task post --agent calc --case-type verified_calculation --key job_id=calc-001 'Verify the job.'   # pinned: other Cases are refused",
		"docket task post --agent calc --conversation c-1 --case case_0123 --client-key nightly-2026-12-01 'Check it again.'"},
	"task message":           {"docket task message --agent calc --conversation c-0123456789abcdef 'Use the second input file.'"},
	"task list":              {"docket task list", "docket task list --agent calc -o json"},
	"task show":              {"docket task show t-0123456789abcdef", "docket task show t-0123456789abcdef -o json"},
	"connection":             {"docket connection create laptop", "docket connection list"},
	"connection create":      {"docket connection create laptop"},
	"connection list":        {"docket connection list"},
	"connection revoke":      {"docket connection revoke laptop"},
	"source":                 {"docket source bind --connection laptop --name workspace --type file --words calculation_input,output_file"},
	"source bind":            {"docket source bind --connection laptop --name workspace --type file --words calculation_input,output_file"},
	"source list":            {"docket source list --connection laptop"},
	"tool":                   {"docket tool lock --connection laptop --tool docket.workspace.read_json@1", "docket tool unlock --connection laptop --tool acme.orders.list@1"},
	"tool lock":              {"docket tool lock --connection laptop --tool docket.workspace.read_json@1    locks the digest the worker advertises now", "docket tool lock --connection laptop --tool acme.orders.cancel@1 --approval ops_writes", "docket tool lock --connection laptop --tool docket.workspace.read_json@1 --digest sha256:…    pins a digest (docket worker --print-tools)"},
	"tool list":              {"docket tool list --connection laptop"},
	"tool unlock":            {"docket tool unlock --connection laptop --tool acme.orders.list@1"},
	"tool approval":          {"docket tool approval --connection laptop --tool acme.orders.list@1 person", "docket tool approval --connection laptop --tool docket.workspace.read_text@1 none"},
	"tool show":              {"docket tool show --connection laptop", "docket tool show --connection laptop -o json"},
	"capability":             {"docket capability check ./capability", "docket capability install ./capability"},
	"capability check":       {"docket capability check examples/verified-calculation/capability", "docket capability check pkg.tar.gz -o json"},
	"capability install":     {"docket capability install examples/verified-calculation/capability"},
	"member":                 {"docket member add bob --passphrase-file bob.txt"},
	"member add":             {"docket member add bob --passphrase-file bob.txt"},
	"project":                {"docket project create billing --name 'Billing'", "docket project list"},
	"project create":         {"docket project create billing --name 'Billing'"},
	"project list":           {"docket project list"},
	"requests":               {"docket requests", "docket requests --all -o json"},
	"decide":                 {"docket decide req_0123456789abcdef approve --digest sha256:…", "docket decide req_0123456789abcdef deny --digest sha256:… --reason 'wrong account'"},
	"agent level":            {"docket agent level calc attended", "docket agent level calc unattended --acknowledge 'I have read the stated risk'"},
	"agent window":           {"docket agent window calc --minutes 90"},
	"agent profile":          {"docket agent profile set calc --provider openai --model-url http://127.0.0.1:8080/v1 --model qwen2.5", "docket agent profile list"},
	"agent profile show":     {"docket agent profile show calc", "docket agent profile show calc -o json"},
	"agent profile list":     {"docket agent profile list", "docket agent profile list -o json"},
	"agent blueprint":        {"docket agent blueprint set researcher --provider openai --model gpt-4.1-mini --allow-action docket.ask", "docket agent blueprint list"},
	"agent blueprint show":   {"docket agent blueprint show researcher", "docket agent blueprint show researcher -o json"},
	"agent blueprint list":   {"docket agent blueprint list", "docket agent blueprint list -o json"},
	"agent blueprint remove": {"docket agent blueprint remove researcher"},
	"agent autonomy":         {"docket agent autonomy calc", "docket agent autonomy calc -o json"},
	"retry":                  {"docket ops --waiting                           finds what failed", "docket retry agt_0123456789abcdef.4 --reason 'the share was remounted'"},
	"policy":                 {"docket policy list", "docket policy publish delegation.toml", "docket policy diff delegation 1"},
	"policy publish":         {"docket policy publish delegation.toml", "docket policy publish artifact.toml      [artifact_policy] retention_days = 7"},
	"policy show":            {"docket policy show delegation", "docket policy show delegation --at 1 -o json", "docket policy show artifact"},
	"policy list":            {"docket policy list", "docket policy list -o json"},
	"policy diff":            {"docket policy diff delegation 1", "docket policy diff delegation 1 2"},
	"schedule":               {"docket schedule create --agent calc --cron '0 9 * * mon-fri' --tz Europe/Berlin 'Send the morning report.'", "docket schedule list", "docket schedule show sch_0123456789abcdef"},
	"schedule create":        {"docket schedule create --agent calc --cron '0 9 * * mon-fri' --tz Europe/Berlin 'Send the morning report.'", "docket schedule create --agent calc --every 1h --missed run_once 'Tidy the workspace.'"},
	"schedule list":          {"docket schedule list", "docket schedule list -o json"},
	"schedule show":          {"docket schedule show sch_0123456789abcdef", "docket schedule show sch_0123456789abcdef -o json"},
	"schedule pause":         {"docket schedule pause sch_0123456789abcdef"},
	"schedule resume":        {"docket schedule resume sch_0123456789abcdef"},
	"schedule run-now":       {"docket schedule run-now sch_0123456789abcdef", "docket events tail --type schedule.fired"},
	"schedule delete":        {"docket schedule delete sch_0123456789abcdef"},
	"budget":                 {"docket budget set calc-daily --agent calc --window day --tz Europe/Berlin --max-usd 5", "docket budget list", "docket budget show calc-daily"},
	"budget set": {"docket budget set calc-daily --agent calc --window day --tz Europe/Berlin --max-usd 5 --max-tokens 2000000",
		"docket budget set all --window month --max-usd 200 --warn 90      the whole project",
		"docket budget set nightly --schedule sch_0123456789abcdef --window total --max-tokens 500000",
		"docket budget set calc-daily --agent calc --max-usd 10             a raise: the waiting tasks go on",
		"docket budget set calc-daily --agent calc --max-usd 5 --reset      forget what today spent"},
	"budget show":           {"docket budget show calc-daily", "docket budget show calc-daily -o json"},
	"budget list":           {"docket budget list", "docket budget list --agent calc -o json"},
	"budget remove":         {"docket budget remove calc-daily", "docket budget remove calc-daily -o json"},
	"notice":                {"docket notice subscribe --kind request,card --webhook https://hooks.slack.com/services/…", "docket notice list", "docket notice test nsub_0123456789abcdef"},
	"notice subscribe":      {"docket notice subscribe --kind request,card --webhook https://hooks.slack.com/services/…", "docket notice subscribe --kind request,operation,task_failed --email ann@example.com --digest 15m"},
	"notice list":           {"docket notice list", "docket notice list -o json"},
	"notice unsubscribe":    {"docket notice unsubscribe nsub_0123456789abcdef"},
	"notice test":           {"docket notice test nsub_0123456789abcdef", "docket events tail --type notice.delivered,notice.failed"},
	"reconcile":             {"docket ops --waiting                           finds what needs a person", "docket reconcile agt_0123456789abcdef.4 done --reason 'the file is there'"},
	"case":                  {"docket case list", "docket case show case-1 --why"},
	"events":                {"docket events tail --type case.closed", "docket events verify", "docket events export --project default"},
	"events verify":         {"docket events verify", "docket events verify -o json", "docket events verify --data-dir ~/.docket    no serve needed", "docket events verify default.bundle --keys keys.json"},
	"events export":         {"docket events export --project default --out default.bundle"},
	"events checkpoint":     {"docket events checkpoint --project default"},
	"key":                   {"docket key public", "docket key rotate"},
	"key public":            {"docket key public > keys.json"},
	"key rotate":            {"docket key rotate"},
	"rules":                 {"docket rules check capability/calculation.dl", "docket rules eval capability/calculation.dl --facts facts.jsonl"},
	"rules check":           {"docket rules check capability/calculation.dl"},
	"rules eval":            {"docket rules eval capability/calculation.dl --facts facts.jsonl -o json"},
	"version":               {"docket version", "docket --version"},
	"delegate":              {"docket delegate create --life 8h --name asst", "docket delegate list", "docket delegate revoke asst"},
	"delegate create":       {"docket delegate create --life 8h", "docket delegate create --life 30m --name asst --project ops -o json"},
	"delegate list":         {"docket delegate list", "docket delegate list -o json"},
	"delegate revoke":       {"docket delegate revoke asst", "docket delegate revoke dlg_0123456789abcdef"},
	"confirm":               {"docket confirm crd_0123456789abcdef", "docket confirm crd_0123456789abcdef -o json"},
	"card":                  {"docket card list --state open", "docket card show crd_0123456789abcdef", "docket card decline crd_0123456789abcdef --reason 'not this week'"},
	"card list":             {"docket card list", "docket card list --state open -o json"},
	"card show":             {"docket card show crd_0123456789abcdef"},
	"card decline":          {"docket card decline crd_0123456789abcdef", "docket card decline crd_0123456789abcdef --reason 'use the staging Connection'"},
	"operation":             {"docket operation list"},
	"operation list":        {"docket operation list", "docket operation list -o json"},
	"hook":                  {"docket hook install claude-code --agent coder .", "docket policy show hook"},
	"hook install":          {"docket hook install claude-code --agent coder .", "docket hook install claude-code --agent coder --wait 10m ~/src/app", "docket hook install claude-code --agent coder --replace-token ."},
	"hook claude-code":      {"claude -p 'fix the test' runs these through .claude/settings.local.json"},
	"hook claude-code pre":  {"echo '{…PreToolUse…}' | docket hook claude-code pre --config .claude/docket/hook.json"},
	"hook claude-code post": {"echo '{…PostToolUse…}' | docket hook claude-code post --config .claude/docket/hook.json"},
}

// helpPrinter prints kong's help and then the selected command's examples.
func helpPrinter(options kong.HelpOptions, ctx *kong.Context) error {
	if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
		return err
	}
	path := ""
	if n := ctx.Selected(); n != nil {
		path = strings.TrimSpace(strings.TrimPrefix(n.FullPath(), ctx.Model.Name))
	}
	ex := examples[path]
	if len(ex) == 0 {
		return nil
	}
	w := ctx.Stdout
	if _, err := fmt.Fprintln(w, "\nExamples:"); err != nil {
		return err
	}
	for _, line := range ex {
		if _, err := fmt.Fprintln(w, "  "+line); err != nil {
			return err
		}
	}
	return nil
}

// helpArgs turns the ways a new user asks for help into kong's: no arguments and
// "docket help [COMMAND…]" print the help of docket or of COMMAND.
func helpArgs(args []string) []string {
	switch {
	case len(args) == 0:
		return []string{"--help"}
	case args[0] == "help":
		return append(append([]string{}, args[1:]...), "--help")
	}
	return args
}
