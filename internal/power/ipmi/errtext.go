package ipmi

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/bougou/go-ipmi/pkg/types"
)

// go-ipmi reports much of what matters only in its error text: it joins
// the errors of the cipher suites it tried with %v, which drops their
// types, and its "no answer" error is unexported. These read that text.

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
func noDatagram(s string) bool {
	return strings.Contains(s, "no datagram matched") || strings.Contains(s, "no matching IPMI response") ||
		strings.Contains(s, "UDP read timed out") || strings.Contains(s, "i/o timeout")
}

// attempts reads go-ipmi's "after N attempt(s)"; 0 when absent.
func attempts(s string) int {
	var n int
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
