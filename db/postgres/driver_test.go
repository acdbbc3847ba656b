package postgres_test

import (
	"testing"

	"github.com/meshhq/hq/db/drivertest"
	_ "github.com/meshhq/hq/db/postgres"
	"github.com/meshhq/hq/internal/testdb"
)

// The store on PostgreSQL, through every area of the driver, against the values it must say.
// It needs a server (HQ_TEST_POSTGRES), which CI always has.
func TestDriver(t *testing.T) {
	if testdb.Server() == "" {
		testdb.NeedServer(t) // fails in CI, skips elsewhere
		return
	}
	t.Parallel()
	drivertest.Exercise(t, "postgres")
}
