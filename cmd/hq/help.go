package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kelseyhightower/envconfig"

	"github.com/meshhq/hq/controller"
)

// command is one of hq's own commands (not an operator command): what it does, and which of
// the controller's variables it reads.
type command struct {
	name, args, summary string
	// reads says whether it reads variable key; nil: every one of controller.Config.
	reads func(key string) bool
}

var commands = []command{
	{"serve", "", "run the controller: the API and the status pages over one database", nil},
	{"migrate", "", "apply database migrations and exit", only("HQ_DB")},
	{"demo", "", "run a controller and three hosts on temporary roots, for a first look; its database, " +
		"signing key and certificate are its own, made in a temporary directory",
		except("HQ_DB", "HQ_KEY_FILE", "HQ_SECRETS_KEY_FILE", "HQ_TLS_CERT", "HQ_TLS_KEY", "HQ_CLIENT_CA", "HQ_STUCK_ATTEMPTS")},
	{"key", "[rotate]", "print the controller's public signing key (and its fingerprint), to provision hosts " +
		"with as HOSTD_CONTROLLER_KEY; it is made (HQ_KEY_FILE, by default beside HQ_DB) if there is none yet. " +
		"rotate replaces the signing key with a new one the old one vouches for: controllers serving sign " +
		"with it within seconds, and hosts that hold the old key follow it; the old key is honoured for " +
		"HQ_KEY_GRACE as this command has it, which the key file records for every controller (docs/security.md)",
		only("HQ_DB", "HQ_KEY_FILE", "HQ_KEY_GRACE")},
	{"backup", "FILE", "copy the database at HQ_DB to FILE, consistently, while hq serves (and its signing " +
		"key to FILE.key); see docs/operating.md for the restore", only("HQ_DB", "HQ_KEY_FILE")},
	{"secret", "rekey", "give the controller a new key for secrets at rest (HQ_SECRETS_KEY_FILE) and encrypt " +
		"every secret version to it, while hq serves, in short transactions; the old key is kept as FILE.old " +
		"until no version is encrypted to it, and run again after an interruption it goes on (docs/secrets.md)",
		only("HQ_DB", "HQ_SECRETS_KEY_FILE")},
}

func only(keys ...string) func(string) bool {
	return func(k string) bool { return contains(keys, k) }
}

func except(keys ...string) func(string) bool {
	return func(k string) bool { return !contains(keys, k) }
}

func contains(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func commandNamed(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// printUsage is hq -h: every command, and every variable hq reads, the operator commands'
// and the controller's.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "usage: hq <command> (hq <command> -h says more of one)\n\ncommands:\n")
	for _, c := range commands {
		entry(w, c.name, c.args, c.summary)
	}
	fmt.Fprint(w, "\noperator commands (they speak the API at HQ_URL with HQ_TOKEN, an operator's token, or HQ_ADMIN_TOKEN):\n")
	for _, name := range operatorNames {
		entry(w, name, operators[name].args, operators[name].summary)
	}
	fmt.Fprint(w, "\nenvironment of the operator commands:")
	fmt.Fprint(w, strings.TrimPrefix(cliEnvironment, "\nenvironment:"))
	fmt.Fprint(w, "\nenvironment of serve, migrate, demo, key, backup and secret rekey:\n")
	controllerEnvironment(w, nil)
}

// printCommandHelp is hq NAME -h for one of hq's own commands: that command alone.
func printCommandHelp(w io.Writer, c command) {
	fmt.Fprintf(w, "usage: hq %s\n\n", strings.TrimSpace(c.name+" "+c.args))
	for _, l := range wrap(c.summary, 92) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprint(w, "\nenvironment:\n")
	controllerEnvironment(w, c.reads)
}

// controllerEnvironment is envconfig's table of controller.Config, its rows those reads keeps.
func controllerEnvironment(w io.Writer, reads func(string) bool) {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 1, 0, 2, ' ', 0)
	envconfig.Usagef("HQ", &controller.Config{}, tw, envconfig.DefaultTableFormat)
	tw.Flush()
	// The table's header and its rows; not envconfig's preamble, which says what this says.
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		switch key, _, _ := strings.Cut(l, " "); {
		case key == "KEY", strings.HasPrefix(key, "HQ_") && (reads == nil || reads(key)):
			io.WriteString(w, "  "+l)
		}
	}
}

// entry is one command of the usage: its name and arguments, and its summary indented below
// (beside them when they are short), wrapped.
func entry(w io.Writer, name, args, summary string) {
	head := "  " + strings.TrimSpace(fmt.Sprintf("%-9s %s", name, args))
	lines := wrap(summary, 80)
	if len(head) <= 11 && args == "" {
		fmt.Fprintf(w, "%-12s%s\n", head, lines[0])
		lines = lines[1:]
	} else {
		fmt.Fprintln(w, head)
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%12s%s\n", "", l)
	}
}

// wrap breaks s into lines of at most width bytes, between words.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
