package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/certs"
	"github.com/meshhq/hq/client"
)

// operator is one CLI command that speaks the API: its synopsis, what it does, and how.
type operator struct {
	args, summary string
	run           func(ctx context.Context, o *cliRun, args []string) error
	flags         func(fs *flag.FlagSet, o *cliRun)
}

// operators are the commands of the operator CLI, each a thin face of one API call.
var operators = map[string]operator{
	"status": {"", "the mesh at a glance: nodes by status and the lines that need a look", cmdStatus, nil},
	"nodes":  {"[--status S] [--selector SEL]", "every node with its status, generation and last report line", cmdNodes, nodesFlags},
	"node":   {"NAME", "one node: its status lines, last report, assignments, what is not applied", cmdNode, nil},
	"module": {"push|plan NAME FILE [-m MESSAGE]", "push uploads FILE (JSON: {\"resources\":[…]} or a bare list) as a new revision of module NAME, with a message saying what it is for; plan says what that would do, and does nothing, exiting 0 when nothing would change and 2 when something would or the upload would be refused", cmdModule, moduleFlags},
	"operator": {"add NAME --role R [--modules PAT] [--nodes SEL] [--expires D] | list | revoke NAME|--token ID | token NAME [--expires D]  [--db]",
		"the operators: add one with a role (viewer, deployer, admin; a deployer bounded to modules and nodes) and print its first token, shown once; list them; " +
			"revoke one (every token of theirs) or one token; make another token. An admin's call; --db works on HQ_DB directly, for the first admin", cmdOperator, addOperatorFlags},
	"audit":    {"[--operator N] [--object O] [--action A] [--since D]", "the audit log, newest first: every change and every refused attempt, who, how, from where, and the outcome", cmdAudit, auditFlags},
	"assign":   {"NODE MODULE [--taken]", "assign a module to a node", cmdAssign, assignFlags},
	"take":     {"NODE MODULE", "let an assigned module adopt what it finds on the node", cmdTake, nil},
	"unassign": {"NODE MODULE", "take a module off a node: the node's hostd removes what the module made there", cmdUnassign, nil},
	"modules":  {"", "every module with its latest revision, when it was pushed, and the nodes it is assigned to", cmdModules, nil},
	"label":    {"NODE k=v…", "replace a node's labels", cmdLabel, nil},
	"retry":    {"NODE MODULE/RESOURCE", "start a failed or stuck resource over, and drop the host's back-off for it", cmdRetry, nil},
	"logs":     {"NODE MODULE/RESOURCE", "the last lines hostd reported for a resource: its last error, which carries a failed container's last log lines; and, for a container, what runs", cmdLogs, nil},
	"secret":   {"put NAME [--from-file F] [--plan] | list | show NAME", "put a new version of a secret (its value from stdin or --from-file; every module using it gets a new revision, which rolls out as any does), or say which modules and nodes it would move (--plan); list secrets, or show one with its versions: never a value, only a digest's first digits", cmdSecret, secretFlags},
	"place":    {"NAME MODULE SELECTOR [--taken] [--rollout JSON] | NAME --delete", "put a module on every node a label selector matches, now and later", cmdPlace, placeFlags},
	"rollout": {"list | show|watch|pause|resume|promote|abort ID | rollback PLACEMENT --to N",
		"the rollouts of placed modules: list them, show one with its nodes, watch one until it ends (exit 0 when it completes, 1 when it pauses or is aborted), " +
			"pause it (no new wave), resume it, promote it (its canaries count as proven: the batches start now), abort it (every node it advanced pinned back), " +
			"or roll a placement's nodes back to an earlier revision, as a new rollout under its policy", cmdRollout, rolloutFlags},
}

// operatorNames lists the commands in the order usage shows them.
var operatorNames = []string{"status", "nodes", "node", "modules", "module", "assign", "take", "unassign", "label", "place", "rollout", "secret", "retry", "logs", "operator", "audit"}

