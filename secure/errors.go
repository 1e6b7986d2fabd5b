package secure

import (
	"errors"
	"fmt"
)

// Sentinels to branch on with errors.Is.
var (
	// ErrCAFile: the CA file cannot be read or holds no PEM certificate.
	ErrCAFile = errors.New("secure: bad CA file")
	// ErrCertFile: the client certificate or its key cannot be read, is
	// not PEM, or the key does not match the certificate.
	ErrCertFile = errors.New("secure: bad client certificate or key")
	// ErrSecretFile: a file meant to hold a password or token cannot be
	// read or is empty.
	ErrSecretFile = errors.New("secure: bad secret file")
	// ErrSettings: the settings contradict each other or miss a part (a
	// SASL mechanism without a user, a certificate without its key, an
	// unknown mechanism).
	ErrSettings = errors.New("secure: incomplete or contradictory settings")
	// ErrToken: an OAUTHBEARER token could not be obtained at
	// authentication (the file is gone or empty, the command failed).
	ErrToken = errors.New("secure: no OAUTHBEARER token")
)

var errEmpty = errors.New("empty")

// FileError is a file of the settings that cannot be used: what it is
// meant to hold, its path, and why. It never holds the file's content.
type FileError struct {
	// What the file is meant to hold: "CA file", "client certificate",
	// "Kafka SASL password file"...
	What string
	// Path is the file's path as given.
	Path string
	// Err is the sentinel: ErrCAFile, ErrCertFile or ErrSecretFile.
	Err error
	// Cause is why (the os error, "no PEM certificate", a parse error).
	Cause error
}

// Error names the file, its role and the cause.
func (e *FileError) Error() string { return fmt.Sprintf("%s %s: %v", e.What, e.Path, e.Cause) }

// Unwrap returns the sentinel and the cause.
func (e *FileError) Unwrap() []error { return []error{e.Err, e.Cause} }

// settingsErr is an ErrSettings with a message.
func settingsErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSettings}, args...)...)
}
