package hq

import (
	"crypto/sha256"
	"encoding/base64"
)

// KeyFingerprint names a controller's public key the way ssh names keys: SHA256: and the
// unpadded base64 of the key's sha256. hq key prints it and hostd logs it when it learns a
// key, so an operator can compare the two.
func KeyFingerprint(key []byte) string {
	sum := sha256.Sum256(key)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}
