package sqlite_test

import (
	"testing"

	"github.com/meshhq/hq/db/drivertest"
	_ "github.com/meshhq/hq/db/sqlite"
)

// The store on SQLite, through every area of the driver, against the values it must say.
func TestDriver(t *testing.T) {
	t.Parallel()
	drivertest.Exercise(t, "sqlite")
}
