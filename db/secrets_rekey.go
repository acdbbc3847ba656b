package db

import (
	"context"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/seal"
)

// RekeyChunk is how many versions one transaction of a rekey encrypts again: short enough
// that no writer waits on it for long.
const RekeyChunk = 100

// RekeySecrets encrypts every version that is not encrypted to to again, opening each with
// the key it names (the store's current or old key), online: a chunk read in one short
// transaction, opened and encrypted outside any, written in another, until none is left. A
// version another writer changed meanwhile is left for the next chunk. It returns how many it
// encrypted again.
func (s *Store) RekeySecrets(ctx context.Context, to *seal.Key, chunk int) (int, error) {
	if s.opt.SecretsKey == nil {
		return 0, errNoSecretsKey
	}
	done := 0
	for {
		var rows []driver.SecretVersion
		err := s.inReadTx(ctx, func(q driver.Queries) (err error) {
			rows, err = q.SecretVersionListNotTo(ctx, driver.SecretVersionListNotToParams{Recipient: to.Public(), Max: int64(chunk)})
			return err
		})
		if err != nil || len(rows) == 0 {
			return done, err
		}
		again := make([]driver.SecretVersionReencryptParams, 0, len(rows))
		for _, r := range rows {
			value, err := s.opt.SecretsKey.Open(r.Recipient, r.Ciphertext)
			if err != nil {
				return done, hq.Errorf(hq.CodeUnavailable, "secret %s v%d does not open: %v", r.Name, r.Version, err)
			}
			c, err := to.Seal(value)
			clear(value)
			if err != nil {
				return done, err
			}
			again = append(again, driver.SecretVersionReencryptParams{Ciphertext: c, Recipient: to.Public(), Name: r.Name, Version: r.Version, Was: r.Recipient})
		}
		var wrote int64
		err = s.inTx(ctx, func(q driver.Queries) error {
			wrote = 0 // a transaction tried again counts afresh
			for _, a := range again {
				n, err := q.SecretVersionReencrypt(ctx, a)
				if err != nil {
					return err
				}
				wrote += n
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done += int(wrote)
	}
}
