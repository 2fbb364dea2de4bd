package ipmi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
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

func kindOf(ctx context.Context, p params, err error) (power.Kind, string) {
	addr := p.address()
	var setup *setupError
	inSetup := errors.As(err, &setup)

	// Authentication first: when several cipher suites were tried, one
	// refusal of the credentials explains the others' failures.
	if errors.Is(err, client.ErrRAKPAuthentication) || strings.Contains(err.Error(), client.ErrRAKPAuthentication.Error()) {
		return power.AuthRefused, fmt.Sprintf("%s refused the login of user %q: wrong user name or password", addr, p.user)
	}
	statuses := rmcpStatuses(err)
	for _, s := range statuses {
		switch s {
		case types.RmcpStatusCodeUnauthorizedName, types.RmcpStatusCodeInvalidNameLength,
			types.RmcpStatusCodeInvalidIntegrityCheckValue, types.RmcpStatusCodeUnauthorizedGUID:
			return power.AuthRefused, fmt.Sprintf("%s refused the login of user %q: %s", addr, p.user, s)
		case types.RmcpStatusCodeInvalidRole, types.RmcpStatusCodeUnauthorizedRoleOfPriLevel:
			return power.AuthRefused, fmt.Sprintf("%s does not grant user %q privilege level %s: %s", addr, p.user, p.priv, s)
		}
	}
	if strings.Contains(err.Error(), "anonymous login is not enabled") {
		return power.AuthRefused, fmt.Sprintf("%s does not allow anonymous logins; set %s", addr, ParamUser)
	}
	if re, ok := types.IsResponseError(err); ok && inSetup {
		if kind, msg, ok := setupCode(addr, p, err, re.CompletionCode()); ok {
			return kind, msg
		}
	}

	// The socket's read deadline is ctx's, and may fire just before ctx
	// itself reports it.
	deadline, has := ctx.Deadline()
	late := has && !time.Now().Before(deadline)
	if ctxErr := ctx.Err(); ctxErr != nil || late || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if errors.Is(ctxErr, context.Canceled) || (ctxErr == nil && errors.Is(err, context.Canceled)) {
			return power.Timeout, fmt.Sprintf("cancelled while waiting for %s", addr)
		}
		return power.Timeout, fmt.Sprintf("no answer from %s before the deadline", addr)
	}

	for _, s := range statuses {
		switch s {
		case types.RmcpStatusCodeNoResToCreateSess, types.RmcpStatusCodeNoResToCreateSessAtRole:
			return power.BMCError, fmt.Sprintf("%s has insufficient resources for session (all its session slots are in use): %s", addr, s)
		case types.RmcpStatusCodeInvalidSessionID, types.RmcpStatusCodeInactiveSessionID:
			return power.BMCError, fmt.Sprintf("%s dropped the session while it was being opened (too many logins at once?): %s", addr, s)
		}
	}

	if errors.Is(err, syscall.ECONNREFUSED) {
		return power.Unreachable, fmt.Sprintf("nothing answers IPMI on %s (connection refused)", addr)
	}
	if errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return power.Unreachable, fmt.Sprintf("no route to %s", addr)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return power.Unreachable, fmt.Sprintf("cannot resolve %s: %v", p.host, dns)
	}
	var ne net.Error
	silent := (errors.As(err, &ne) && ne.Timeout()) || noDatagram(err)
	if silent && inSetup && strings.Contains(err.Error(), "ActivateSession failed") {
		// IPMI 1.5: the BMC answered the challenge but not the Activate
		// Session it could not authenticate, as ipmi_sim does for a wrong
		// password.
		return power.AuthRefused, fmt.Sprintf("%s ignored the login of user %q after the challenge, as BMCs do for a wrong password", addr, p.user)
	}
	if silent {
		if n := attempts(err); n > 0 {
			return power.Unreachable, fmt.Sprintf("no answer from %s (UDP, %d attempts)", addr, n)
		}
		return power.Unreachable, fmt.Sprintf("no answer from %s (UDP)", addr)
	}

	for _, s := range statuses {
		switch s {
		case types.RmcpStatusCodeInvalidAuthAlg, types.RmcpStatusCodeInvalidIntegrityAlg, types.RmcpStatusCodeInvalidConfidentAlg,
			types.RmcpStatusCodeNoCipherSuiteMatch, types.RmcpStatusCodeNoMatchingAuthPayload, types.RmcpStatusCodeNoMatchingIntegrityPayload:
			return power.Unsupported, fmt.Sprintf("%s offers none of cipher suites %v (set %s to one it offers): %s", addr, p.ciphers, ParamCipherSuite, s)
		}
	}
	if len(statuses) > 0 {
		return power.BMCError, fmt.Sprintf("%s refused the session: %s", addr, statuses[0])
	}
	if text := err.Error(); strings.Contains(text, "Open Session failed") && strings.Contains(text, "unpack session setup response failed") {
		// ipmi_sim answers an Open Session it refuses with two bytes
		// (tag, status) that go-ipmi cannot unpack, so the status is lost;
		// what Open Session refuses is nearly always the cipher suite.
		return power.Unsupported, fmt.Sprintf("%s refused to open a session with cipher suites %v (its short answer hides why; usually an unsupported suite, set %s)", addr, p.ciphers, ParamCipherSuite)
	}

	if re, ok := types.IsResponseError(err); ok {
		cc := re.CompletionCode()
		switch cc {
		case types.CodeInsufficientPrivilege:
			return power.AuthRefused, fmt.Sprintf("%s: user %q lacks the privilege for this (completion code %#02x: %s)", addr, p.user, uint8(cc), cc)
		case types.CodeInvalidCommand, types.CodeInvalidCommandForLUN, types.CodeNotSupported, types.CodeSubFnDisabled,
			types.CodeParameterNotSupported, types.CodeRequestDataFieldInvalid:
			// The requests are valid per spec, so a BMC that finds a
			// field invalid lacks that option (ipmi_sim answers CCh to
			// chassis control it cannot carry out).
			return power.Unsupported, fmt.Sprintf("%s cannot do this (completion code %#02x: %s)", addr, uint8(cc), scrub(p, ccWords(re)))
		}
		return power.BMCError, fmt.Sprintf("%s answered with completion code %#02x: %s", addr, uint8(cc), scrub(p, ccWords(re)))
	}
	return power.BMCError, fmt.Sprintf("%s: %s", addr, scrub(p, err.Error()))
}

