// Command hq is the controller: it serves the API and the status pages over one database
// (a SQLite file or PostgreSQL), migrates it, or runs a demo mesh.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/controller"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/keys"
)

func main() {
	if len(os.Args) < 2 {
		printUsage(os.Stderr)
		os.Exit(2)
	}
	if isHelp(os.Args[1]) {
		printUsage(os.Stderr)
		return
	}
	if hq.IsVersionFlag(os.Args[1]) {
		fmt.Println("hq", hq.Version())
		return
	}
	if name, args, ok := operatorLine(os.Args[1:]); ok && !isRekey(os.Args[1:]) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runOperator(ctx, name, args, os.Stdout, os.Stderr, os.Getenv)
		stop()
		os.Exit(code)
	}
	if c, ok := commandNamed(os.Args[1]); ok && wantsHelp(os.Args[2:]) {
		printCommandHelp(os.Stderr, c)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var cfg controller.Config
	if err := envconfig.Process("HQ", &cfg); err != nil {
		fail(err)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = controller.Run(ctx, cfg, log, nil)
	case "migrate":
		err = migrate(ctx, cfg)
	case "demo":
		err = demo(ctx, cfg)
	case "key":
		err = keyCommand(cfg, os.Args[2:])
	case "backup":
		err = backup(ctx, cfg, os.Args[2:])
	case "secret": // rekey alone: the rest of hq secret goes through the API
		err = secretRekey(ctx, cfg, os.Args[3:])
	default:
		fmt.Fprintf(os.Stderr, "hq: no command %q\n", os.Args[1])
		printUsage(os.Stderr)
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
}

func migrate(ctx context.Context, cfg controller.Config) error {
	s, err := db.Open(ctx, cfg.DB, db.Options{})
	if err != nil {
		return err
	}
	fmt.Printf("%s is migrated\n", s.Where())
	return s.Close()
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "help" }

// wantsHelp reports whether a command's arguments ask for its help: -h anywhere, or help first.
func wantsHelp(args []string) bool {
	if len(args) > 0 && args[0] == "help" {
		return true
	}
	for _, a := range args {
		if isHelpFlag(a) {
			return true
		}
	}
	return false
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hq:", err)
	os.Exit(1)
}

// keyCommand is hq key (print the key, made if there is none) and hq key rotate.
func keyCommand(cfg controller.Config, args []string) error {
	path, err := cfg.SigningKeyFile()
	if err != nil {
		return err
	}
	switch {
	case len(args) == 0:
		k, err := controller.LoadOrCreateKeys(path)
		if err != nil {
			return err
		}
		printKey(k, os.Stdout, os.Stderr)
		return nil
	case len(args) == 1 && args[0] == "rotate":
		return rotateKey(cfg, path, time.Now(), os.Stdout, os.Stderr)
	}
	return fmt.Errorf("usage: hq key [rotate], not hq key %s", strings.Join(args, " "))
}

// rotateKey replaces the signing key at path at now and says what happens next. The grace
// it states is the one the rotation wrote into the file, which every controller honours.
func rotateKey(cfg controller.Config, path string, now time.Time, stdout, stderr io.Writer) error {
	if cfg.KeyGrace <= 0 {
		return errors.New("HQ_KEY_GRACE must be positive")
	}
	k, err := controller.RotateKeys(path, now, cfg.KeyGrace)
	if err != nil {
		return err
	}
	printKey(k, stdout, stderr)
	last := k.Rotations[len(k.Rotations)-1]
	by, _ := keys.ParsePublic(last.Vouch.By)
	fmt.Fprintf(stderr, "rotated %s: the new key signs once the controllers serving read the file (within seconds; "+
		"copy it to any controller on another machine), vouched for by %s, which is honoured until %s (HQ_KEY_GRACE %s, "+
		"recorded in the file: it holds for every controller, whatever HQ_KEY_GRACE it has)\n",
		path, keys.Fingerprint(by), last.Until.UTC().Format(time.RFC3339), last.Until.Sub(last.At))
	return nil
}

// printKey prints the public half of the signing key, and its fingerprint apart, so the key
// alone can be captured for HOSTD_CONTROLLER_KEY.
func printKey(k *controller.SigningKeys, stdout, stderr io.Writer) {
	fmt.Fprintln(stdout, base64.StdEncoding.EncodeToString(k.Public()))
	fmt.Fprintln(stderr, "fingerprint", keys.Fingerprint(k.Public()))
}