const cliEnvironment = `
environment:
  HQ_URL          the controller (default http://127.0.0.1:8080)
  HQ_TOKEN        an operator's bearer token (hq operator add prints one)
  HQ_ADMIN_TOKEN  the bootstrap admin's token, used when HQ_TOKEN is unset
  HQ_CA           a PEM bundle the controller's HTTPS certificate must chain to (the system's roots when unset)
`

// cliRun is one invocation: where it writes, the client, and the options every command takes.
type cliRun struct {
	out  io.Writer
	c    *client.Client
	json bool
	// flag values the commands read
	status, selector, rollout string
	taken, remove             bool
	to                        int64
	every                     time.Duration
	fromFile                  string
	plan                      bool
	// in is where a value is read from: stdin.
	in       io.Reader
	message  string
	operator operatorFlags
	audit    client.AuditQuery
	getenv   func(string) string
}

// runOperator runs an operator command and returns the process's exit code: 0, 1 when the
// command failed, 2 on a usage error.
func runOperator(ctx context.Context, name string, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := operators[name]
	o := &cliRun{out: stdout, in: os.Stdin, getenv: getenv}
	fs := flag.NewFlagSet("hq "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	output := fs.String("o", "text", "output: text (lines, as the status page says them) or json (the API's answer, for scripts)")
	if cmd.flags != nil {
		cmd.flags(fs, o)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: hq %s %s\n\n%s\n\nflags:\n", name, cmd.args, cmd.summary)
		fs.PrintDefaults()
		fmt.Fprint(stderr, cliEnvironment)
	}
	rest, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	switch *output {
	case "text":
	case "json":
		o.json = true
	default:
		fmt.Fprintf(stderr, "hq %s: -o must be text or json, not %q\n", name, *output)
		return 2
	}
	base := getenv("HQ_URL")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	token := getenv("HQ_TOKEN")
	if token == "" {
		token = getenv("HQ_ADMIN_TOKEN")
	}
	o.c = client.New(base, token)
	o.c.UserAgent = "hq-cli/" + hq.Version()
	if ca := getenv("HQ_CA"); ca != "" {
		roots, err := certs.ReadPool(ca)
		if err != nil {
			fmt.Fprintf(stderr, "hq %s: HQ_CA: %v\n", name, err)
			return 1
		}
		o.c.HTTP = client.Trusting(roots)
	}
	if err := cmd.run(ctx, o, rest); err != nil {
		if u, ok := errors.AsType[usageError](err); ok {
			fmt.Fprintf(stderr, "hq %s: %s\n", name, u)
			fs.Usage()
			return 2
		}
		if c, ok := errors.AsType[exitCode](err); ok {
			return int(c)
		}
		o.printError(stderr, name, err)
		if name == "module" && len(rest) > 0 && rest[0] == "plan" && client.StatusOf(err) == 422 {
			return 2 // the upload would be refused
		}
		return 1
	}
	return 0
}

// exitCode ends a command that said what it had to with a code of its own.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

// printError says why a command failed: the API's answer with every detail it gives (as JSON
// with -o json), and what to set when the token or the CA is what is missing.
func (o *cliRun) printError(stderr io.Writer, name string, err error) {
	e, api := errors.AsType[*client.Error](err)
	if api && o.json {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"error": e.API})
		return
	}
	fmt.Fprintf(stderr, "hq %s: %v\n", name, err)
	if api {
		for _, d := range e.API.Details {
			fmt.Fprintf(stderr, "  %s: %s\n", d.Field, d.Message)
		}
		if e.Status == 401 {
			fmt.Fprintln(stderr, "  set HQ_TOKEN to an operator's token that is neither revoked nor expired (or HQ_ADMIN_TOKEN to the controller's)")
		}
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		fmt.Fprintln(stderr, "  the controller's certificate is not from a CA this machine trusts: set HQ_CA to the PEM bundle it chains to")
	}
}

func nodesFlags(fs *flag.FlagSet, o *cliRun) {
	fs.StringVar(&o.status, "status", "", "only nodes in this status ("+joinStatuses()+"), or not-converged")
	fs.StringVar(&o.selector, "selector", "", "only nodes whose labels match this selector, e.g. role=web,region in (eu,us)")
}

