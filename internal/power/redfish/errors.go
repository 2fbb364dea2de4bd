package redfish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/stmcginnis/gofish/common"

	"github.com/anvilmetal/anvil/internal/power"
)

// classify turns an error from gofish or the network into a *power.Error
// whose message says what happened in operator's terms. The password is
// scrubbed from the message in case a BMC echoes it; it is never sent
// anywhere but the Authorization header, so the wrapped cause cannot hold
// it.
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
	kind, msg := kindOf(ctx, p, err)
	if p.pass != "" {
		msg = strings.ReplaceAll(msg, p.pass, "********")
	}
	return &power.Error{Kind: kind, Op: op, Err: &cause{msg: msg, err: err}}
}

// cause carries the classified message and keeps the original error for
// errors.Is (context.DeadlineExceeded, syscall.ECONNREFUSED).
type cause struct {
	msg string
	err error
}

func (c *cause) Error() string { return c.msg }
func (c *cause) Unwrap() error { return c.err }

func kindOf(ctx context.Context, p params, err error) (power.Kind, string) {
	var re *common.Error
	if errors.As(err, &re) && re.HTTPReturnedStatusCode != 0 {
		kind := httpKind(re)
		msg := fmt.Sprintf("%s answered HTTP %d: %s", p.endpoint, re.HTTPReturnedStatusCode, redfishMessage(re))
		if kind == power.AuthRefused {
			msg += fmt.Sprintf(" (user %q)", p.user)
		}
		return kind, msg
	}
	if untrusted(err) {
		return power.BadParams, fmt.Sprintf("the TLS certificate of %s is not trusted (%v); give the BMC a certificate this host trusts, or set %s=false for this machine",
			p.endpoint, innermost(err), ParamVerifyTLS)
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return power.BadParams, fmt.Sprintf("%s does not speak TLS; use an http:// %s if that is intended", p.endpoint, ParamAddress)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return power.Unreachable, fmt.Sprintf("cannot connect to %s: %v", p.endpoint, op.Err)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return power.Unreachable, fmt.Sprintf("cannot resolve %s: %v", p.endpoint, dns)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.Canceled) {
			return power.Timeout, fmt.Sprintf("cancelled while waiting for %s", p.endpoint)
		}
		return power.Timeout, fmt.Sprintf("no answer from %s before the deadline", p.endpoint)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return power.Timeout, fmt.Sprintf("no answer from %s in time: %v", p.endpoint, innermost(err))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return power.Unreachable, fmt.Sprintf("%s closed the connection without answering", p.endpoint)
	}
	return power.BMCError, fmt.Sprintf("%s: %v", p.endpoint, err)
}

// unsupportedIDs are Redfish message ids that mean "this BMC cannot do
// that" rather than a failure.
var unsupportedIDs = []string{"ActionNotSupported", "ActionParameterNotSupported", "ActionParameterValueNotInList", "PropertyValueNotInList", "PropertyUnknown", "PropertyNotWritable"}

func httpKind(re *common.Error) power.Kind {
	switch re.HTTPReturnedStatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return power.AuthRefused
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return power.Unsupported
	case http.StatusBadRequest:
		for _, info := range re.ExtendedInfos {
			for _, id := range unsupportedIDs {
				if strings.HasSuffix(info.MessageID, "."+id) || info.MessageID == id {
					return power.Unsupported
				}
			}
		}
	}
	return power.BMCError
}

// redfishMessage is the error's human message: the extended infos'
// messages if any, else the status text. The top-level message is not
// used: gofish fills it with the raw body when the answer was not a
// Redfish error, and a body is never echoed (an address pointed at an
// internal page would be read through Anvil).
func redfishMessage(re *common.Error) string {
	var parts []string
	for _, info := range re.ExtendedInfos {
		if info.Message != "" {
			parts = append(parts, info.Message)
		}
	}
	msg := strings.Join(parts, "; ")
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		msg = http.StatusText(re.HTTPReturnedStatusCode)
	}
	return msg
}

func untrusted(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci)
}

// innermost drops the "Get \"https://…\":" wrappers for a shorter message.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
