package rack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/store"
)

// PowerConfig is what a rack's power worker needs.
type PowerConfig struct {
	// ID is the rack's id in its claims (default: host name and a random
	// suffix, new at every start, so that a restarted rack never takes
	// for its own the leases of the process it replaced).
	ID string
	// Hostname is the name its claims give (default: this host's); a
	// rack started with --hostname claims under that name, as it follows
	// the region under it.
	Hostname string
	// Networks are the BMC networks declared with --bmc-network;
	// InterfaceNetworks adds the subnets of this host's interfaces.
	Networks          []netip.Prefix
	InterfaceNetworks bool
	Drivers           power.Registry
	// Power tunes the commands (timeouts, attempts, back-off) as the
	// region's coordinator is tuned.
	Power power.Config
	// Concurrency caps the commands this rack runs at once (default 8).
	Concurrency int
	// Wait is how long a claim waits for work (default DefaultClaimWait).
	Wait time.Duration
	// Probe checks, before a request is run, that its BMC answers from
	// here (default: Probe, cached); a BMC that does not is given back.
	Probe func(ctx context.Context, bmcKey string) error
	// Within, when set, runs every driver call (tests: inside a network
	// namespace, whose sockets the call then opens).
	Within func(fn func() error) error
	Log    *slog.Logger
}

// PowerWorker claims power requests for the BMCs this rack reaches from
// the region, runs them with the drivers here and reports how they ended.
type PowerWorker struct {
	cl    *client.Client
	cfg   PowerConfig
	nets  []netip.Prefix
	bad   *probeCache
	slots chan struct{} // one per command in flight
	stop  context.CancelFunc
	wg    sync.WaitGroup
	// running are the commands in flight, for Close to wait on.
	running sync.WaitGroup
	// claimOK and claimErr are when a claim last came back and the last
	// error one had, for Health.
	mu       sync.Mutex
	claimOK  time.Time
	claimErr string
	errAt    time.Time
}

// Health is the power service as the rack reports it: running while
// claims come back, degraded (with the error) once they fail.
func (w *PowerWorker) Health() ServiceStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := ServiceStatus{Name: ServicePower, Status: StatusRunning}
	switch {
	case !w.errAt.IsZero() && w.errAt.After(w.claimOK):
		s.Status, s.Info = StatusDegraded, "claims from the region fail: "+w.claimErr
	case w.claimOK.IsZero():
		s.Status, s.Info = StatusUnknown, "no claim has come back yet"
	}
	return s
}

// noteClaim records how a claim ended.
func (w *PowerWorker) noteClaim(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.claimErr, w.errAt = truncate(err.Error(), 200), time.Now()
		return
	}
	w.claimOK = time.Now()
}

// StartPower starts the power worker. Its first claim is made before it
// returns, without waiting for work, so that the region knows this rack
// and its networks at once.
func StartPower(ctx context.Context, cl *client.Client, cfg PowerConfig) (*PowerWorker, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	if cfg.ID == "" {
		cfg.ID = defaultRackID()
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultClaimWait * time.Second
	}
	nets := cfg.Networks
	if cfg.InterfaceNetworks {
		ifn, err := InterfaceNetworks()
		if err != nil {
			return nil, err
		}
		nets = append(append([]netip.Prefix{}, nets...), ifn...)
	}
	nets, err := powerroute.ParseNetworks(powerroute.Strings(nets)) // canonical, no duplicates
	if err != nil {
		return nil, err
	}
	w := &PowerWorker{cl: cl, cfg: cfg, nets: nets, bad: newProbeCache(cfg.Within), slots: make(chan struct{}, cfg.Concurrency)}
	if w.cfg.Probe == nil {
		w.cfg.Probe = w.bad.probe
	}
	first, err := w.claim(ctx, 0)
	if err != nil {
		// The loop retries; boots are answered meanwhile.
		cfg.Log.Warn("power worker: the region does not answer yet", "err", err)
	}
	ctx, w.stop = context.WithCancel(context.Background())
	if first != nil {
		w.slots <- struct{}{}
		w.dispatch(*first)
	}
	for i := 0; i < max(1, cfg.Concurrency/4); i++ {
		w.wg.Add(1)
		go func() { defer w.wg.Done(); w.loop(ctx) }()
	}
	cfg.Log.Info("power worker started", "rack_id", cfg.ID, "bmc_networks", powerroute.Strings(nets))
	return w, nil
}

