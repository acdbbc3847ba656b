package db

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// IsPostgres reports whether HQ_DB names a PostgreSQL database rather than a SQLite file.
func IsPostgres(hqDB string) bool {
	return strings.HasPrefix(hqDB, "postgres://") || strings.HasPrefix(hqDB, "postgresql://")
}

// CheckName refuses an HQ_DB that is neither a PostgreSQL URL nor a file's path: a URL of
// another scheme, or PostgreSQL's keyword form (host=… dbname=…), would otherwise open a SQLite
// file of that name.
func CheckName(hqDB string) error {
	switch {
	case IsPostgres(hqDB):
		return nil
	case hqDB == "":
		return errors.New("HQ_DB is empty: name a SQLite file or a postgres:// URL")
	case strings.Contains(hqDB, "://") || strings.HasPrefix(hqDB, "postgres:") || strings.Contains(hqDB, "dbname="):
		return fmt.Errorf("HQ_DB (%s) is neither a SQLite file nor a postgres:// URL", Redacted(hqDB))
	}
	return nil
}

// Redacted is HQ_DB as logs and messages may show it: a URL without its password (in the user
// part or as a parameter).
func Redacted(hqDB string) string {
	u, err := url.Parse(hqDB)
	if err != nil || u.Scheme == "" {
		if IsPostgres(hqDB) {
			return "the PostgreSQL database"
		}
		return hqDB
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
