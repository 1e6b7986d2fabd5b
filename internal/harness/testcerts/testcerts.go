// Package testcerts makes a CA and certificates signed by it, as PEM files,
// for tests of TLS on real servers (Kafka's PEM key stores, redis-server's
// --tls-* files, the clients of package secure). Keys are ECDSA P-256 in
// PKCS#8, which Kafka's PEM key store, Redis and Go all read.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority whose files are in a directory.
type CA struct {
	// CertFile is the CA's certificate (PEM): the file clients trust.
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	dir      string
	serial   int64
}

// Pair is a certificate and its key, as files.
type Pair struct {
	// CertFile is the certificate (PEM).
	CertFile string
	// KeyFile is its key (PEM, PKCS#8, unencrypted).
	KeyFile string
	// BothFile holds the key and then the certificate: a Kafka PEM key store.
	BothFile string
}

// NewCA makes a CA named name in dir.
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{CertFile: filepath.Join(dir, name+".pem"), cert: cert, key: key, dir: dir, serial: 1}
	return ca, writePEM(ca.CertFile, "CERTIFICATE", der)
}

// Spec says what a certificate is for.
type Spec struct {
	// Name is the file name stem and the subject's common name.
	Name string
	// Hosts are the DNS names and IP addresses the certificate carries.
	Hosts []string
	// Client makes a client certificate (else a server one).
	Client bool
	// Expired makes a certificate that expired an hour ago.
	Expired bool
}

// Issue makes a certificate signed by the CA, in its directory.
func (ca *CA) Issue(s Spec) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	ca.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: s.Name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if s.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if s.Expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	}
	for _, h := range s.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	p := Pair{CertFile: filepath.Join(ca.dir, s.Name+".crt"), KeyFile: filepath.Join(ca.dir, s.Name+".key"),
		BothFile: filepath.Join(ca.dir, s.Name+".keystore.pem")}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	for _, f := range []struct {
		path string
		data []byte
	}{{p.CertFile, certPEM}, {p.KeyFile, keyPEM}, {p.BothFile, append(append([]byte{}, keyPEM...), certPEM...)}} {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return Pair{}, err
		}
	}
	return p, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
