package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/meshhq/hq/controller"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/db/sqlite"
)

// backup copies the database at HQ_DB to FILE while it serves, and the signing key file
// (HQ_KEY_FILE, by default beside the database) to FILE.key, so restoring is copying both back
// (docs/operating.md).
func backup(ctx context.Context, cfg controller.Config, args []string) error {
	if len(args) != 1 || isHelp(args[0]) {
		return errors.New("usage: hq backup FILE (with HQ_DB naming the live database)")
	}
	dst := args[0]
	if db.IsPostgres(cfg.DB) {
		return errors.New("backup: hq backup copies a SQLite database; back PostgreSQL up with its own tools (pg_dump, or a standby)")
	}
	keyFile, err := cfg.SigningKeyFile()
	if err != nil {
		return err
	}
	if err := sqlite.Backup(ctx, cfg.DB, dst); err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return fmt.Errorf("the database is backed up to %s, but not its signing key: %w", dst, err)
	}
	if err := os.WriteFile(controller.KeyPath(dst), key, 0o600); err != nil {
		return fmt.Errorf("the database is backed up to %s, but not its signing key: %w", dst, err)
	}
	fmt.Fprintf(os.Stderr, "backed up %s to %s, and its signing key to %s\n", cfg.DB, dst, controller.KeyPath(dst))
	return nil
}
