package rack

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/powerroute"
)

// StatusEvery is how often a rack reports its status; the region counts
// a report older than three of these as stale.
const StatusEvery = 30 * time.Second

// health is what the rack knows of its own services, set as they start
// and when one stops.
type health struct {
	mu sync.Mutex
	m  map[string]ServiceStatus
}

func (h *health) set(name, status, info string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]ServiceStatus{}
	}
	h.m[name] = ServiceStatus{Name: name, Status: status, Info: info}
}

// services lists every service, off where nothing was set.
func (h *health) services() []ServiceStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ServiceStatus, 0, len(Services))
	for _, n := range Services {
		s, ok := h.m[n]
		if !ok {
			s = ServiceStatus{Name: n, Status: StatusOff}
		}
		out = append(out, s)
	}
	return out
}

// Services is the rack's view of its services now.
func (r *Rack) Services() []ServiceStatus {
	out := r.health.services()
	if pw := r.power.Load(); pw != nil {
		for i := range out {
			if out[i].Name == ServicePower {
				out[i] = pw.Health()
			}
		}
	}
	return out
}

// ReportPower has the rack report w as its power service (a power worker
// its process runs beside it, as anvil serve's).
func (r *Rack) ReportPower(w *PowerWorker) { r.power.Store(w) }

// status is the report sent to the region.
func (r *Rack) status() Status {
	s := Status{Interfaces: hostInterfaces(), Services: r.Services(), BMCNetworks: []string{}}
	for _, a := range dnsAddrs(r.DNS, r.dhcpIP, statusAddrs(s.Interfaces)) {
		s.DNS = append(s.DNS, a.String())
	}
	if pw := r.power.Load(); pw != nil {
		s.BMCNetworks = powerroute.Strings(pw.Networks())
	}
	return s
}

// reportStatus sends the status now and every StatusEvery until ctx ends;
// a report that fails waits for the next.
func (r *Rack) reportStatus(ctx context.Context, cl *client.Client, log *slog.Logger) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b, _ := json.Marshal(r.status())
		if _, err := cl.Do(ctx, http.MethodPost, "rack/", url.Values{"op": {"report"}}, url.Values{"status": {string(b)}}); err != nil && ctx.Err() == nil {
			log.Warn("status report not sent", "err", err)
		}
		t.Reset(StatusEvery)
	}
}

// hostInterfaces are this host's interfaces but loopback, with their
// addresses.
func hostInterfaces() []StatusInterface {
	ifs, err := net.Interfaces()
	if err != nil {
		return []StatusInterface{}
	}
	out := []StatusInterface{}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 || len(out) == maxStatusInterfaces {
			continue
		}
		si := StatusInterface{Name: i.Name, MAC: i.HardwareAddr.String(), MTU: i.MTU, Up: i.Flags&net.FlagUp != 0, Addresses: []string{}}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || len(si.Addresses) == maxStatusAddresses {
				continue
			}
			ip, ok := netip.AddrFromSlice(n.IP)
			if !ok {
				continue
			}
			ones, _ := n.Mask.Size()
			if ip = ip.Unmap(); ip.Is4() && ones > 32 {
				ones -= 96
			}
			si.Addresses = append(si.Addresses, netip.PrefixFrom(ip, ones).String())
		}
		if len(si.MAC) != 17 {
			si.MAC = "" // not Ethernet (a tunnel, say)
		}
		out = append(out, si)
	}
	return out
}
