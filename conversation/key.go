package conversation

import (
	"crypto/sha256"
	"encoding/hex"
)

// Key names one conversation in a Store. Both parts are hex SHA-256
// digests, so that no store ever holds the raw scope (an Authorization
// header is a credential) and a projectId chosen by a client can never
// escape a directory or a key prefix.
type Key struct {
	// Scope is the digest of the scope value: whose conversations.
	Scope string
	// Conversation is the digest of the agent id and the projectId.
	Conversation string
}

// NewKey returns the key of the conversation of scope about projectID with
// the agent agentID. The inputs are framed with their lengths, so that no
// two different triples share a key.
func NewKey(scope, agentID, projectID string) Key {
	return Key{
		Scope:        digest("llmstream scope", scope),
		Conversation: digest("llmstream conversation", agentID, projectID),
	}
}

// digest returns the hex SHA-256 of the domain label and the parts, each
// preceded by its length.
func digest(label string, parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range append([]string{label}, parts...) {
		l := uint64(len(p))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// String returns "<scope>/<conversation>", for tests; logs never carry a
// key, which would link a user's requests.
func (k Key) String() string { return k.Scope + "/" + k.Conversation }
