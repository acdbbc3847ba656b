// Package migrations holds the schema as goose SQL files, embedded so the binary carries it.
// sqlc reads the same files, so there is one copy of the schema.
package migrations

import "embed"

// FS holds every migration; its root is this directory.
//
//go:embed *.sql
var FS embed.FS
