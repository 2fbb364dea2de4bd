package client

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// TrustCAFile makes the client trust the PEM certificates in path (a
// region's self-signed certificate, or the CA that signed it) in
// addition to the system's.
func (c *Client) TrustCAFile(path string) error {
	if path == "" {
		return nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("CA file %s: no PEM certificate in it", path)
	}
	tr, ok := c.HTTP.Transport.(*http.Transport)
	if !ok {
		return fmt.Errorf("CA file: the client's transport is not an *http.Transport")
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return nil
}
