package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/secure"
)

// Flag names of the secured-cluster settings (package secure). Secrets
// have no flag: they come from a file flag or an environment variable.
const (
	fKafkaTLS           = "kafka-tls"
	fKafkaTLSCA         = "kafka-tls-ca"
	fKafkaTLSCert       = "kafka-tls-cert"
	fKafkaTLSKey        = "kafka-tls-key"
	fKafkaTLSServerName = "kafka-tls-server-name"
	fKafkaSASL          = "kafka-sasl-mechanism"
	fKafkaSASLUser      = "kafka-sasl-user"
	fKafkaSASLPassFile  = "kafka-sasl-password-file"
	fKafkaSASLTokenFile = "kafka-sasl-token-file"
	fKafkaSASLTokenCmd  = "kafka-sasl-token-command"
	fRedisTLSCA         = "redis-tls-ca"
	fRedisTLSCert       = "redis-tls-cert"
	fRedisTLSKey        = "redis-tls-key"
	fRedisTLSServerName = "redis-tls-server-name"
	fRedisUser          = "redis-user"
	fRedisPassFile      = "redis-password-file"
)

// Environment variables that hold a secret themselves (no flag).
const (
	envKafkaSASLPass = "SHARDPIPE_KAFKA_SASL_PASSWORD"
	envRedisPass     = "SHARDPIPE_REDIS_PASSWORD"
)

// kafkaSecurityFlags are the Kafka TLS and SASL flags of every command that
// connects to Kafka.
func kafkaSecurityFlags() []cli.Flag {
	str := func(name, usage string) cli.Flag {
		return &cli.StringFlag{Name: name, Sources: fromEnv(name), Usage: usage}
	}
	return []cli.Flag{
		&cli.BoolFlag{Name: fKafkaTLS, Sources: fromEnv(fKafkaTLS),
			Usage: "Kafka over TLS, trusting the system roots (any --kafka-tls-* flag turns TLS on too)"},
		str(fKafkaTLSCA, "Kafka TLS: PEM file of the CA certificates to trust instead of the system roots"),
		str(fKafkaTLSCert, "Kafka TLS: PEM client certificate, for mutual TLS (with --kafka-tls-key)"),
		str(fKafkaTLSKey, "Kafka TLS: PEM key of --kafka-tls-cert"),
		str(fKafkaTLSServerName, "Kafka TLS: the name the brokers' certificates must carry (default: the host dialed)"),
		str(fKafkaSASL, "Kafka SASL mechanism: "+strings.Join(secure.Mechanisms, ", ")+" (AWS_MSK_IAM reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)"),
		str(fKafkaSASLUser, "Kafka SASL user (PLAIN, SCRAM)"),
		str(fKafkaSASLPassFile, "Kafka SASL password (PLAIN, SCRAM): a file holding it; or set "+envKafkaSASLPass),
		str(fKafkaSASLTokenFile, "Kafka OAUTHBEARER: a file holding the token, read again at each authentication"),
		str(fKafkaSASLTokenCmd, "Kafka OAUTHBEARER: a command (words split on spaces, no shell) run at each authentication that prints the token"),
	}
}

// redisSecurityFlags are the Redis TLS and ACL-user flags of every command
// that connects to Redis.
func redisSecurityFlags() []cli.Flag {
	str := func(name, usage string) cli.Flag {
		return &cli.StringFlag{Name: name, Sources: fromEnv(name), Usage: usage}
	}
	return []cli.Flag{
		str(fRedisTLSCA, "Redis TLS (a rediss:// URL, or any --redis-tls-* flag, turns it on): PEM file of the CA certificates to trust"),
		str(fRedisTLSCert, "Redis TLS: PEM client certificate (with --redis-tls-key)"),
		str(fRedisTLSKey, "Redis TLS: PEM key of --redis-tls-cert"),
		str(fRedisTLSServerName, "Redis TLS: the name the server's certificate must carry (default: the host dialed)"),
		str(fRedisUser, "Redis ACL user (default: the URL's user, or default)"),
		str(fRedisPassFile, "Redis password of the ACL user: a file holding it; or set "+envRedisPass),
	}
}

// kafkaSecurity reads the Kafka flags into kgo options, adding one line per
// problem to bad.
func kafkaSecurity(c *cli.Command, bad *problems) []kgo.Opt {
	k := secure.Kafka{
		TLS: secure.TLS{Enabled: c.Bool(fKafkaTLS), CAFile: c.String(fKafkaTLSCA), CertFile: c.String(fKafkaTLSCert),
			KeyFile: c.String(fKafkaTLSKey), ServerName: c.String(fKafkaTLSServerName)},
		SASL: secure.SASL{Mechanism: c.String(fKafkaSASL), User: c.String(fKafkaSASLUser),
			TokenFile: c.String(fKafkaSASLTokenFile), TokenCommand: strings.Fields(c.String(fKafkaSASLTokenCmd))},
	}
	if k.SASL.Mechanism != "" || c.String(fKafkaSASLPassFile) != "" {
		// The variable alone, without a mechanism, is not a contradiction:
		// it may be set for other commands.
		n := len(*bad)
		if k.SASL.Password = secretOf(c, bad, fKafkaSASLPassFile, envKafkaSASLPass, "Kafka SASL password file"); len(*bad) > n {
			return nil
		}
	}
	opts, err := k.Opts()
	if err != nil {
		bad.addf("%s", securityProblem(err, "kafka"))
	}
	return opts
}

