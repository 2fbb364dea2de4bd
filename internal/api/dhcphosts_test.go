package api_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

// TestRackGetsFixedLeases: a machine's STATIC address reaches the rack in
// this process, over the region's stream, as a fixed lease of its
// subnet; unlinking it takes the lease away.
func TestRackGetsFixedLeases(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		f := newNetFixture(t, e)
		m := e.addMachine("leased", "52:54:00:16:05:01", nil)
		eth0 := e.ifaces(m.SystemID)["eth0"]
		path := "nodes/" + m.SystemID + "/interfaces/" + id(eth0) + "/"
		e.must(http.StatusOK, http.MethodPut, path, e.admin, url.Values{"vlan": {itoa(f.vlan100.ID)}}, nil)
		var linked apiIface
		e.must(http.StatusOK, http.MethodPost, path, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
			"subnet": {itoa(f.subnet.ID)}, "ip_address": {"198.51.100.30"}}, &linked)
		hosts := func() []rack.Host {
			for _, s := range e.srv.Rack.Cache.Subnets() {
				if s.CIDR == "198.51.100.0/24" {
					return s.Hosts
				}
			}
			return nil
		}
		want := rack.Host{MAC: "52:54:00:16:05:01", IP: "198.51.100.30", Hostname: "leased"}
		waitFor(t, "the fixed lease at the rack", 10*time.Second, func() bool { h := hosts(); return len(h) == 1 && h[0] == want })
		e.must(http.StatusOK, http.MethodPost, path, e.admin, url.Values{"op": {"unlink_subnet"}, "id": {itoa(linked.Links[0].ID)}}, nil)
		waitFor(t, "the lease gone at the rack", 10*time.Second, func() bool { return len(hosts()) == 0 })
	}, func(c *serve.Config) { c.BootHTTPAddr = "127.0.0.1:0" })
}
