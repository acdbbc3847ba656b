package keys

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func newKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// A host holding any key of a chain K1→K2→K3 follows it to K3; one holding a key the chain
// does not start from, or a chain broken anywhere past its key, gets nowhere.
func TestFollowKeyChain(t *testing.T) {
	k1, k2, k3, stranger := newKey(t), newKey(t), newKey(t), newKey(t)
	chain := []Vouch{NewVouch(k1, pubOf(k2)), NewVouch(k2, pubOf(k3))}
	for name, held := range map[string]ed25519.PrivateKey{"from K1": k1, "from K2": k2} {
		got, err := FollowChain(pubOf(held), chain)
		if err != nil || !bytes.Equal(got, pubOf(k3)) {
			t.Errorf("%s: %v, %v; want K3", name, got, err)
		}
	}
	if keys, err := Followed(pubOf(k1), chain); err != nil || len(keys) != 2 || !keys[0].Equal(pubOf(k2)) || !keys[1].Equal(pubOf(k3)) {
		t.Errorf("the keys followed from K1: %d, %v; want K2 and K3", len(keys), err)
	}

	forged := NewVouch(stranger, pubOf(k3))
	forged.By = chain[1].By // claims to be K2's vouch, signed by another key
	tampered := chain[1]
	tampered.Key = base64.StdEncoding.EncodeToString(pubOf(stranger)) // K2's signature, another key
	for name, c := range map[string]struct {
		held  ed25519.PublicKey
		chain []Vouch
		want  string
	}{
		"forged vouch":      {pubOf(k1), []Vouch{chain[0], forged}, "does not verify"},
		"tampered key":      {pubOf(k1), []Vouch{chain[0], tampered}, "does not verify"},
		"wrong order":       {pubOf(k1), []Vouch{chain[1], chain[0]}, "out of order"},
		"a gap":             {pubOf(k1), []Vouch{chain[0], NewVouch(stranger, pubOf(k3))}, "out of order"},
		"not from held":     {pubOf(stranger), chain, ErrNotVouched.Error()},
		"empty chain":       {pubOf(k1), nil, ErrNotVouched.Error()},
		"garbled signer":    {pubOf(k1), []Vouch{chain[0], {By: "%%", Key: chain[1].Key, Signature: chain[1].Signature}}, "signer"},
		"garbled key":       {pubOf(k1), []Vouch{{By: chain[0].By, Key: "AAAA", Signature: chain[0].Signature}}, "its key"},
		"garbled signature": {pubOf(k1), []Vouch{{By: chain[0].By, Key: chain[0].Key, Signature: "%%"}}, "does not verify"},
		"too long":          {pubOf(k1), make([]Vouch, MaxChain+1), "more than"},
	} {
		got, err := FollowChain(c.held, c.chain)
		if err == nil || !strings.Contains(err.Error(), c.want) || got != nil {
			t.Errorf("%s: %v, %v; want an error with %q", name, got, err, c.want)
		}
	}
	if _, err := FollowChain(pubOf(stranger), chain); !errors.Is(err, ErrNotVouched) {
		t.Errorf("a chain from a key not held: %v, want ErrNotVouched", err)
	}
}

// A vouch can never pass for a declaration's signature, nor the other way round.
func TestVouchAndDeclarationStatementsDiffer(t *testing.T) {
	k := newKey(t)
	v := NewVouch(k, pubOf(newKey(t)))
	sig, _ := base64.StdEncoding.DecodeString(v.Signature)
	if ed25519.Verify(pubOf(k), DeclarationStatement("hq key", 0, v.Key), sig) {
		t.Fatal("a vouch verifies as a declaration's signature")
	}
	if !strings.HasPrefix(string(VouchStatement(pubOf(k))), "hq key\n") {
		t.Fatalf("vouch statement %q", VouchStatement(pubOf(k)))
	}
}