func assignFlags(fs *flag.FlagSet, o *cliRun) {
	fs.BoolVar(&o.taken, "taken", false, "the module adopts state it finds on the node")
}

func joinStatuses() string {
	var s []string
	for _, st := range hq.Statuses {
		s = append(s, string(st))
	}
	return strings.Join(s, ", ")
}

// parseInterspersed parses flags wherever they stand among the arguments, as operators type
// them (hq assign web-1 app --taken), and returns the positional arguments. The standard
// flag package stops at the first of those.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// usageError is a command called with the wrong arguments.
type usageError string

func (u usageError) Error() string { return string(u) }

func wantArgs(args []string, n int, what string) error {
	if len(args) != n {
		return usageError(fmt.Sprintf("want %s, got %d argument(s)", what, len(args)))
	}
	return nil
}

// print writes v as JSON with -o json, else the lines text returns.
func (o *cliRun) print(v any, text func() []string) error {
	if o.json {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	for _, l := range text() {
		if _, err := fmt.Fprintln(o.out, l); err != nil {
			return err
		}
	}
	return nil
}

func cmdStatus(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 0, "no arguments"); err != nil {
		return err
	}
	st, err := o.c.Status(ctx)
	if err != nil {
		return err
	}
	return o.print(st, func() []string { return append([]string{countsLine(st.Nodes)}, st.Lines...) })
}

// countsLine is "12 node(s): 9 converged, 1 mid-change, …", statuses in order of precedence.
func countsLine(counts map[string]int) string {
	var parts []string
	for _, s := range hq.Statuses {
		if n := counts[string(s)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	line := fmt.Sprintf("%d node(s)", counts["total"])
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	return line
}

func cmdNodes(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 0, "no arguments"); err != nil {
		return err
	}
	l, err := o.c.AllNodes(ctx, client.NodeQuery{Status: o.status, Selector: o.selector})
	if err != nil {
		return err
	}
	return o.print(l, func() []string {
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tSTATUS\tGENERATION\tLAST REPORT")
		for _, n := range l.Nodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.Status, generations(n), lastReport(n))
		}
		tw.Flush()
		// The totals are of the nodes the selector matches (the API counts those), every
		// status of them, so the rows read as a part of what the selector picked.
		counts := map[string]int{"total": l.Total}
		for s, n := range l.Counts {
			counts[string(s)] = n
		}
		totals := countsLine(counts)
		if o.selector != "" {
			totals = o.selector + ": " + totals
		}
		return append(strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"), totals)
	})
}

// generations is "42" when the node applied what it was declared, "42 (applied 41)" when not.
func generations(n hq.NodeView) string {
	if n.AppliedGeneration == n.Generation {
		return fmt.Sprint(n.Generation)
	}
	return fmt.Sprintf("%d (applied %d)", n.Generation, n.AppliedGeneration)
}

func lastReport(n hq.NodeView) string {
	if n.LastReport == nil {
		return "-"
	}
	return n.LastReport.Summary
}

func cmdNode(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 1, "NAME"); err != nil {
		return err
	}
	n, err := o.c.Node(ctx, args[0])
	if err != nil {
		return err
	}
	return o.print(n, func() []string { return nodeLines(n) })
}

// nodeLines is what the node's page says, as lines: status and its lines, generation, the
// last report line, assignments, and every resource not applied.
func nodeLines(n hq.NodeView) []string {
	lines := []string{fmt.Sprintf("%s: %s", n.Name, n.Status)}
	for _, l := range n.Lines {
		lines = append(lines, "  "+l)
	}
	lines = append(lines, "generation "+generations(n))
	if n.LastReport != nil {
		at := "-"
		if n.LastReportAt != nil {
			at = hq.FormatTime(*n.LastReportAt)
		}
		lines = append(lines, fmt.Sprintf("last report %s: %s", at, n.LastReport.Summary))
	}
	for _, a := range n.Assignments {
		lines = append(lines, assignmentLine(a))
	}
	for _, r := range n.Resources {
		if r.State == hq.StateApplied {
			continue
		}
		l := fmt.Sprintf("%s %s", hq.Ref(r.Module, r.Resource), r.State)
		for _, why := range []string{r.LastError, r.HoldReason, prefixed("blocked by ", r.BlockedBy)} {
			if why != "" {
				l += ": " + why
				break
			}
		}
		lines = append(lines, indentedLines(l)...)
	}
	return lines
}

