package secure

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// redacted is what a Secret prints instead of its value.
const redacted = "[redacted]"

// Secret is a password, token or key. Its value is reached only through
// Value: fmt (every verb), slog and encoding/json print "[redacted]", or ""
// for an empty Secret. It names where it came from (a file or a variable)
// for messages.
type Secret struct {
	value  string
	source string
}

// NewSecret wraps a value read elsewhere; source names where it came from
// ("file /etc/x", "$VAR") for messages and must not hold the value.
func NewSecret(value, source string) Secret { return Secret{value: value, source: source} }

// SecretFromFile reads a secret from path; one trailing newline (and
// carriage return) is dropped. A missing, unreadable or empty file is a
// *FileError wrapping ErrSecretFile.
func SecretFromFile(what, path string) (Secret, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Secret{}, &FileError{What: what, Path: path, Err: ErrSecretFile, Cause: err}
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return Secret{}, &FileError{What: what, Path: path, Err: ErrSecretFile, Cause: errEmpty}
	}
	return Secret{value: v, source: "file " + path}, nil
}

// SecretFromEnv reads a secret from the environment variable name; unset or
// empty is an empty Secret (IsZero).
func SecretFromEnv(name string) Secret {
	v := os.Getenv(name)
	if v == "" {
		return Secret{}
	}
	return Secret{value: v, source: "$" + name}
}

// Value returns the secret itself: pass it only to a client.
func (s Secret) Value() string { return s.value }

// IsZero says whether the secret is empty.
func (s Secret) IsZero() bool { return s.value == "" }

// Source names where the secret came from ("file PATH", "$VAR"), never the
// value.
func (s Secret) Source() string { return s.source }

// String returns "[redacted]" (or "" when empty).
func (s Secret) String() string {
	if s.value == "" {
		return ""
	}
	return redacted
}

// GoString returns the same as String, so %#v hides the value too.
func (s Secret) GoString() string { return s.String() }

// Format prints String for every verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// LogValue logs String.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON encodes String.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }
