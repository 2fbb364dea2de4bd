package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/anvilmetal/anvil/internal/power"
)

// statusError is an answer outside 2xx. It never carries the answer's
// body: a power URL can point anywhere, and an error that quoted what it
// found would let whoever sets the URL read internal pages through Anvil.
type statusError struct {
	status int
	uri    string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s answered HTTP %d %s", e.uri, e.status, http.StatusText(e.status))
}

// classify turns a request error into a *power.Error. Secrets are scrubbed
// from the message in case the service echoes them; they are only ever
// sent in the Authorization header.
func classify(ctx context.Context, op string, p params, err error) error {
	if err == nil {
		return nil
	}
	var pe *power.Error
	if errors.As(err, &pe) {
		if pe.Op == "" {
			pe.Op = op
		}
		return pe
	}
	kind, msg := kindOf(ctx, err)
	for _, secret := range []string{p.pass, p.token} {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "********")
		}
	}
	return &power.Error{Kind: kind, Op: op, Err: &cause{msg: msg, err: err}}
}

// cause keeps the original error for errors.Is under the scrubbed message.
type cause struct {
	msg string
	err error
}

func (c *cause) Error() string { return c.msg }
func (c *cause) Unwrap() error { return c.err }

func kindOf(ctx context.Context, err error) (power.Kind, string) {
	var se *statusError
	if errors.As(err, &se) {
		switch se.status {
		case http.StatusUnauthorized, http.StatusForbidden:
			return power.AuthRefused, se.Error()
		case http.StatusMethodNotAllowed, http.StatusNotImplemented:
			return power.Unsupported, se.Error()
		}
		return power.BMCError, se.Error()
	}
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	if errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) {
		return power.BadParams, fmt.Sprintf("the TLS certificate is not trusted (%v); set %s=n for this machine to skip verification", innermost(err), ParamVerifySSL)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return power.Unreachable, fmt.Sprintf("cannot connect to %s: %v", op.Addr, op.Err)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return power.Unreachable, dns.Error()
	}
	if ctx.Err() != nil {
		return power.Timeout, fmt.Sprintf("no answer from %s before the deadline", target(err))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return power.Timeout, fmt.Sprintf("no answer from %s in time: %v", target(err), innermost(err))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return power.Unreachable, fmt.Sprintf("%s closed the connection without an answer", target(err))
	}
	return power.BMCError, fmt.Sprintf("%s: %v", target(err), innermost(err))
}

// target is the URI a request error is about, without its query string,
// which may hold a token.
func target(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			return display(u)
		}
	}
	return "the webhook"
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
