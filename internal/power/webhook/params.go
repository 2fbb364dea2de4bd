package webhook

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Power parameters, as MAAS names them.
const (
	ParamOnURI     = "power_on_uri"     // POSTed to power on (required)
	ParamOffURI    = "power_off_uri"    // POSTed to power off (required)
	ParamQueryURI  = "power_query_uri"  // GETted to query; without it Query is unsupported
	ParamOnRegex   = "power_on_regex"   // matched against the query answer; DefaultOnRegex if empty
	ParamOffRegex  = "power_off_regex"  // likewise; DefaultOffRegex if empty
	ParamUser      = "power_user"       // basic auth, sent only with a password
	ParamPass      = "power_pass"       // never appears in errors
	ParamToken     = "power_token"      // bearer token; wins over user and password, as in MAAS
	ParamVerifySSL = "power_verify_ssl" // "y"/"true" verify (Anvil's default), "n"/"false" do not
)

// MAAS's default regexes. They are matched case-insensitively.
const (
	DefaultOnRegex  = `status.*\:.*running`
	DefaultOffRegex = `status.*\:.*stopped`
)

var known = []string{ParamOnURI, ParamOffURI, ParamQueryURI, ParamOnRegex, ParamOffRegex, ParamUser, ParamPass, ParamToken, ParamVerifySSL}

type params struct {
	on, off, query *url.URL
	onRE, offRE    *regexp.Regexp
	user, pass     string
	token          string
	verify         bool
}

// parse checks the parameters; its errors never contain secrets.
func parse(p map[string]string) (params, error) {
	var unknown []string
	for k := range p {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return params{}, fmt.Errorf("unknown power parameters %s (webhook takes %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	var out params
	var err error
	if out.on, err = parseURI(p, ParamOnURI, true); err != nil {
		return params{}, err
	}
	if out.off, err = parseURI(p, ParamOffURI, true); err != nil {
		return params{}, err
	}
	if out.query, err = parseURI(p, ParamQueryURI, false); err != nil {
		return params{}, err
	}
	if out.onRE, err = compile(p, ParamOnRegex, DefaultOnRegex); err != nil {
		return params{}, err
	}
	if out.offRE, err = compile(p, ParamOffRegex, DefaultOffRegex); err != nil {
		return params{}, err
	}
	out.user, out.pass, out.token = p[ParamUser], p[ParamPass], p[ParamToken]
	// MAAS stores "n" (its default: do not verify) or "y"; an absent value
	// verifies, so machines made in Anvil are safe unless told otherwise.
	switch v := strings.ToLower(strings.TrimSpace(p[ParamVerifySSL])); v {
	case "", "y", "yes", "true", "1":
		out.verify = true
	case "n", "no", "false", "0":
	default:
		return params{}, fmt.Errorf("%s must be y or n, not %q", ParamVerifySSL, p[ParamVerifySSL])
	}
	return out, nil
}

func parseURI(p map[string]string, key string, required bool) (*url.URL, error) {
	s := strings.TrimSpace(p[key])
	if s == "" {
		if required {
			return nil, fmt.Errorf("%s is required", key)
		}
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL: %v", key, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s must be an http:// or https:// URL, not %q", key, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s has no host", key)
	}
	if u.User != nil {
		// Credentials in the URL would show in logs and errors.
		return nil, fmt.Errorf("%s must not contain credentials; use %s and %s or %s", key, ParamUser, ParamPass, ParamToken)
	}
	return u, nil
}

func compile(p map[string]string, key, def string) (*regexp.Regexp, error) {
	expr := p[key]
	if expr == "" {
		expr = def
	}
	re, err := regexp.Compile("(?i)" + expr)
	if err != nil {
		return nil, fmt.Errorf("%s %q does not compile (Go RE2 syntax, no look-around or back-references): %v", key, expr, err)
	}
	return re, nil
}

// display is a URI for messages: scheme, host and path, no query (which
// may carry a token).
func display(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.Path
}
