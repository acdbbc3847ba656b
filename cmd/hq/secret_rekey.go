package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/meshhq/hq/controller"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/seal"
)

// isRekey says whether args are hq secret rekey, which runs beside the database (as hq key
// does), not through the API: it needs the key file.
func isRekey(args []string) bool { return len(args) >= 2 && args[0] == "secret" && args[1] == "rekey" }

// secretRekey gives the controller a new key for secrets at rest and encrypts every version
// to it, while hq serves: the key file gets the new key and keeps the old one as FILE.old,
// every version is encrypted again in short transactions, and FILE.old goes when none is left
// encrypted to it. Run again after an interruption, it goes on where it stopped.
func secretRekey(ctx context.Context, cfg controller.Config, args []string) error {
	if len(args) != 0 {
		return errors.New("usage: hq secret rekey (with HQ_DB, and HQ_SECRETS_KEY_FILE unless it is beside a database file)")
	}
	path, err := cfg.SecretsKeyPath()
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("the secrets key: %w", err)
	}
	n, err := rekey(ctx, cfg.DB, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "every secret version (%d encrypted again) is encrypted to the new key in %s; back it up apart from the database\n", n, path)
	return nil
}

// rekey is secretRekey's work on the database at dsn and the key file at path.
func rekey(ctx context.Context, dsn, path string) (int, error) {
	to, err := seal.BeginRekey(path)
	if err != nil {
		return 0, fmt.Errorf("the new secrets key: %w", err)
	}
	keys, err := seal.LoadKeys(path)
	if err != nil {
		return 0, err
	}
	s, err := db.Open(ctx, dsn, db.Options{SecretsKey: keys})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	n, err := s.RekeySecrets(ctx, to, db.RekeyChunk)
	if err != nil {
		return n, fmt.Errorf("%d version(s) encrypted again, then: %w (run hq secret rekey again: it goes on; %s%s holds the old key meanwhile)", n, err, path, seal.OldSuffix)
	}
	return n, seal.EndRekey(path)
}
