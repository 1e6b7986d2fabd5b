package secure

import "strings"

// Lookup reads a command's settings by name: urfave/cli's *cli.Command, or
// any configuration of string and bool values. A name never set reads as
// "" or false.
type Lookup interface {
	// String is the named string setting's value.
	String(name string) string
	// Bool is the named switch's value.
	Bool(name string) bool
}

// Setting is one setting of KafkaValues or RedisValues as a command offers
// it, for its flags or configuration keys: the same settings, defined once.
type Setting struct {
	// Name is the setting's name with the caller's prefix: "kafka-tls-ca".
	Name string
	// Bool is true for a switch, false for a string.
	Bool bool
	// Usage is a line of help; it names other settings as --NAME and the
	// password's variable, never a value.
	Usage string
}

// KafkaSettings lists KafkaValues' settings, each name prefix and its
// setting name ("kafka-" gives "kafka-tls-ca"); passwordEnv is the
// variable of the SASL password. KafkaValuesFrom reads them.
func KafkaSettings(prefix, passwordEnv string) []Setting {
	p := "--" + prefix
	return []Setting{
		{prefix + "tls", true, "Kafka over TLS, trusting the system roots (any " + p + "tls-* flag turns TLS on too)"},
		{prefix + "tls-ca", false, "Kafka TLS: PEM file of the CA certificates to trust instead of the system roots"},
		{prefix + "tls-cert", false, "Kafka TLS: PEM client certificate, for mutual TLS (with " + p + "tls-key)"},
		{prefix + "tls-key", false, "Kafka TLS: PEM key of " + p + "tls-cert"},
		{prefix + "tls-server-name", false, "Kafka TLS: the name the brokers' certificates must carry (default: the host dialed)"},
		{prefix + "sasl-mechanism", false, "Kafka SASL mechanism: " + strings.Join(Mechanisms, ", ") +
			" (AWS_MSK_IAM reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)"},
		{prefix + "sasl-user", false, "Kafka SASL user (PLAIN, SCRAM)"},
		{prefix + "sasl-password-file", false, "Kafka SASL password (PLAIN, SCRAM): a file holding it; or set " + passwordEnv},
		{prefix + "sasl-token-file", false, "Kafka OAUTHBEARER: a file holding the token, read again at each authentication"},
		{prefix + "sasl-token-command", false, "Kafka OAUTHBEARER: a command (words split on spaces, no shell) run at each authentication that prints the token"},
	}
}

// KafkaValuesFrom reads KafkaSettings(prefix, passwordEnv) from l.
func KafkaValuesFrom(l Lookup, prefix, passwordEnv string) KafkaValues {
	s := func(name string) string { return l.String(prefix + name) }
	return KafkaValues{TLS: l.Bool(prefix + "tls"), TLSCA: s("tls-ca"), TLSCert: s("tls-cert"), TLSKey: s("tls-key"),
		TLSServerName: s("tls-server-name"), SASLMechanism: s("sasl-mechanism"), SASLUser: s("sasl-user"),
		SASLPasswordFile: s("sasl-password-file"), PasswordEnv: passwordEnv, SASLTokenFile: s("sasl-token-file"),
		SASLTokenCommand: s("sasl-token-command")}
}

// RedisSettings lists RedisValues' settings as KafkaSettings does; a
// rediss:// URL, given elsewhere, turns TLS on too.
func RedisSettings(prefix, passwordEnv string) []Setting {
	p := "--" + prefix
	return []Setting{
		{prefix + "tls-ca", false, "Redis TLS (a rediss:// URL, or any " + p + "tls-* flag, turns it on): PEM file of the CA certificates to trust"},
		{prefix + "tls-cert", false, "Redis TLS: PEM client certificate (with " + p + "tls-key)"},
		{prefix + "tls-key", false, "Redis TLS: PEM key of " + p + "tls-cert"},
		{prefix + "tls-server-name", false, "Redis TLS: the name the server's certificate must carry (default: the host dialed)"},
		{prefix + "user", false, "Redis ACL user (default: the URL's user, or default)"},
		{prefix + "password-file", false, "Redis password of the ACL user: a file holding it; or set " + passwordEnv},
	}
}

// RedisValuesFrom reads RedisSettings(prefix, passwordEnv) from l.
func RedisValuesFrom(l Lookup, prefix, passwordEnv string) RedisValues {
	s := func(name string) string { return l.String(prefix + name) }
	return RedisValues{TLSCA: s("tls-ca"), TLSCert: s("tls-cert"), TLSKey: s("tls-key"), TLSServerName: s("tls-server-name"),
		User: s("user"), PasswordFile: s("password-file"), PasswordEnv: passwordEnv}
}
