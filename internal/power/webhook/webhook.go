// Package webhook is MAAS's "webhook" power type: power on and off are
// POSTs to URIs, the state is a GET whose answer is matched against
// regexes. It suits smart plugs, PDUs and home-grown power services (such
// as maaspower) behind a small HTTP API.
//
// Differences from MAAS: the regexes are matched case-insensitively; an
// absent power_verify_ssl verifies certificates (MAAS's stored default "n"
// still turns verification off); a power cycle is off, a pause, then on;
// no System_Id header is sent, since drivers are not told the machine.
package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
)

// DefaultCyclePause is how long a power cycle leaves the machine off.
const DefaultCyclePause = 5 * time.Second

// maxBody bounds the query answer read; power states are short.
const maxBody = 1 << 20

// Driver is the webhook power type. The zero value is ready to use.
type Driver struct {
	// CyclePause is the wait between off and on in PowerCycle, so that a
	// switched outlet stays off long enough for the power supply to
	// drain; 0 means DefaultCyclePause.
	CyclePause time.Duration
}

var _ power.Driver = Driver{}

func (Driver) Name() string { return "webhook" }

// Validate checks URIs and compiles the regexes, without any request.
func (Driver) Validate(p map[string]string) error {
	_, err := parse(p)
	return err
}

// BMC is the webhook service (scheme://host[:port] of the query URI, or of
// the on URI without one); the URI's path and query tell machines behind
// one service apart.
func (Driver) BMC(p map[string]string) (power.BMC, error) {
	pp, err := parse(p)
	if err != nil {
		return power.BMC{}, &power.Error{Kind: power.BadParams, Op: "bmc", Err: err}
	}
	u := pp.query
	if u == nil {
		u = pp.on
	}
	return power.BMC{Type: "webhook", Address: u.Scheme + "://" + strings.ToLower(u.Host), System: u.RequestURI()}, nil
}

func (Driver) PowerOn(ctx context.Context, p map[string]string) error {
	return do(ctx, p, "power on", func(pp params) error { return post(ctx, pp, pp.on) })
}

// PowerOff POSTs to the off URI. What that URI does is up to the service,
// so a soft off cannot be promised: it is unsupported.
func (Driver) PowerOff(ctx context.Context, p map[string]string, soft bool) error {
	if soft {
		return &power.Error{Kind: power.Unsupported, Op: "soft power off", Err: fmt.Errorf("webhook has no soft power off")}
	}
	return do(ctx, p, "power off", func(pp params) error { return post(ctx, pp, pp.off) })
}

// PowerCycle is off, a pause, then on: the webhook API has no reset.
func (d Driver) PowerCycle(ctx context.Context, p map[string]string) error {
	pause := d.CyclePause
	if pause <= 0 {
		pause = DefaultCyclePause
	}
	return do(ctx, p, "power cycle", func(pp params) error {
		if err := post(ctx, pp, pp.off); err != nil {
			return err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
		return post(ctx, pp, pp.on)
	})
}

// Query GETs the query URI and matches the answer: the on regex first, as
// MAAS does, then the off regex.
func (Driver) Query(ctx context.Context, p map[string]string) (machine.PowerState, error) {
	st := machine.PowerUnknown
	err := do(ctx, p, "query", func(pp params) error {
		if pp.query == nil {
			return &power.Error{Kind: power.Unsupported, Err: fmt.Errorf("no %s is set", ParamQueryURI)}
		}
		body, err := send(ctx, pp, http.MethodGet, pp.query)
		switch {
		case err != nil:
			return err
		case pp.onRE.MatchString(body):
			st = machine.PowerOn
		case pp.offRE.MatchString(body):
			st = machine.PowerOff
		default:
			// The answer itself is not quoted (see statusError).
			return &power.Error{Kind: power.BMCError, Err: fmt.Errorf("the answer of %s (%d bytes) matches neither %s `%s` nor %s `%s`",
				display(pp.query), len(body), ParamOnRegex, strings.TrimPrefix(pp.onRE.String(), "(?i)"),
				ParamOffRegex, strings.TrimPrefix(pp.offRE.String(), "(?i)"))}
		}
		return nil
	})
	if err != nil {
		return machine.PowerUnknown, err
	}
	return st, nil
}

// SetBootDevice is unsupported: a webhook switches power only.
func (Driver) SetBootDevice(context.Context, map[string]string, power.BootDevice) error {
	return &power.Error{Kind: power.Unsupported, Op: "set boot device", Err: errors.New("a webhook switches power only; it cannot set the boot device")}
}

// do parses the parameters, runs f and classifies its error.
func do(ctx context.Context, raw map[string]string, op string, f func(params) error) error {
	p, err := parse(raw)
	if err != nil {
		return &power.Error{Kind: power.BadParams, Op: op, Err: err}
	}
	return classify(ctx, op, p, f(p))
}

func post(ctx context.Context, p params, u *url.URL) error {
	_, err := send(ctx, p, http.MethodPost, u)
	return err
}

// send makes one request and returns the answer's body. A 404 on a URI
// without a trailing slash is retried with one, as MAAS does for services
// that insist on it.
func send(ctx context.Context, p params, method string, u *url.URL) (string, error) {
	tr := &http.Transport{
		// No proxy from the environment, as in MAAS: power services sit
		// on the local network.
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: !p.verify}, //nolint:gosec // power_verify_ssl=n
		TLSHandshakeTimeout: 15 * time.Second,
		DisableKeepAlives:   true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	body, status, err := request(ctx, client, p, method, u.String())
	if err == nil && status == http.StatusNotFound && !strings.HasSuffix(u.Path, "/") {
		v := *u
		v.Path += "/"
		body, status, err = request(ctx, client, p, method, v.String())
	}
	if err != nil {
		return "", err
	}
	if status < 200 || status > 299 {
		return "", &statusError{status: status, uri: display(u)}
	}
	return body, nil
}

func request(ctx context.Context, client *http.Client, p params, method, uri string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, uri, nil)
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("User-Agent", "Anvil")
	req.Header.Set("Accept", "application/json")
	switch {
	case p.token != "":
		req.Header.Set("Authorization", "Bearer "+p.token)
	case p.user != "" && p.pass != "":
		req.SetBasicAuth(p.user, p.pass)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", 0, err
	}
	return string(b), resp.StatusCode, nil
}
