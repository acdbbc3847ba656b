package db

import (
	"strconv"
	"strings"

	"github.com/meshhq/hq/internal/testdb"
)

// rebind writes a test's ? placeholders as PostgreSQL's $1, $2, … when the run is for it.
func rebind(q string) string {
	if !testdb.Postgres() {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// onEngine is the statement for the engine the run is for, where the two dialects differ.
func onEngine(sqlite, postgres string) string {
	if testdb.Postgres() {
		return postgres
	}
	return sqlite
}