// ID is the id this rack claims with.
func (w *PowerWorker) ID() string { return w.cfg.ID }

// Networks are the BMC networks this rack declares.
func (w *PowerWorker) Networks() []netip.Prefix { return w.nets }

// Close stops claiming and waits for the commands in flight to be
// reported.
func (w *PowerWorker) Close() {
	w.stop()
	w.wg.Wait()
	w.running.Wait()
}

// PowerIDFor is an enrolled rack's id in its claims: its system id and a
// suffix new at every start, for the reason ID gives.
func PowerIDFor(systemID string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return systemID + "." + hex.EncodeToString(b[:])
}

// PowerRackOf is the system id a claim id of PowerIDFor's names.
func PowerRackOf(id string) string {
	sys, _, _ := strings.Cut(id, ".")
	return sys
}

func defaultRackID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := ""
	for _, c := range host {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' {
			id += string(c)
		}
	}
	if len(id) > 50 {
		id = id[:50]
	}
	return id + "-" + hex.EncodeToString(b[:])
}

// loop is one of the claimers (a quarter of Concurrency, at least one):
// each takes a free slot, claims a request into it, hands it to a
// goroutine and claims the next, backing off while the region cannot be
// reached. Claims run a few side by side, so that a sweep of polls is not
// paced by one round trip to the region per command, and not one per
// slot, which would wake every idle claimer for each request.
func (w *PowerWorker) loop(ctx context.Context) {
	backoff := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case w.slots <- struct{}{}:
		}
		work, err := w.claim(ctx, w.cfg.Wait)
		if err != nil || work == nil {
			<-w.slots
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, time.Second), 30*time.Second)
			w.cfg.Log.Warn("power claim failed; retrying", "err", err, "in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if work != nil {
			w.dispatch(*work)
		}
	}
}

// dispatch runs work in its own goroutine; its slot is taken already.
func (w *PowerWorker) dispatch(work PowerWork) {
	w.running.Add(1)
	go func() {
		defer w.running.Done()
		defer func() { <-w.slots }()
		w.run(work)
	}()
}

// claim asks the region for a request; nil when none came within wait.
func (w *PowerWorker) claim(ctx context.Context, wait time.Duration) (*PowerWork, error) {
	form := url.Values{PowerRackID: {w.cfg.ID}, PowerWait: {strconv.FormatFloat(wait.Seconds(), 'f', -1, 64)},
		PowerNetworks: powerroute.Strings(w.nets), PowerUnreachable: w.bad.unreachable(time.Now())}
	if w.cfg.Hostname != "" {
		form.Set("hostname", w.cfg.Hostname)
	}
	b, err := w.cl.Do(ctx, http.MethodPost, "rack/", url.Values{"op": {"power_claim"}}, form)
	if ctx.Err() == nil {
		w.noteClaim(err)
	}
	if err != nil || len(b) == 0 {
		return nil, err
	}
	var work PowerWork
	if err := json.Unmarshal(b, &work); err != nil {
		return nil, fmt.Errorf("power claim answer: %w", err)
	}
	return &work, nil
}

// call posts op for request id with more fields.
func (w *PowerWorker) call(ctx context.Context, op, id string, more url.Values) ([]byte, error) {
	form := url.Values{PowerRackID: {w.cfg.ID}, PowerRequestID: {id}}
	for k, v := range more {
		form[k] = v
	}
	return w.cl.Do(ctx, http.MethodPost, "rack/", url.Values{"op": {op}}, form)
}

// refused says whether the region refused a call on a request because the
// rack no longer holds it (409) or it is gone (404).
// A revoked or deleted rack's credential (401, 403) is refused too:
// retrying cannot help, and the lease lapses for another rack to take.
func refused(err error) bool {
	var ae *client.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.Status {
	case http.StatusConflict, http.StatusNotFound, http.StatusUnauthorized, http.StatusForbidden:
		return true
	}
	return false
}

