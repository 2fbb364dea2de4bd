package ipmi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/power"
)

// setupError marks a failure while opening the session, where completion
// codes mean something else than in commands (a refused privilege level
// is an authorisation failure, not a broken BMC).
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// classify turns an error from go-ipmi or the network into a *power.Error
// whose message says what happened in operator's terms.
func classify(ctx context.Context, op string, p params, err error) error {
	if err == nil {
		return nil
	}
	var pe *power.Error
	if errors.As(err, &pe) {
		return pe
	}
	kind, msg := kindOf(ctx, p, err)
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

// failure is an error being classified, with what is read off it once.
type failure struct {
	p        params
	addr     string
	err      error
	text     string
	setup    bool                   // failed while logging in
	statuses []types.RmcpStatusCode // RMCP+ refusals of the login
}

// kindOf runs the checks in order of how much they explain: a refusal of
// the credentials explains the failures of the other cipher suites tried,
// and a deadline explains a missing answer.
func kindOf(ctx context.Context, p params, err error) (power.Kind, string) {
	f := &failure{p: p, addr: p.address(), err: err, text: err.Error(), statuses: rmcpStatuses(err)}
	var setup *setupError
	f.setup = errors.As(err, &setup)
	for _, check := range []func() (power.Kind, string, bool){
		f.auth, func() (power.Kind, string, bool) { return f.deadline(ctx) }, f.sessionSlots, f.network, f.cipher, f.completion,
	} {
		if kind, msg, ok := check(); ok {
			return kind, msg
		}
	}
	return power.BMCError, fmt.Sprintf("%s: %s", f.addr, scrub(p, f.text))
}

func (f *failure) auth() (power.Kind, string, bool) {
	refused := fmt.Sprintf("%s refused the login of user %q", f.addr, f.p.user)
	if errors.Is(f.err, client.ErrRAKPAuthentication) || strings.Contains(f.text, client.ErrRAKPAuthentication.Error()) {
		return power.AuthRefused, refused + ": wrong user name or password", true
	}
	for _, s := range f.statuses {
		switch s {
		case types.RmcpStatusCodeUnauthorizedName, types.RmcpStatusCodeInvalidNameLength,
			types.RmcpStatusCodeInvalidIntegrityCheckValue, types.RmcpStatusCodeUnauthorizedGUID:
			return power.AuthRefused, fmt.Sprintf("%s: %s", refused, s), true
		case types.RmcpStatusCodeInvalidRole, types.RmcpStatusCodeUnauthorizedRoleOfPriLevel:
			return power.AuthRefused, fmt.Sprintf("%s does not grant user %q privilege level %s: %s", f.addr, f.p.user, f.p.priv, s), true
		}
	}
	if strings.Contains(f.text, "anonymous login is not enabled") {
		return power.AuthRefused, fmt.Sprintf("%s does not allow anonymous logins; set %s", f.addr, ParamUser), true
	}
	re, ok := types.IsResponseError(f.err)
	if !f.setup || !ok {
		return "", "", false
	}
	// Completion codes of the login commands (Set Session Privilege
	// Level; IPMI 1.5's Get Session Challenge and Activate Session), which
	// go-ipmi names in the error text.
	cc := re.CompletionCode()
	switch {
	case cc == types.CodeInsufficientPrivilege,
		strings.Contains(f.text, "SetSessionPrivilegeLevel") && (cc == 0x80 || cc == 0x81),
		strings.Contains(f.text, "ActivateSession") && cc == 0x86:
		return power.AuthRefused, fmt.Sprintf("%s does not grant user %q privilege level %s (completion code %#02x)", f.addr, f.p.user, f.p.priv, uint8(cc)), true
	case strings.Contains(f.text, "ActivateSession") && cc == 0x85:
		// The BMC could not authenticate the request: a wrong password
		// gives the same answer as a stale session id.
		return power.AuthRefused, fmt.Sprintf("%s: wrong user name or password (completion code %#02x)", refused, uint8(cc)), true
	case strings.Contains(f.text, "GetSessionChallenge") && (cc == 0x81 || cc == 0x82):
		return power.AuthRefused, fmt.Sprintf("%s: unknown user (completion code %#02x)", refused, uint8(cc)), true
	}
	return "", "", false
}

func (f *failure) deadline(ctx context.Context) (power.Kind, string, bool) {
	// The socket's read deadline is ctx's, and may fire just before ctx
	// itself reports it.
	d, has := ctx.Deadline()
	late := has && !time.Now().Before(d)
	ctxErr := ctx.Err()
	switch {
	case errors.Is(ctxErr, context.Canceled) || (ctxErr == nil && errors.Is(f.err, context.Canceled)):
		return power.Timeout, fmt.Sprintf("cancelled while waiting for %s", f.addr), true
	case ctxErr != nil || late || errors.Is(f.err, context.DeadlineExceeded):
		return power.Timeout, fmt.Sprintf("no answer from %s before the deadline", f.addr), true
	}
	return "", "", false
}

func (f *failure) sessionSlots() (power.Kind, string, bool) {
	for _, s := range f.statuses {
		switch s {
		case types.RmcpStatusCodeNoResToCreateSess, types.RmcpStatusCodeNoResToCreateSessAtRole:
			return power.BMCError, fmt.Sprintf("%s has insufficient resources for session (all its session slots are in use): %s", f.addr, s), true
		case types.RmcpStatusCodeInvalidSessionID, types.RmcpStatusCodeInactiveSessionID:
			return power.BMCError, fmt.Sprintf("%s dropped the session while it was being opened (too many logins at once?): %s", f.addr, s), true
		}
	}
	if re, ok := types.IsResponseError(f.err); ok && f.setup && strings.Contains(f.text, "ActivateSession") {
		if cc := re.CompletionCode(); cc >= 0x81 && cc <= 0x83 {
			return power.BMCError, fmt.Sprintf("%s has insufficient resources for session (completion code %#02x)", f.addr, uint8(cc)), true
		}
	}
	return "", "", false
}

func (f *failure) network() (power.Kind, string, bool) {
	if errors.Is(f.err, syscall.ECONNREFUSED) {
		return power.Unreachable, fmt.Sprintf("nothing answers IPMI on %s (connection refused)", f.addr), true
	}
	if errors.Is(f.err, syscall.EHOSTUNREACH) || errors.Is(f.err, syscall.ENETUNREACH) {
		return power.Unreachable, fmt.Sprintf("no route to %s", f.addr), true
	}
	var dns *net.DNSError
	if errors.As(f.err, &dns) {
		return power.Unreachable, fmt.Sprintf("cannot resolve %s: %v", f.p.host, dns), true
	}
	var ne net.Error
	if !(errors.As(f.err, &ne) && ne.Timeout()) && !noDatagram(f.text) {
		return "", "", false
	}
	if f.setup && strings.Contains(f.text, "ActivateSession failed") {
		// IPMI 1.5: the BMC answered the challenge but not the Activate
		// Session it could not authenticate, as ipmi_sim does for a wrong
		// password.
		return power.AuthRefused, fmt.Sprintf("%s ignored the login of user %q after the challenge, as BMCs do for a wrong password", f.addr, f.p.user), true
	}
	if n := attempts(f.text); n > 0 {
		return power.Unreachable, fmt.Sprintf("no answer from %s (UDP, %d attempts)", f.addr, n), true
	}
	return power.Unreachable, fmt.Sprintf("no answer from %s (UDP)", f.addr), true
}

func (f *failure) cipher() (power.Kind, string, bool) {
	for _, s := range f.statuses {
		switch s {
		case types.RmcpStatusCodeInvalidAuthAlg, types.RmcpStatusCodeInvalidIntegrityAlg, types.RmcpStatusCodeInvalidConfidentAlg,
			types.RmcpStatusCodeNoCipherSuiteMatch, types.RmcpStatusCodeNoMatchingAuthPayload, types.RmcpStatusCodeNoMatchingIntegrityPayload:
			return power.Unsupported, fmt.Sprintf("%s offers none of cipher suites %v (set %s to one it offers): %s", f.addr, f.p.ciphers, ParamCipherSuite, s), true
		}
	}
	if len(f.statuses) > 0 {
		return power.BMCError, fmt.Sprintf("%s refused the session: %s", f.addr, f.statuses[0]), true
	}
	if strings.Contains(f.text, "Open Session failed") && strings.Contains(f.text, "unpack session setup response failed") {
		// ipmi_sim answers an Open Session it refuses with two bytes
		// (tag, status) that go-ipmi cannot unpack, so the status is lost;
		// what Open Session refuses is nearly always the cipher suite.
		return power.Unsupported, fmt.Sprintf("%s refused to open a session with cipher suites %v (its short answer hides why; usually an unsupported suite, set %s)", f.addr, f.p.ciphers, ParamCipherSuite), true
	}
	return "", "", false
}

func (f *failure) completion() (power.Kind, string, bool) {
	re, ok := types.IsResponseError(f.err)
	if !ok {
		return "", "", false
	}
	cc := re.CompletionCode()
	words := scrub(f.p, ccWords(re))
	switch cc {
	case types.CodeInsufficientPrivilege:
		return power.AuthRefused, fmt.Sprintf("%s: user %q lacks the privilege for this (completion code %#02x: %s)", f.addr, f.p.user, uint8(cc), words), true
	case types.CodeInvalidCommand, types.CodeInvalidCommandForLUN, types.CodeNotSupported, types.CodeSubFnDisabled,
		types.CodeParameterNotSupported, types.CodeRequestDataFieldInvalid:
		// The driver's requests are valid per spec, so a BMC that finds a
		// field invalid lacks that option (ipmi_sim answers CCh to
		// chassis control it cannot carry out).
		return power.Unsupported, fmt.Sprintf("%s cannot do this (completion code %#02x: %s)", f.addr, uint8(cc), words), true
	}
	return power.BMCError, fmt.Sprintf("%s answered with completion code %#02x: %s", f.addr, uint8(cc), words), true
}

// scrub hides the password in text that came from go-ipmi or the BMC.
// go-ipmi never puts it in an error, but a BMC could echo it.
func scrub(p params, s string) string {
	if p.pass == "" {
		return s
	}
	return strings.ReplaceAll(s, p.pass, "********")
}
