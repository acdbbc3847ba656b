package hq

import (
	"fmt"
	"testing"
)

func TestRolloutWaves(t *testing.T) {
	nodes := []string{"a", "b", "c", "d", "e"}
	for _, tc := range []struct {
		p    RolloutPolicy
		want string
	}{
		{RolloutPolicy{MaxUnavailable: Amount{N: 1}}, "[[a] [b] [c] [d] [e]]"},
		{RolloutPolicy{Canary: 1, MaxUnavailable: Amount{N: 2}}, "[[a] [b c] [d e]]"},
		{RolloutPolicy{Canary: 2, MaxUnavailable: Amount{N: 10}}, "[[a b] [c d e]]"},
		{RolloutPolicy{MaxUnavailable: Amount{N: 40, Percent: true}}, "[[a b] [c d] [e]]"},
		{RolloutPolicy{Canary: 9, MaxUnavailable: Amount{N: 1}}, "[[a b c d e]]"},
		{RolloutPolicy{MaxUnavailable: Amount{N: 0}}, "[[a] [b] [c] [d] [e]]"}, // never a wave of none
	} {
		if got := fmt.Sprint(tc.p.Waves(nodes)); got != tc.want {
			t.Errorf("%+v: waves %s, want %s", tc.p, got, tc.want)
		}
	}
	if w := (RolloutPolicy{Canary: 1}).Waves(nil); len(w) != 0 {
		t.Errorf("waves of no nodes: %v", w)
	}
}
