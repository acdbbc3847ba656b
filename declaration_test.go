package hq

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/meshhq/hq/keys"
)

// A declaration whose resources were encoded once digests and marshals to what ComputeDigest
// and json.Marshal make of it, whatever its names hold.
func TestEncodedDeclarationIsTheDeclaration(t *testing.T) {
	for i, d := range declarationCorpus() {
		encoded := make([][]byte, len(d.Modules))
		for j, m := range d.Modules {
			b, err := json.Marshal(m.Resources)
			if err != nil {
				t.Fatal(err)
			}
			encoded[j] = b
		}
		d.SetDigestEncoded(encoded)
		if want := d.ComputeDigest(); d.Digest != want {
			t.Errorf("declaration %d (node %q): digest %s, ComputeDigest %s", i, d.Node, d.Digest, want)
		}
		d.Signature, d.SendID, d.Retry = "c2ln", int64(i), []string{"m/<a>"}
		assertAppendJSON(t, i, &d)
		// Resources replaced after the encoding are encoded anew.
		if len(d.Modules) > 0 {
			d.Modules[0].Resources = []Resource{{Name: "other", Kind: KindAbsent, Path: "/x"}}
			assertAppendJSON(t, i, &d)
		}
	}
}

// Encodings that do not match the modules are not used.
func TestEncodingOfOtherModulesIsIgnored(t *testing.T) {
	d := declarationCorpus()[2]
	d.SetDigestEncoded([][]byte{[]byte("[]")})
	if want := d.ComputeDigest(); d.Digest != want {
		t.Errorf("digest %s from one encoding for three modules, want %s", d.Digest, want)
	}
	assertAppendJSON(t, 2, &d)
}

func assertAppendJSON(t *testing.T, i int, d *Declaration) {
	t.Helper()
	want, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.AppendJSON([]byte("prefix"))
	if err != nil || string(got) != "prefix"+string(want) {
		t.Errorf("declaration %d (node %q): AppendJSON\n%s (%v)\nwant prefix and\n%s", i, d.Node, got, err, want)
	}
}

func declarationCorpus() []Declaration {
	names := []string{"web-1", "", "<script>&", "ünïcode ✓", `quote" back\slash`, "line\nbreak\t\u2028", string([]byte{0xff, 'x'}), `,"modules":null,`}
	res := []Resource{
		{Name: "conf", Kind: KindFile, Path: "/etc/<app>.conf", Content: "a & b\n", Mode: "0644"},
		{Name: "run", Kind: KindAction, Command: []string{"/bin/true", "<&>"}, Env: map[string]string{"B": "2", "A": "1"}, RestartOn: []string{"conf"}},
	}
	var out []Declaration
	for i, n := range names {
		out = append(out,
			Declaration{Node: n, Generation: int64(i) - 1},
			Declaration{Node: n, Generation: 1 << 40, Modules: []DeclaredModule{}, Key: "a2V5", KeyChain: []keys.Vouch{{}}},
			Declaration{Node: "n", Generation: int64(i), ComposedBy: n, ComposedAt: time.Date(2026, 12, 3, 1, 2, 3, 4, time.UTC), Modules: []DeclaredModule{
				{Name: n, Revision: 3, Taken: i%2 == 0, Resources: res},
				{Name: "empty", Revision: 1},
				{Name: "none", Revision: 2, Resources: []Resource{}},
			}},
			Declaration{Node: n, Generation: 2, Modules: []DeclaredModule{{Name: "m", Revision: 1, Resources: res}},
				Secrets: map[string]string{"app/db@2": "-----BEGIN AGE ENCRYPTED FILE-----\n<&>\n", n + "@1": "x"}},
		)
	}
	return out
}
