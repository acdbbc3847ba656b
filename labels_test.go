package hq

import (
	"strings"
	"testing"
)

func TestValidateLabels(t *testing.T) {
	if err := ValidateLabels(map[string]string{"role": "web", "example.com/zone": "eu-1", "empty": ""}); err != nil {
		t.Fatal(err)
	}
	err := ValidateLabels(map[string]string{"role": "web", "bad key": "x", "ok": "-no"})
	if ErrorCode(err) != CodeInvalid || !strings.Contains(err.Error(), `"bad key"`) || len(err.(*Error).Details) != 2 {
		t.Fatalf("%v", err)
	}
	if err := ValidateVars(map[string]string{"motd": "any text at all: {}"}); err != nil {
		t.Fatal(err)
	}
	if err := ValidateVars(map[string]string{"big": strings.Repeat("x", MaxVarValueLen+1)}); ErrorCode(err) != CodeInvalid {
		t.Fatal(err)
	}
}
