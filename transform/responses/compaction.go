package responses

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// A compaction item (CONTRACT.md §14; Open Responses CompactionBody) holds
// a summary of the conversation before it, written by the upstream model
// when a client asked to compact (POST /v1/responses/compact, or a
// compaction_trigger input item). Clients treat its encrypted_content as
// opaque and send the item back in a later input, where it stands for
// everything it summarised.
//
// llmstream's encrypted_content is the summary sealed with AES-256-GCM:
// confidential (a client log does not show it) and integrity-protected
// (an item llmstream did not write, or one altered, fails to open and the
// request is a 400, rather than arbitrary text being passed to the model
// as if it were its own summary). The key is derived from a secret the
// HTTP layer keeps with the route's store, so that every Caddy sharing
// one Redis store opens the items any of them wrote.

// compactionPrefix starts every encrypted_content llmstream writes: its
// name and the format version, so that a foreign item (OpenAI's own start
// with "gAAAA") is told apart before any decryption.
const compactionPrefix = "llmstream.c1."

// compactionAAD binds a sealed summary to its use: the same key sealing
// something else could never be opened as a compaction.
var compactionAAD = []byte("llmstream compaction item v1")

// ErrForeignCompaction is the error of Sealer.Open for an encrypted_content
// this deployment did not write, or one that was altered.
var ErrForeignCompaction = errors.New("the compaction item was not written by this llmstream (or was altered)")

// Sealer seals and opens compaction summaries with one key. It is safe for
// concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer whose key is derived from secret (SHA-256 of
// a domain label and the secret: any secret of at least 16 bytes, random
// or configured, gives a full-strength key).
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) < 16 {
		return nil, fmt.Errorf("compaction key: %d bytes, want at least 16", len(secret))
	}
	h := sha256.New()
	h.Write([]byte("llmstream compaction key v1\x00"))
	h.Write(secret)
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("compaction key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("compaction key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns the encrypted_content of summary: the prefix, then the
// nonce and the sealed summary in unpadded base64url.
func (s *Sealer) Seal(summary []byte) string {
	n := s.aead.NonceSize()
	buf := make([]byte, n, n+len(summary)+s.aead.Overhead())
	_, _ = rand.Read(buf) // crypto/rand.Read never fails (Go 1.24+)
	buf = s.aead.Seal(buf, buf[:n], summary, compactionAAD)
	return compactionPrefix + base64.RawURLEncoding.EncodeToString(buf)
}

// Open returns the summary an encrypted_content sealed, or
// ErrForeignCompaction.
func (s *Sealer) Open(enc string) ([]byte, error) {
	rest, ok := strings.CutPrefix(enc, compactionPrefix)
	if !ok {
		return nil, ErrForeignCompaction
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n+s.aead.Overhead() {
		return nil, ErrForeignCompaction
	}
	out, err := s.aead.Open(nil, raw[:n], raw[n:], compactionAAD)
	if err != nil {
		return nil, ErrForeignCompaction
	}
	return out, nil
}

// SummaryPrompt is what the upstream model is asked, after the
// conversation, to write a compaction summary.
const SummaryPrompt = "Write a summary of the conversation above for yourself, to continue it later " +
	"without the conversation itself: only this summary will remain. Keep the user's goal and every " +
	"instruction and preference they gave, the decisions made and why, what was done (files, commands, " +
	"tool results that matter, exact names, paths, numbers and identifiers), what failed, and what remains " +
	"to do next. Write the summary only, in plain text, with no preamble."

// summaryLead heads the message that stands for a compaction item in a
// later request: the model must read it as the conversation so far, not
// as the user's new words.
const summaryLead = "[Summary of the earlier conversation, which was compacted. Continue from it.]\n\n"
