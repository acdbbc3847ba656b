package hq

import (
	"encoding/json"
	"testing"
)

// FuzzValidateModule feeds arbitrary bodies through the module decoder and validator: it must
// never panic, and a module it accepts must survive a round trip unchanged and still validate.
func FuzzValidateModule(f *testing.F) {
	f.Add([]byte(`{"resources":[{"name":"a","kind":"file","path":"/etc/a","content":"x","mode":"0644","validate":["grep","-q","x","{path}"]}]}`))
	f.Add([]byte(`{"resources":[{"name":"s","kind":"service","command":["{root}/bin/s"],"env":{"A":"b"},"restart_on":["a"],"health":{"http":"http://127.0.0.1:1/"}},{"name":"a","kind":"directory","path":"/a"}]}`))
	f.Add([]byte(`{"resources":[{"name":"l","kind":"symlink","path":"/a/../b","target":"x"},{"name":"l","kind":"absent","path":"/"}]}`))
	f.Add([]byte(`{"resources":[{"name":"g","kind":"action","command":[""],"gate":false,"group":"p q"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var m struct {
			Resources []Resource `json:"resources"`
		}
		if json.Unmarshal(body, &m) != nil {
			return
		}
		if err := ValidateModule(m.Resources); err != nil {
			if ErrorCode(err) != CodeInvalid {
				t.Fatalf("validation error with code %s: %v", ErrorCode(err), err)
			}
			return
		}
		again, _ := json.Marshal(m.Resources)
		var back []Resource
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatal(err)
		}
		if err := ValidateModule(back); err != nil {
			t.Fatalf("a valid module no longer validates after a round trip: %v", err)
		}
		for i := range back {
			if back[i].Digest() != m.Resources[i].Digest() {
				t.Fatalf("resource %d changed in a round trip", i)
			}
			if !validPath(back[i].Path) && back[i].Path != "" {
				t.Fatalf("accepted path %q", back[i].Path)
			}
		}
	})
}

// FuzzValidName: a valid name never holds a path separator or starts with punctuation.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"web-1", "../x", "a/b", ".hidden", "", "x.y_z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidName(s) {
			return
		}
		for _, c := range s {
			if c == '/' || c == 0 || c == ' ' {
				t.Fatalf("%q accepted", s)
			}
		}
		if s[0] == '.' || s[0] == '-' || len(s) > MaxNameLen {
			t.Fatalf("%q accepted", s)
		}
	})
}