// assignmentLine says a module on a node and who put it there, when, and who took it:
// "assigned app revision 4 by dan at 2026-11-30T03:00:00.000Z, taken by alice". Who is
// left out where it is not known: before operators had names, or taken by a placement.
func assignmentLine(a hq.AssignmentView) string {
	l := fmt.Sprintf("assigned %s revision %d", a.Module, a.Revision)
	switch {
	case a.Source != "" && a.Source != hq.SourceOperator:
		l += " by placement " + a.Source
	case a.AssignedBy != "":
		l += " by " + a.AssignedBy
	}
	if !a.AssignedAt.IsZero() {
		l += " at " + hq.FormatTime(a.AssignedAt)
	}
	if a.Taken {
		l += ", taken" + prefixed(" by ", a.TakenBy)
	}
	return l
}

// indentedLines is l split into its lines, every one after the first indented: the lines a
// failing command printed, at the end of its error, stay under the resource they belong to.
func indentedLines(l string) []string {
	lines := strings.Split(l, "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = "    " + lines[i]
	}
	return lines
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func moduleFlags(fs *flag.FlagSet, o *cliRun) {
	fs.StringVar(&o.message, "m", "", "push: what the revision is for, kept with it and shown as pushed by you: \"bump nginx\"")
}

func cmdModule(ctx context.Context, o *cliRun, args []string) error {
	if len(args) == 0 || (args[0] != "push" && args[0] != "plan") {
		return usageError("want push NAME FILE or plan NAME FILE")
	}
	if err := wantArgs(args[1:], 2, args[0]+" NAME FILE"); err != nil {
		return err
	}
	name := args[1]
	resources, err := readModuleFile(args[2])
	if err != nil {
		return err
	}
	if args[0] == "plan" {
		plan, err := o.c.PlanModule(ctx, name, resources)
		if err != nil {
			return err
		}
		if err := o.print(plan, func() []string { return planLines(plan) }); err != nil {
			return err
		}
		// As terraform plan -detailed-exitcode: 0 nothing would change, 2 something would
		// (or the upload would be refused).
		if !plan.Unchanged || len(plan.Conflicts) > 0 {
			return exitCode(2)
		}
		return nil
	}
	res, err := o.c.PushModule(ctx, name, resources, o.message)
	if err != nil {
		return err
	}
	return o.print(res, func() []string {
		if !res.Created {
			return []string{fmt.Sprintf("%s: revision %d, unchanged", name, res.Revision)}
		}
		line := fmt.Sprintf("%s: revision %d", name, res.Revision)
		nodes := make([]string, 0, len(res.Generations))
		for n := range res.Generations {
			nodes = append(nodes, n)
		}
		slices.Sort(nodes)
		if len(nodes) > 0 {
			line += fmt.Sprintf(", %d node(s) moved:", len(nodes))
			for _, n := range nodes {
				line += fmt.Sprintf(" %s (generation %d)", n, res.Generations[n])
			}
		}
		if res.More {
			line += "; the other nodes follow in the background"
		}
		return []string{line}
	})
}

// planLines says what an upload would do, a line per part that applies.
func planLines(p hq.ModulePlan) []string {
	if p.Unchanged {
		return []string{fmt.Sprintf("%s: unchanged, revision %d stays; nothing would move", p.Module, p.Revision)}
	}
	var parts []string
	for _, part := range []struct {
		what  string
		names []string
	}{{"added", p.Added}, {"changed", p.Changed}, {"moved", p.Moved}, {"removed", p.Removed}} {
		if len(part.names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(part.names), part.what, strings.Join(part.names, ", ")))
		}
	}
	line := fmt.Sprintf("%s: would make revision %d", p.Module, p.Revision)
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	lines := []string{line}
	for _, w := range p.Warnings {
		lines = append(lines, "warning: "+w)
	}
	for _, c := range p.Conflicts {
		lines = append(lines, "conflict: "+c+"; the upload would be refused")
	}
	if len(p.Conflicts) == 0 {
		lines = append(lines, moveLines(p)...)
	}
	return lines
}

