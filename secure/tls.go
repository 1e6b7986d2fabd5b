package secure

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
)

// TLS is how to make a TLS connection: whom to trust and who we are.
// The zero value is no TLS.
type TLS struct {
	// Enabled turns TLS on. Setting any other field turns it on too.
	Enabled bool
	// CAFile is a PEM file of the certificates to trust; empty trusts the
	// system roots.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate (chain) and its
	// key, for mutual TLS. Both or neither.
	CertFile, KeyFile string
	// ServerName is the name the server's certificate must carry; empty is
	// the host of the address dialed.
	ServerName string
}

// On says whether the settings ask for TLS.
func (t TLS) On() bool {
	return t.Enabled || t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != ""
}

// Config reads the files and returns the client's tls.Config (TLS 1.2 or
// newer), or nil when TLS is off. A file that cannot be used is a
// *FileError wrapping ErrCAFile or ErrCertFile; a certificate without a key
// (or a key without a certificate) wraps ErrSettings. The files are read
// once, here.
func (t TLS) Config() (*tls.Config, error) {
	if !t.On() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, &FileError{What: "CA file", Path: t.CAFile, Err: ErrCAFile, Cause: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &FileError{What: "CA file", Path: t.CAFile, Err: ErrCAFile, Cause: errors.New("no PEM certificate in it")}
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.CertFile != "" && t.KeyFile != "":
		for _, f := range []struct{ what, path string }{{"client certificate", t.CertFile}, {"client key", t.KeyFile}} {
			if _, err := os.Stat(f.path); err != nil {
				return nil, &FileError{What: f.what, Path: f.path, Err: ErrCertFile, Cause: err}
			}
		}
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			// LoadX509KeyPair's errors name neither file nor hold key bytes.
			return nil, &FileError{What: "client certificate and key", Path: t.CertFile + " and " + t.KeyFile, Err: ErrCertFile, Cause: err}
		}
		cfg.Certificates = []tls.Certificate{cert}
	case t.CertFile != "":
		return nil, settingsErr("client certificate %s given without its key", t.CertFile)
	case t.KeyFile != "":
		return nil, settingsErr("client key %s given without its certificate", t.KeyFile)
	}
	return cfg, nil
}
