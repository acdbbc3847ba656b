package hq

import (
	"encoding/json"
	"fmt"
	"testing"
)

// DigestOfEncoded digests the same text ComputeDigest marshals, whatever the names hold.
func TestDigestOfEncodedIsComputeDigest(t *testing.T) {
	names := []string{"web-1", "", "<script>&", "ünïcode ✓", "quote\" back\\slash", "line\nbreak\t\u2028", string([]byte{0xff, 'x'})}
	res := []Resource{
		{Name: "conf", Kind: KindFile, Path: "/etc/<app>.conf", Content: "a & b\n", Mode: "0644"},
		{Name: "run", Kind: KindAction, Command: []string{"/bin/true", "<&>"}, Env: map[string]string{"B": "2", "A": "1"}, RestartOn: []string{"conf"}},
	}
	var decls []Declaration
	for i, n := range names {
		decls = append(decls,
			Declaration{Node: n, Generation: int64(i) - 1},
			Declaration{Node: n, Generation: 1 << 40, Modules: []DeclaredModule{}},
			Declaration{Node: "n", Generation: int64(i), Modules: []DeclaredModule{
				{Name: n, Revision: 3, Taken: i%2 == 0, Resources: res},
				{Name: "empty", Revision: 1},
				{Name: "none", Revision: 2, Resources: []Resource{}},
			}},
		)
	}
	for i, d := range decls {
		encoded := make([][]byte, len(d.Modules))
		for j, m := range d.Modules {
			b, err := json.Marshal(m.Resources)
			if err != nil {
				t.Fatal(err)
			}
			encoded[j] = b
		}
		if got, want := DigestOfEncoded(d.Node, d.Generation, d.Modules, encoded), d.ComputeDigest(); got != want {
			t.Errorf("declaration %d (%s): DigestOfEncoded %s, ComputeDigest %s", i, fmt.Sprintf("%q", d.Node), got, want)
		}
	}
}
