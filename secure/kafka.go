package secure

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL mechanism names, as the broker's sasl.enabled.mechanisms spells them.
const (
	PLAIN       = "PLAIN"
	SCRAMSHA256 = "SCRAM-SHA-256"
	SCRAMSHA512 = "SCRAM-SHA-512"
	OAUTHBEARER = "OAUTHBEARER"
	AWSMSKIAM   = "AWS_MSK_IAM"
)

// Mechanisms lists the SASL mechanisms SASL.Mechanism accepts.
var Mechanisms = []string{PLAIN, SCRAMSHA256, SCRAMSHA512, OAUTHBEARER, AWSMSKIAM}

// SASL is how a Kafka client authenticates. The zero value is none.
type SASL struct {
	// Mechanism is one of Mechanisms (case-insensitive); empty is no SASL.
	Mechanism string
	// User and Password authenticate PLAIN and SCRAM.
	User string
	// Password is PLAIN's and SCRAM's password.
	Password Secret
	// TokenFile holds the OAUTHBEARER token; it is read again at every
	// authentication (each new connection and each re-authentication the
	// broker asks for), so a token refreshed in place is picked up.
	TokenFile string
	// TokenCommand, when TokenFile is empty, is run (without a shell) at
	// every authentication; its standard output, trimmed, is the token. It
	// gets a clean environment: PATH, HOME, the user, the locale, TMPDIR,
	// TZ and the TLS roots' variables, nothing else (no SHARDPIPE_*).
	TokenCommand []string
	// AWS is AWS_MSK_IAM's credentials; when its AccessKey is empty they
	// are read at every authentication from AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
	AWS AWSCredentials
}

// AWSCredentials are the keys AWS_MSK_IAM signs with.
type AWSCredentials struct {
	// AccessKey is the access key id.
	AccessKey string
	// SecretKey is the secret access key.
	SecretKey Secret
	// SessionToken is the session token of temporary credentials, or empty.
	SessionToken Secret
}

// Kafka is how to reach a secured Kafka: TLS and SASL.
type Kafka struct {
	// TLS settings; off in the zero value.
	TLS TLS
	// SASL settings; none in the zero value.
	SASL SASL
}

// Opts returns the kgo options for k (TLS dialer, SASL mechanism); none for
// the zero value. Files (CA, certificates) are read here, once; token files
// and commands at each authentication. Problems are *FileError or wrap
// ErrSettings, and never hold a secret.
func (k Kafka) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	cfg, err := k.TLS.Config()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, kgo.Dialer(tlsDialer(cfg)))
	}
	m, err := k.SASL.mechanism()
	if err != nil {
		return nil, err
	}
	if m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// tlsDialer dials TCP, then hands the TLS handshake to the caller's context:
// a connect that fails is a *net.OpError, a handshake that fails a TLS
// error, each kept apart for Diagnose.
func tlsDialer(cfg *tls.Config) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		c := cfg.Clone()
		if c.ServerName == "" {
			h, _, err := net.SplitHostPort(host)
			if err != nil {
				h = host
			}
			c.ServerName = h
		}
		d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: c}
		return d.DialContext(ctx, network, host)
	}
}

func (s SASL) mechanism() (sasl.Mechanism, error) {
	mech := strings.ToUpper(strings.TrimSpace(s.Mechanism))
	if mech == "" {
		if s.User != "" || !s.Password.IsZero() || s.TokenFile != "" || len(s.TokenCommand) > 0 {
			return nil, settingsErr("SASL credentials given without a mechanism (want one of %s)", strings.Join(Mechanisms, ", "))
		}
		return nil, nil
	}
	switch mech {
	case PLAIN, SCRAMSHA256, SCRAMSHA512:
		if s.User == "" || s.Password.IsZero() {
			return nil, settingsErr("SASL %s needs a user and a password", mech)
		}
		user, pass := s.User, s.Password.Value()
		switch mech {
		case PLAIN:
			return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
		case SCRAMSHA256:
			return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
		}
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	case OAUTHBEARER:
		if s.TokenFile == "" && len(s.TokenCommand) == 0 {
			return nil, settingsErr("SASL OAUTHBEARER needs a token file or a token command")
		}
		return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
			tok, err := s.token(ctx)
			if err != nil {
				return oauth.Auth{}, err
			}
			return oauth.Auth{Token: tok}, nil
		}), nil
	case AWSMSKIAM:
		creds := s.AWS
		return aws.ManagedStreamingIAM(func(context.Context) (aws.Auth, error) {
			c := creds
			if c.AccessKey == "" {
				c = AWSCredentials{AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: SecretFromEnv("AWS_SECRET_ACCESS_KEY"),
					SessionToken: SecretFromEnv("AWS_SESSION_TOKEN")}
			}
			if c.AccessKey == "" || c.SecretKey.IsZero() {
				return aws.Auth{}, settingsErr("SASL AWS_MSK_IAM needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
			}
			return aws.Auth{AccessKey: c.AccessKey, SecretKey: c.SecretKey.Value(), SessionToken: c.SessionToken.Value(),
				UserAgent: "shardpipe"}, nil
		}), nil
	}
	return nil, settingsErr("unknown SASL mechanism %q (want one of %s)", s.Mechanism, strings.Join(Mechanisms, ", "))
}

// token reads the OAUTHBEARER token from the file, or runs the command.
// Errors wrap ErrToken and hold no token and no command output.
func (s SASL) token(ctx context.Context) (string, error) {
	if s.TokenFile != "" {
		sec, err := SecretFromFile("OAUTHBEARER token file", s.TokenFile)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrToken, err)
		}
		return sec.Value(), nil
	}
	cmd := exec.CommandContext(ctx, s.TokenCommand[0], s.TokenCommand[1:]...)
	cmd.Env = tokenEnv(os.Environ())
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("exit status %d", ee.ExitCode())
		}
		return "", fmt.Errorf("%w: token command %s: %w", ErrToken, s.TokenCommand[0], err)
	}
	tok := strings.TrimSpace(out.String())
	if tok == "" {
		return "", fmt.Errorf("%w: token command %s printed nothing", ErrToken, s.TokenCommand[0])
	}
	return tok, nil
}
