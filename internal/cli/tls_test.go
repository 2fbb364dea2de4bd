package cli_test

import (
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/tlstest"
)

// The CLI logs in to a region over HTTPS with a self-signed certificate
// given by --ca-file, keeps the file in its profile, and refuses the
// same server without it.
func TestLoginOverTLSWithCAFile(t *testing.T) {
	cert := tlstest.SelfSigned(t)
	e := startE2EWith(t, "", func(c *serve.Config) {
		c.TLS = serve.TLSConfig{CertFile: cert.CertFile, KeyFile: cert.KeyFile, Listen: "127.0.0.1:0"}
	})
	e.url = "https://" + e.srv.TLSAddr.String()

	e.fails([]string{"login", "lab", e.url, e.key}, "certificate")
	out := e.ok("login", "lab", e.url, e.key, "--ca-file", cert.CertFile)
	if !strings.HasPrefix(out, "Logged in to "+e.url+"/MAAS/ as admin") {
		t.Fatalf("login printed %q", out)
	}
	e.ok("machine", "add", "--hostname", "tls-node", "--mac", "52:54:00:12:34:99", "--arch", "amd64")
	if out := e.ok("machines", "list"); !strings.Contains(out, "tls-node") {
		t.Errorf("machines list over HTTPS lacks the machine:\n%s", out)
	}
}