// moveLines says which nodes an upload would move at once, and which in the waves of a rollout.
func moveLines(p hq.ModulePlan) []string {
	var moves []string
	for _, n := range p.Nodes {
		if n.Wave == 0 {
			moves = append(moves, fmt.Sprintf("%s (generation %d → %d)", n.Node, n.Generation, n.ToGeneration))
		}
	}
	var lines []string
	switch {
	case len(moves) > 0:
		lines = append(lines, fmt.Sprintf("would move %d node(s) at once: %s", len(moves), strings.Join(moves, ", ")))
	case len(p.Rollouts) == 0:
		lines = append(lines, "would move no node: the module is assigned to none")
	}
	for _, r := range p.Rollouts {
		lines = append(lines, fmt.Sprintf("would start a rollout of placement %s in %d wave(s):", r.Placement, len(r.Waves)))
		for i, w := range r.Waves {
			what := fmt.Sprintf("wave %d", i+1)
			if i == 0 && r.Policy.Canary > 0 {
				what += " (canary)"
			}
			lines = append(lines, fmt.Sprintf("  %s: %s", what, strings.Join(w, ", ")))
		}
	}
	return lines
}

// readModuleFile reads a module's resources from a JSON file: {"resources":[…]}, as PUT
// /modules takes it, or the bare list; "-" is standard input.
func readModuleFile(path string) ([]hq.Resource, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	trimmed := strings.TrimSpace(string(b))
	if strings.HasPrefix(trimmed, "[") {
		var rs []hq.Resource
		if err := strictJSON(b, &rs); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return rs, nil
	}
	var m struct {
		Resources []hq.Resource `json:"resources"`
	}
	if err := strictJSON(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Resources == nil {
		return nil, fmt.Errorf("%s: no \"resources\" list", path)
	}
	return m.Resources, nil
}

// strictJSON refuses unknown fields, as the server does, so a typo fails here with the file's name.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func cmdAssign(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 2, "NODE MODULE"); err != nil {
		return err
	}
	gen, err := o.c.Assign(ctx, args[0], args[1], o.taken)
	if err != nil {
		return err
	}
	return o.print(map[string]int64{"generation": gen}, func() []string {
		how := ""
		if o.taken {
			how = ", taken"
		}
		return []string{fmt.Sprintf("%s: %s assigned%s, generation %d", args[0], args[1], how, gen)}
	})
}

func cmdTake(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 2, "NODE MODULE"); err != nil {
		return err
	}
	gen, err := o.c.Take(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	return o.print(map[string]int64{"generation": gen}, func() []string {
		return []string{fmt.Sprintf("%s: %s taken, generation %d", args[0], args[1], gen)}
	})
}

func cmdUnassign(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 2, "NODE MODULE"); err != nil {
		return err
	}
	gen, err := o.c.Unassign(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	return o.print(map[string]int64{"generation": gen}, func() []string {
		return []string{fmt.Sprintf("%s: %s unassigned, generation %d", args[0], args[1], gen)}
	})
}

// cmdModules lists the modules, a line each in aligned columns, then how many there are.
func cmdModules(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 0, "no arguments"); err != nil {
		return err
	}
	mods, err := o.c.Modules(ctx)
	if err != nil {
		return err
	}
	return o.print(map[string][]hq.ModuleView{"modules": mods}, func() []string {
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MODULE\tREVISION\tPUSHED\tNODES")
		for _, m := range mods {
			nodes := strings.Join(m.Nodes, ",")
			if nodes == "" {
				nodes = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", m.Name, m.Revision, hq.FormatTime(m.UpdatedAt), nodes)
		}
		tw.Flush()
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		return append(lines, fmt.Sprintf("%d module(s)", len(mods)))
	})
}