// run carries out one claimed request: probe, run under the lease, report.
func (w *PowerWorker) run(work PowerWork) {
	log := w.cfg.Log.With("id", work.ID, "system_id", work.SystemID, "action", work.Action, "bmc", work.BMC)
	bg := context.Background()
	if !work.Sent {
		if err := w.cfg.Probe(bg, work.BMC); err != nil {
			w.bad.fail(powerroute.Host(work.BMC), time.Now())
			if w.bad.giveBack(work.ID, time.Now()) {
				// Another rack may reach it: give it back untouched.
				log.Info("BMC does not answer from this rack; request given back", "err", err)
				if _, err := w.call(bg, "power_release", work.ID, nil); err != nil {
					log.Warn("give back power request", "err", err)
				}
				return
			}
			log.Info("BMC does not answer from this rack and no other took it; running it", "err", err)
		}
	}
	d, err := w.cfg.Drivers.Lookup(work.PowerType)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	lost := make(chan struct{})
	lease := time.Duration(work.LeaseSeconds * float64(time.Second))
	go w.holdLease(ctx, work.ID, lease, cancel, lost)
	start := time.Now()
	var (
		state machine.PowerState
		step  power.Step
	)
	if err != nil {
		err = &power.Error{Kind: power.BadParams, Op: work.Action, Err: err}
	} else {
		req := store.PowerRequest{ID: work.ID, SystemID: work.SystemID, Action: work.Action, BMCKey: work.BMC}
		if work.Sent {
			req.Sent = start // an earlier holder may have sent it: CarryResumed
		}
		state, step, err = power.Attempt(ctx, w.driver(d), work.PowerParameters, req, w.cfg.Power, func(ctx context.Context) error {
			_, err := w.call(ctx, "power_sent", work.ID, nil)
			return err
		})
	}
	took := time.Since(start)
	select {
	case <-lost:
		log.Warn("power request lease lost; the region gives it to another rack")
		return
	default:
	}
	res := url.Values{PowerState: {string(state)}, PowerDuration: {strconv.FormatFloat(took.Seconds(), 'f', 6, 64)}, PowerResumed: {string(step)}}
	if state == "" {
		res.Set(PowerState, string(machine.PowerUnknown))
	}
	if err != nil {
		res.Set(PowerError, err.Error())
		res.Set(PowerErrorKind, string(power.Classify(err)))
	}
	w.report(ctx, log, work.ID, res)
}

// report sends the result, retrying while the region is away and the
// lease is held (holdLease keeps renewing until ctx ends).
func (w *PowerWorker) report(ctx context.Context, log *slog.Logger, id string, res url.Values) {
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		_, err := w.call(ctx, "power_result", id, res)
		switch {
		case err == nil:
			return
		case refused(err) || ctx.Err() != nil:
			log.Warn("power result not taken", "err", err)
			return
		}
		log.Warn("power result not sent; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// holdLease renews the lease until ctx ends; when the region says it is
// lost (409/404) the work is cancelled, as a region's worker stops.
func (w *PowerWorker) holdLease(ctx context.Context, id string, lease time.Duration, cancel context.CancelFunc, lost chan struct{}) {
	if lease <= 0 {
		lease = 30 * time.Second
	}
	t := time.NewTicker(lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, rcancel := context.WithTimeout(ctx, lease/3)
		_, err := w.call(rctx, "power_renew", id, nil)
		rcancel()
		if refused(err) {
			close(lost)
			cancel()
			return
		}
	}
}

// driver wraps d so that its calls run Within, when set.
func (w *PowerWorker) driver(d power.Driver) power.Driver {
	if w.cfg.Within == nil {
		return d
	}
	return withinDriver{Driver: d, within: w.cfg.Within}
}

type withinDriver struct {
	power.Driver
	within func(func() error) error
}

func (d withinDriver) PowerOn(ctx context.Context, p map[string]string) error {
	return d.within(func() error { return d.Driver.PowerOn(ctx, p) })
}

func (d withinDriver) PowerOff(ctx context.Context, p map[string]string, soft bool) error {
	return d.within(func() error { return d.Driver.PowerOff(ctx, p, soft) })
}

func (d withinDriver) PowerCycle(ctx context.Context, p map[string]string) error {
	return d.within(func() error { return d.Driver.PowerCycle(ctx, p) })
}

func (d withinDriver) Query(ctx context.Context, p map[string]string) (st machine.PowerState, err error) {
	err = d.within(func() error { st, err = d.Driver.Query(ctx, p); return err })
	return st, err
}

func (d withinDriver) SetBootDevice(ctx context.Context, p map[string]string, dev power.BootDevice) error {
	return d.within(func() error { return d.Driver.SetBootDevice(ctx, p, dev) })
}
