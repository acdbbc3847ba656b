package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/meshhq/hq"
)

func secretFlags(fs *flag.FlagSet, o *cliRun) {
	fs.StringVar(&o.fromFile, "from-file", "", "put: read the value from this file instead of stdin")
	fs.BoolVar(&o.plan, "plan", false, "put: say which modules, nodes and waves the new version would move, and read no value")
}

// cmdSecret puts, lists and shows secrets; no answer it prints holds a value.
func cmdSecret(ctx context.Context, o *cliRun, args []string) error {
	if len(args) == 0 {
		return usageError("want put NAME, list or show NAME")
	}
	switch args[0] {
	case "put":
		if err := wantArgs(args[1:], 1, "put NAME"); err != nil {
			return err
		}
		return secretPut(ctx, o, args[1])
	case "list":
		if err := wantArgs(args[1:], 0, "list"); err != nil {
			return err
		}
		list, err := o.c.Secrets(ctx)
		if err != nil {
			return err
		}
		return o.print(map[string][]hq.SecretView{"secrets": list}, func() []string { return secretTable(list) })
	case "show":
		if err := wantArgs(args[1:], 1, "show NAME"); err != nil {
			return err
		}
		v, err := o.c.Secret(ctx, args[1])
		if err != nil {
			return err
		}
		return o.print(v, func() []string {
			lines := secretTable([]hq.SecretView{v})
			for _, x := range v.Versions {
				lines = append(lines, fmt.Sprintf("  v%d %s… %s", x.Version, x.Digest, hq.FormatTime(x.CreatedAt)))
			}
			return lines
		})
	}
	return usageError("want put NAME, list or show NAME")
}

func secretPut(ctx context.Context, o *cliRun, name string) error {
	if o.plan {
		plan, err := o.c.PlanSecret(ctx, name)
		if err != nil {
			return err
		}
		return o.print(plan, func() []string {
			lines := []string{fmt.Sprintf("secret %s v%d would move %d module(s)", name, plan.Version, len(plan.Modules))}
			for _, p := range plan.Modules {
				lines = append(lines, planLines(p)...)
			}
			return lines
		})
	}
	value, err := readSecretValue(o)
	if err != nil {
		return err
	}
	res, err := o.c.PutSecret(ctx, name, value)
	clear(value)
	if err != nil {
		return err
	}
	return o.print(res, func() []string {
		lines := []string{res.Secret.Label()}
		for m, rev := range res.Modules {
			lines = append(lines, fmt.Sprintf("  %s: revision %d", m, rev))
		}
		for m, e := range res.Errors {
			lines = append(lines, fmt.Sprintf("  %s: not moved: %s", m, e))
		}
		return lines
	})
}

// readSecretValue reads the value from --from-file or stdin, as it is: a trailing newline is
// part of it, as in a file.
func readSecretValue(o *cliRun) ([]byte, error) {
	r := o.in
	if o.fromFile != "" {
		f, err := os.Open(o.fromFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		return nil, errors.New("no value: give it on stdin or with --from-file")
	}
	b, err := io.ReadAll(io.LimitReader(r, hq.MaxSecret+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) == 0:
		return nil, errors.New("the value is empty: give it on stdin or with --from-file")
	case len(b) > hq.MaxSecret:
		return nil, fmt.Errorf("the value is larger than %d bytes", hq.MaxSecret)
	}
	return b, nil
}

func secretTable(list []hq.SecretView) []string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SECRET\tVERSION\tDIGEST\tUPDATED\tMODULES\tNODES")
	for _, v := range list {
		mods := strings.Join(v.Modules, ",")
		if mods == "" {
			mods = "-"
		}
		fmt.Fprintf(tw, "%s\tv%d\t%s…\t%s\t%s\t%d\n", v.Name, v.Version, v.Digest, hq.FormatTime(v.UpdatedAt), mods, v.Nodes)
	}
	tw.Flush()
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}
