package secure

import "strings"

// Cleartext names the secret v's SASL mechanism sends as it is without
// TLS, for a start-up warning: "password" for PLAIN, "token" for
// OAUTHBEARER; "" when TLS is on or the mechanism sends none (SCRAM sends
// a proof, AWS_MSK_IAM a signature).
func (v KafkaValues) Cleartext() string {
	if (TLS{Enabled: v.TLS, CAFile: v.TLSCA, CertFile: v.TLSCert, KeyFile: v.TLSKey, ServerName: v.TLSServerName}).On() {
		return ""
	}
	switch strings.ToUpper(strings.TrimSpace(v.SASLMechanism)) {
	case PLAIN:
		return "password"
	case OAUTHBEARER:
		return "token"
	}
	return ""
}
