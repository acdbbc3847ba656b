package hq

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// KeyFingerprint names a controller's public key the way ssh names keys: SHA256: and the
// unpadded base64 of the key's sha256. hq key prints it and hostd logs it when it learns a
// key, so an operator can compare the two.
func KeyFingerprint(key []byte) string {
	sum := sha256.Sum256(key)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// SignedStatement is what the controller signs for a declaration and a host verifies: the
// node, the generation and the digest together. The digest alone covers them too, but a
// report carries the three apart, and the controller must be able to tell from the signature
// itself that it signed this generation for this node, not only this digest.
func SignedStatement(node string, generation int64, digest string) []byte {
	return []byte("hq declaration\n" + node + "\n" + strconv.FormatInt(generation, 10) + "\n" + digest)
}
