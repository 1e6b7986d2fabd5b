package httpeffect

import (
	"crypto/x509"
	"errors"
	"os"
)

// ErrNoCertificate is LoadRootCAs' error for a file holding no PEM
// certificate.
var ErrNoCertificate = errors.New("no PEM certificate in it")

// LoadRootCAs reads the PEM CA certificates of the file at path into a
// pool for RootCAs. A file that cannot be read is its error; one holding
// no certificate is ErrNoCertificate.
func LoadRootCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, ErrNoCertificate
	}
	return pool, nil
}
