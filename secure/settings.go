package secure

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaValues are the Kafka TLS and SASL settings as a command takes them:
// plain strings, files by path, the password from a file or a variable.
// Each field's setting name (SettingError.Setting) is its name in
// lower-case words joined by "-": "tls-ca", "sasl-password-file".
type KafkaValues struct {
	// TLS turns TLS on with the system roots (any TLS file turns it on too).
	TLS bool
	// TLSCA, TLSCert, TLSKey and TLSServerName are TLS's fields.
	TLSCA, TLSCert, TLSKey, TLSServerName string
	// SASLMechanism, SASLUser, SASLTokenFile are SASL's fields;
	// SASLTokenCommand is split on spaces (no shell).
	SASLMechanism, SASLUser, SASLTokenFile, SASLTokenCommand string
	// SASLPasswordFile holds the password; when empty the password is the
	// variable PasswordEnv, read only when a mechanism is given (set alone,
	// it may be meant for other commands).
	SASLPasswordFile, PasswordEnv string
}

// TLSOn reports whether v turns TLS on: TLS, or any TLS file or server
// name.
func (v KafkaValues) TLSOn() bool { return v.tls().On() }

func (v KafkaValues) tls() TLS {
	return TLS{Enabled: v.TLS, CAFile: v.TLSCA, CertFile: v.TLSCert, KeyFile: v.TLSKey, ServerName: v.TLSServerName}
}

// Opts checks v, reads its files once and returns the kgo options (none
// when v asks for nothing). Every problem is a *SettingError naming the
// setting; several are joined (errors.Join). No error holds a secret.
func (v KafkaValues) Opts() ([]kgo.Opt, error) {
	k := Kafka{
		TLS: v.tls(),
		SASL: SASL{Mechanism: v.SASLMechanism, User: v.SASLUser, TokenFile: v.SASLTokenFile,
			TokenCommand: strings.Fields(v.SASLTokenCommand)},
	}
	if v.SASLMechanism != "" || v.SASLPasswordFile != "" {
		var err error
		if k.SASL.Password, err = secretOf("Kafka SASL password file", v.SASLPasswordFile, v.PasswordEnv); err != nil {
			return nil, &SettingError{Setting: "sasl-password-file", Err: err}
		}
	}
	if _, err := k.TLS.Config(); err != nil {
		return nil, tlsSetting(err)
	}
	opts, err := k.Opts()
	if err != nil {
		setting := "sasl-mechanism"
		if strings.Contains(err.Error(), "needs a user") {
			setting = "sasl-user"
		}
		return nil, &SettingError{Setting: setting, Err: err}
	}
	return opts, nil
}

// RedisValues are the Redis TLS and ACL-user settings as a command takes
// them; setting names as KafkaValues ("tls-ca", "user", "password-file").
type RedisValues struct {
	// TLSCA, TLSCert, TLSKey and TLSServerName are TLS's fields (a
	// rediss:// URL turns TLS on by itself).
	TLSCA, TLSCert, TLSKey, TLSServerName string
	// User is the ACL user; empty keeps the URL's.
	User string
	// PasswordFile holds the user's password; when empty, the variable
	// PasswordEnv (unset: the URL's password).
	PasswordFile, PasswordEnv string
}

// Redis checks v, reads its files and returns the settings to apply.
// Problems are *SettingError, as KafkaValues.Opts.
func (v RedisValues) Redis() (Redis, error) {
	r := Redis{TLS: TLS{CAFile: v.TLSCA, CertFile: v.TLSCert, KeyFile: v.TLSKey, ServerName: v.TLSServerName}, User: v.User}
	var err error
	if r.Password, err = secretOf("Redis password file", v.PasswordFile, v.PasswordEnv); err != nil {
		return Redis{}, &SettingError{Setting: "password-file", Err: err}
	}
	if _, err := r.TLS.Config(); err != nil {
		return Redis{}, tlsSetting(err)
	}
	return r, nil
}

// SettingError is a setting that cannot be used: which (a KafkaValues or
// RedisValues setting name, for a command to name its flag) and why.
type SettingError struct {
	// Setting is the setting's name: "tls-ca", "sasl-user", "password-file".
	Setting string
	// Err is the problem: a *FileError, or one wrapping ErrSettings.
	Err error
}

// Error is Err's text (the caller names the setting).
func (e *SettingError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *SettingError) Unwrap() error { return e.Err }

// Settings names the settings (as KafkaValues or RedisValues, redis
// choosing) that fix a failure of e's step; none for connect and
// authorization.
func (e *StepError) Settings(redis bool) []string {
	switch {
	case e.Step == StepTLS:
		return []string{"tls-ca", "tls-cert", "tls-server-name"}
	case e.Step == StepFirstRequest && !redis:
		return []string{"tls", "sasl-mechanism"}
	case (e.Step == StepAuthentication || e.Step == StepMechanism) && redis:
		return []string{"user", "password-file"}
	case e.Step == StepAuthentication || e.Step == StepMechanism:
		return []string{"sasl-mechanism", "sasl-user", "sasl-password-file", "sasl-token-file"}
	}
	return nil
}

func secretOf(what, file, env string) (Secret, error) {
	if file != "" {
		return SecretFromFile(what, file)
	}
	if env == "" {
		return Secret{}, nil
	}
	return SecretFromEnv(env), nil
}

// tlsSetting names the TLS setting of a TLS.Config error.
func tlsSetting(err error) error {
	var fe *FileError
	setting := "tls-cert"
	if errors.As(err, &fe) && fe.What == "CA file" {
		setting = "tls-ca"
	} else if fe != nil && fe.What == "client key" || fe == nil && strings.Contains(err.Error(), "client key") {
		setting = "tls-key"
	}
	return &SettingError{Setting: setting, Err: err}
}
