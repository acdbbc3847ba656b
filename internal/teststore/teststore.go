// Package teststore gives a test outside db a store as a controller runs one: on a fresh
// database of the run's engine (testdb), with every worker of the store running until the test
// ends, stopped before the store is closed.
package teststore

import (
	"context"
	"testing"

	"github.com/meshhq/hq/db"
	_ "github.com/meshhq/hq/db/postgres" // the engines HQ_DB may name
	_ "github.com/meshhq/hq/db/sqlite"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/workers"
)

// Open opens a store on a fresh database with opt and runs its workers.
func Open(t testing.TB, opt db.Options) *db.Store {
	t.Helper()
	return OpenAt(t, testdb.New(t), opt)
}

// OpenAt is Open on the database hqDB names.
func OpenAt(t testing.TB, hqDB string, opt db.Options) *db.Store {
	t.Helper()
	s, err := db.Open(context.Background(), hqDB, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g := workers.Start(context.Background(), nil, s.Workers()...)
	t.Cleanup(g.Stop) // cleanups run last first: the workers stop, then the store closes
	return s
}