// redisSecurity reads the Redis flags, adding one line per problem to bad.
func redisSecurity(c *cli.Command, bad *problems) secure.Redis {
	return secure.Redis{
		TLS: secure.TLS{CAFile: c.String(fRedisTLSCA), CertFile: c.String(fRedisTLSCert),
			KeyFile: c.String(fRedisTLSKey), ServerName: c.String(fRedisTLSServerName)},
		User:     c.String(fRedisUser),
		Password: secretOf(c, bad, fRedisPassFile, envRedisPass, "Redis password file"),
	}
}

// secretOf reads a secret from the file flag, or else the variable env.
func secretOf(c *cli.Command, bad *problems, fileFlag, env, what string) secure.Secret {
	if p := c.String(fileFlag); p != "" {
		s, err := secure.SecretFromFile(what, p)
		if err != nil {
			bad.addf("%s: %v", flagRef(fileFlag), err)
		}
		return s
	}
	return secure.SecretFromEnv(env)
}

// securityProblem words a settings error of package secure with the flag
// that fixes it.
func securityProblem(err error, server string) string {
	var fe *secure.FileError
	if errors.As(err, &fe) {
		flag := map[string]string{"CA file": fKafkaTLSCA, "client certificate": fKafkaTLSCert, "client key": fKafkaTLSKey,
			"client certificate and key": fKafkaTLSCert}[fe.What]
		if server == "redis" {
			flag = map[string]string{"CA file": fRedisTLSCA, "client certificate": fRedisTLSCert, "client key": fRedisTLSKey,
				"client certificate and key": fRedisTLSCert}[fe.What]
		}
		if flag != "" {
			return fmt.Sprintf("%s: %v", flagRef(flag), err)
		}
	}
	return fmt.Sprintf("%s: %v", server, err)
}

// secure sets the Redis TLS and ACL-user settings on the target's options.
func (t *redisTarget) secure(r secure.Redis) error {
	if t.clusterOpts != nil {
		return r.ApplyCluster(t.clusterOpts)
	}
	if t.single != nil {
		return r.ApplyOptions(t.single)
	}
	if t.failover != nil {
		return r.ApplyFailover(t.failover)
	}
	return nil
}

// addSecurityFlags gives every command that connects to Kafka (it has
// --brokers) the Kafka security flags, and every one that connects to Redis
// (it has --redis) the Redis ones, after its own flags. bench is left out:
// its workers do not take them yet.
func addSecurityFlags(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.Name == "bench" {
			continue
		}
		var kafka, rds bool
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				kafka = kafka || n == fBrokers
				rds = rds || n == fRedis
			}
		}
		if kafka {
			c.Flags = append(c.Flags, kafkaSecurityFlags()...)
		}
		if rds {
			c.Flags = append(c.Flags, redisSecurityFlags()...)
		}
	}
}

// stepFailed says whether err is a TLS, SASL or authorization failure
// (secure.Diagnose): the server is unavailable to these settings (exit 3).
func stepFailed(err error) bool {
	d := secure.Diagnose(err)
	return d != nil && d.Step != secure.StepConnect
}

// stepLine words a TLS, SASL or authorization failure: the server, the
// step that failed and why, what to fix and the flags that fix it. A
// failed TCP connect keeps the lines of problemLine.
func stepLine(err error, brokers []string) (string, bool) {
	d := secure.Diagnose(err)
	if d == nil || d.Step == secure.StepConnect {
		return "", false
	}
	server := "kafka " + strings.Join(brokers, ",")
	var ue *admin.UnreachableError
	if errors.As(err, &ue) && strings.HasPrefix(ue.Server, "redis") {
		server = ue.Server
	}
	redis := strings.HasPrefix(server, "redis")
	var flags []string
	switch {
	case d.Step == secure.StepTLS && redis:
		flags = []string{fRedisTLSCA, fRedisTLSCert, fRedisTLSServerName}
	case d.Step == secure.StepTLS:
		flags = []string{fKafkaTLSCA, fKafkaTLSCert, fKafkaTLSServerName}
	case (d.Step == secure.StepAuthentication || d.Step == secure.StepMechanism) && redis:
		flags = []string{fRedisUser, fRedisPassFile}
	case d.Step == secure.StepAuthentication || d.Step == secure.StepMechanism:
		flags = []string{fKafkaSASL, fKafkaSASLUser, fKafkaSASLPassFile, fKafkaSASLTokenFile}
	}
	line := fmt.Sprintf("%s: %v", server, d)
	if ue != nil {
		line = fmt.Sprintf("%s: %s: %v", server, ue.Request, d)
	}
	if len(flags) > 0 {
		line += " (" + "--" + strings.Join(flags, ", --") + ")"
	}
	return line, true
}

// checkAccess runs after preflight: the principal may describe the group
// (admin.CheckGroupAccess) and the Redis user may reach the ledger's keys
// (admin.CheckRedisKeys, read-only). A refusal is exit 3 naming the step.
func checkAccess(ctx context.Context, rc runConfig, rdb redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, rc.connectTimeout)
	defer cancel()
	err := withAdmin(rc.brokers, rc.kafkaOpts, func(adm *kadm.Client) error { return admin.CheckGroupAccess(ctx, adm, rc.group) })
	if err == nil {
		keys := []string{rc.prefix + "preflight-probe"}
		if rc.totals != nil {
			keys = append(keys, rc.totals.Hash)
		}
		err = admin.CheckRedisKeys(ctx, rdb, rc.redis.desc, keys...)
	}
	return exitFor(err, rc.brokers, rc.connectTimeout)
}
