package secure

import "strings"

// tokenEnv is the environment of an OAUTHBEARER token command: of environ
// (os.Environ's form), only the variables a program needs to run and to
// reach an identity provider over TLS, none of them secret: PATH, HOME,
// USER, LOGNAME, SHELL, TMPDIR, TZ, LANG, LC_*, SSL_CERT_FILE and
// SSL_CERT_DIR. Every other variable stays with shardpipe: the SHARDPIPE_*
// passwords and any secret of the parent's environment. Never nil, so the
// child never falls back to the whole environment.
func tokenEnv(environ []string) []string {
	env := []string{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "LANG", "SSL_CERT_FILE", "SSL_CERT_DIR":
			env = append(env, kv)
		default:
			if strings.HasPrefix(name, "LC_") {
				env = append(env, kv)
			}
		}
	}
	return env
}
