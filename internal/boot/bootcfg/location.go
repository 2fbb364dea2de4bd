package bootcfg

import (
	"fmt"
	"net/url"
	"strings"
)

// location is a validated kernel or initrd address: an http(s) URL split
// into parts, or (scheme "") a path relative to the served root. Configs
// are written from the parts, never from the caller's string, so nothing
// the URL parser tolerated (userinfo, escapes, odd ports) reaches them.
type location struct {
	scheme string // "http", "https" or "" for a path
	host   string // host[:port], IPv6 in brackets
	path   string // without the leading slash
}

func parseLocation(what, s string) (location, error) {
	bad := func(why string) (location, error) {
		return location{}, fmt.Errorf("%w: %s %q: %s", ErrBadParams, what, s, why)
	}
	if s == "" {
		return bad("missing")
	}
	if len(s) > MaxPathLen {
		return bad("too long")
	}
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		if strings.Contains(s, "://") {
			return bad("only http and https URLs, or a path")
		}
		p, ok := cleanImagePath(s)
		if !ok {
			return bad("not a clean path of letters, digits and ._~+=-")
		}
		return location{path: p}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad(err.Error())
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawPath != "" || u.Opaque != "" {
		return bad("no user, query, fragment or escapes")
	}
	if !validHost(u.Host) {
		return bad("host must be a name, IPv4 or [IPv6], with an optional port")
	}
	p, ok := cleanImagePath(u.Path)
	if !ok || !strings.HasPrefix(u.Path, "/") {
		return bad("path must be clean, of letters, digits and ._~+=-")
	}
	return location{scheme: u.Scheme, host: u.Host, path: p}, nil
}

// cleanImagePath is stricter than cleanPath: kernel paths go into three
// config syntaxes, and PXELINUX reads "::" as a server-absolute prefix,
// so ':' and the other punctuation names may hold are refused too.
func cleanImagePath(s string) (string, bool) {
	p, err := cleanPath(s)
	if err != nil || strings.ContainsAny(s, `\:@,`) || s != "/"+p && s != p {
		return "", false
	}
	return p, true
}

// validHost accepts name[:port], a.b.c.d[:port] and [v6][:port].
func validHost(h string) bool {
	host, port := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		host, port = h[1:end], h[end+1:]
		if host == "" || strings.Trim(host, "0123456789abcdefABCDEF:.") != "" {
			return false
		}
	} else {
		if i := strings.IndexByte(h, ':'); i >= 0 {
			host, port = h[:i], h[i:]
		}
		if host == "" || len(host) > 253 || strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != "" {
			return false
		}
	}
	if port == "" {
		return true
	}
	digits, ok := strings.CutPrefix(port, ":")
	if !ok || digits == "" || len(digits) > 5 || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	return true
}

// url renders the location as an absolute URL (iPXE, lpxelinux.0).
func (l location) url() string { return l.scheme + "://" + l.host + "/" + l.path }

// forIPXE: iPXE fetches over HTTP(S) itself; a root-relative path would
// resolve against wherever the script came from, which differs between
// chained and embedded scripts, so only URLs are taken.
func (l location) forIPXE() (string, error) {
	if l.scheme == "" {
		return "", fmt.Errorf("%w: iPXE needs an http(s) URL, not the path %q", ErrBadParams, l.path)
	}
	return l.url(), nil
}

// forGRUB: a path is read from $root (GRUB's own TFTP or HTTP device); an
// http URL becomes GRUB's (http,host:port) device so a TFTP-loaded GRUB
// still fetches kernels over HTTP.
func (l location) forGRUB() (string, error) {
	switch l.scheme {
	case "":
		return "/" + l.path, nil
	case "http":
		return "(http," + l.host + ")/" + l.path, nil
	}
	return "", fmt.Errorf("%w: GRUB cannot fetch %s URLs", ErrBadParams, l.scheme)
}

// forPXELINUX: a relative path is read over TFTP from pxelinux.0's
// directory; lpxelinux.0 fetches http URLs itself.
func (l location) forPXELINUX() (string, error) {
	switch l.scheme {
	case "":
		return l.path, nil
	case "http":
		return l.url(), nil
	}
	return "", fmt.Errorf("%w: PXELINUX cannot fetch %s URLs", ErrBadParams, l.scheme)
}