// scrub hides the password in text that came from go-ipmi or the BMC.
// go-ipmi never puts it in an error, but a BMC could echo it.
func scrub(p params, s string) string {
	if p.pass == "" {
		return s
	}
	return strings.ReplaceAll(s, p.pass, "********")
}

// setupCode classifies completion codes of the session-opening commands
// (Set Session Privilege Level; IPMI 1.5's Get Session Challenge and
// Activate Session), whose command-specific codes go-ipmi names in the
// error text.
func setupCode(addr string, p params, err error, cc types.CompletionCode) (power.Kind, string, bool) {
	text := err.Error()
	switch {
	case cc == types.CodeInsufficientPrivilege,
		strings.Contains(text, "SetSessionPrivilegeLevel") && (cc == 0x80 || cc == 0x81),
		strings.Contains(text, "ActivateSession") && cc == 0x86:
		return power.AuthRefused, fmt.Sprintf("%s does not grant user %q privilege level %s (completion code %#02x)", addr, p.user, p.priv, uint8(cc)), true
	case strings.Contains(text, "ActivateSession") && cc == 0x85:
		// The BMC could not authenticate the request: a wrong password
		// gives the same answer as a stale session id.
		return power.AuthRefused, fmt.Sprintf("%s refused the login of user %q: wrong user name or password (completion code %#02x)", addr, p.user, uint8(cc)), true
	case strings.Contains(text, "GetSessionChallenge") && (cc == 0x81 || cc == 0x82):
		return power.AuthRefused, fmt.Sprintf("%s refused the login of user %q: unknown user (completion code %#02x)", addr, p.user, uint8(cc)), true
	case strings.Contains(text, "ActivateSession") && cc >= 0x81 && cc <= 0x83:
		return power.BMCError, fmt.Sprintf("%s has insufficient resources for session (completion code %#02x)", addr, uint8(cc)), true
	}
	return "", "", false
}

// ccWords is the completion code's meaning as go-ipmi words it.
func ccWords(re *types.ResponseError) string {
	msg := re.Error()
	if i := strings.Index(msg, "is not normal: "); i >= 0 {
		return msg[i+len("is not normal: "):]
	}
	return re.CompletionCode().String()
}

// rmcpStatusText is how go-ipmi words a RMCP+ status in errors.
var rmcpStatusText = regexp.MustCompile(`RMCP\+ status 0x([0-9a-fA-F]{1,2})`)

// rmcpStatuses are the RMCP+ status codes the BMC refused the login with.
// go-ipmi joins the errors of each cipher suite it tried with %v, which
// drops the typed errors, so their text is read as well.
func rmcpStatuses(err error) []types.RmcpStatusCode {
	var out []types.RmcpStatusCode
	for _, s := range collect[*types.RmcpStatusError](err) {
		out = append(out, s.StatusCode())
	}
	for _, m := range rmcpStatusText.FindAllStringSubmatch(err.Error(), -1) {
		if n, perr := strconv.ParseUint(m[1], 16, 8); perr == nil && !slices.Contains(out, types.RmcpStatusCode(n)) {
			out = append(out, types.RmcpStatusCode(n))
		}
	}
	return out
}

// noDatagram matches go-ipmi's unexported "no datagram matched before
// deadline", its way of saying that nothing answered the request.
func noDatagram(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no datagram matched") || strings.Contains(s, "no matching IPMI response") ||
		strings.Contains(s, "UDP read timed out") || strings.Contains(s, "i/o timeout")
}

// attempts reads go-ipmi's "after N attempt(s)"; 0 when absent.
func attempts(err error) int {
	var n int
	s := err.Error()
	if i := strings.Index(s, " after "); i >= 0 {
		fmt.Sscanf(s[i+len(" after "):], "%d attempt", &n)
	}
	return n
}

// collect finds every error of type T in err's tree, including the
// branches of errors.Join (go-ipmi joins one error per cipher suite).
func collect[T error](err error) []T {
	var out []T
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if t, ok := e.(T); ok {
			out = append(out, t)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}
