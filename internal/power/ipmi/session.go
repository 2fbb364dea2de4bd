package ipmi

import (
	"context"
	"strings"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/power"
)

// do runs one operation in a session of its own: parse, log in, f, log out.
func (d Driver) do(ctx context.Context, raw map[string]string, op string, f func(context.Context, *client.Client, params) error) error {
	p, err := parse(raw)
	if err != nil {
		return &power.Error{Kind: power.BadParams, Op: op, Err: err}
	}
	c, err := d.open(ctx, p)
	if err != nil {
		return classify(ctx, op, p, err)
	}
	err = f(ctx, c, p)
	d.close(ctx, c, p)
	return classify(ctx, op, p, err)
}

func (d Driver) timeout(p params) time.Duration {
	switch {
	case d.Timeout > 0:
		return d.Timeout
	case p.lan15:
		return time.Duration(client.DefaultLanTimeoutSec) * time.Second
	}
	return time.Duration(client.DefaultLanplusTimeoutSec) * time.Second
}

// login is the per-request wait and the resends while logging in (see
// Driver.LoginTimeout). By default: 3 s and one resend, so a dead BMC
// holds a worker 6 s (five 1-s tries before) and a slow one is not asked
// twice. A caller that set Timeout or Retries gets them for the login too.
func (d Driver) login(p params) (time.Duration, int) {
	switch {
	case d.LoginTimeout > 0:
		return d.LoginTimeout, min(d.retries(), 1)
	case d.Timeout > 0 || d.Retries != 0:
		return d.timeout(p), d.retries()
	}
	return max(3*time.Second, d.timeout(p)), 1
}

func (d Driver) retries() int {
	switch {
	case d.Retries < 0:
		return 0
	case d.Retries == 0:
		return client.DefaultLanplusRetries
	}
	return d.Retries
}

// open logs in. go-ipmi caps every wait for an answer at ctx's deadline,
// so ctx bounds the login as well.
func (d Driver) open(ctx context.Context, p params) (*client.Client, error) {
	host := p.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // go-ipmi dials host + ":" + port
	}
	c, err := client.NewClient(host, p.port, p.user, p.pass)
	if err != nil {
		return nil, &power.Error{Kind: power.BadParams, Op: "login", Err: err}
	}
	lt, lr := d.login(p)
	c.WithTimeout(lt).WithRetry(lr).WithMaxPrivilegeLevel(p.priv)
	if p.lan15 {
		c.WithInterface(client.InterfaceLan)
	} else {
		c.WithCipherSuiteID(p.ciphers...)
	}
	if err := c.Connect(ctx); err != nil {
		// go-ipmi keeps its socket until Close. A session exists on the
		// BMC only if the login got as far as a command's completion code
		// (Set Session Privilege Level refused); then it is worth asking
		// the BMC to close it, otherwise a cancelled context makes Close
		// just release the socket.
		var budget time.Duration
		if _, answered := types.IsResponseError(err); answered && ctx.Err() == nil {
			budget = d.timeout(p)
		}
		go closeWithin(c, budget)
		return nil, &setupError{err}
	}
	c.WithTimeout(d.timeout(p)).WithRetry(d.retries())
	return c, nil
}

// close logs out. If the caller's time is up, the session is still closed
// in the background: otherwise it holds one of the BMC's few slots until
// the BMC's inactivity timeout.
//
// Close Session gets the same retries as any request: a lost one leaves
// the session open on the BMC, and a few of those lock every login out.
func (d Driver) close(ctx context.Context, c *client.Client, p params) {
	budget := d.timeout(p) * time.Duration(d.retries()+1)
	if ctx.Err() != nil {
		go closeWithin(c, budget)
		return
	}
	cctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	_ = c.Close(cctx) // the work is done; a lost Close Session only costs the BMC a slot for a while
}

func closeWithin(c *client.Client, budget time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	_ = c.Close(ctx)
}