func cmdLabel(ctx context.Context, o *cliRun, args []string) error {
	if len(args) < 1 {
		return usageError("want NODE k=v…")
	}
	labels := map[string]string{}
	for _, kv := range args[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError(fmt.Sprintf("a label is key=value, not %q", kv))
		}
		labels[k] = v
	}
	if err := o.c.SetLabels(ctx, args[0], labels); err != nil {
		return err
	}
	return o.print(map[string]any{"labels": labels}, func() []string {
		return []string{fmt.Sprintf("%s: labels %s", args[0], strings.Join(args[1:], ","))}
	})
}

func cmdRetry(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 2, "NODE MODULE/RESOURCE"); err != nil {
		return err
	}
	module, resource, ok := strings.Cut(args[1], "/")
	if !ok || module == "" || resource == "" {
		return usageError(fmt.Sprintf("want MODULE/RESOURCE, not %q", args[1]))
	}
	if err := o.c.Retry(ctx, args[0], module, resource); err != nil {
		return err
	}
	return o.print(map[string]string{"retry": args[1]}, func() []string {
		return []string{fmt.Sprintf("%s: retrying %s", args[0], args[1])}
	})
}

// logsView is what hq logs prints of one resource.
type logsView struct {
	Node      string              `json:"node"`
	Resource  string              `json:"resource"`
	State     hq.State            `json:"state"`
	LastError string              `json:"last_error"`
	Container *hq.ContainerStatus `json:"container,omitempty"`
}

// cmdLogs prints the last lines hostd reported for a resource: the last error the node's row
// keeps, which for a container that failed ends with what it wrote last.
func cmdLogs(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 2, "NODE MODULE/RESOURCE"); err != nil {
		return err
	}
	module, resource, ok := strings.Cut(args[1], "/")
	if !ok || module == "" || resource == "" {
		return usageError(fmt.Sprintf("want MODULE/RESOURCE, not %q", args[1]))
	}
	n, err := o.c.Node(ctx, args[0])
	if err != nil {
		return err
	}
	i := slices.IndexFunc(n.Resources, func(r hq.ResourceView) bool { return r.Module == module && r.Resource == resource })
	if i < 0 {
		return hq.Errorf(hq.CodeNotFound, "%s declares no %s", args[0], args[1])
	}
	r := n.Resources[i]
	v := logsView{Node: n.Name, Resource: args[1], State: r.State, LastError: r.LastError, Container: r.Container}
	return o.print(v, func() []string {
		head := fmt.Sprintf("%s on %s: %s", v.Resource, v.Node, v.State)
		if c := v.Container; c != nil {
			head += fmt.Sprintf("; container %s, %s, %d restart(s)", shortID(c.ID), c.Health, c.Restarts)
			if !c.StartedAt.IsZero() {
				head += ", started " + hq.FormatTime(c.StartedAt)
			}
		}
		if v.LastError == "" {
			return []string{head, "no error reported: nothing failing to show"}
		}
		return append([]string{head}, strings.Split(v.LastError, "\n")...)
	})
}

// shortID is a container id as its CLI shows it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// operatorLine finds the operator command in a command line whose flags may stand before it
// (hq -o json status) as well as after, and returns it with the rest of the line, flags
// first; false when the line names no operator command.
func operatorLine(args []string) (string, []string, bool) {
	var flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if _, ok := operators[a]; ok {
			return a, append(flags, args[i+1:]...), true
		}
		if !strings.HasPrefix(a, "-") || isHelpFlag(a) {
			return "", nil, false
		}
		flags = append(flags, a)
		// A flag that takes a value and was not given one with '=' takes the next word.
		if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && valueFlags[name] && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return "", nil, false
}

// valueFlags are the flags of operator commands that take a value.
var valueFlags = map[string]bool{"o": true, "status": true, "selector": true, "rollout": true}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }
