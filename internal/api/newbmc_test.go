package api_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestNewBMCQueriedAtOnce adds a machine with a BMC (a lab IPMI BMC on
// loopback) without commissioning it, and gives another machine a BMC by
// editing it: each machine's power state is read within seconds, although
// the power monitor's next slot for it is up to an hour away.
func TestNewBMCQueriedAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		_, _, addr := bmcMachine(t, "52:54:00:bc:00:01")
		bmc := url.Values{"power_type": {"ipmi"}, "power_parameters_power_address": {addr},
			"power_parameters_power_user": {"admin"}, "power_parameters_power_pass": {"secret"}}

		form := url.Values{"hostname": {"fresh-1"}, "mac_addresses": {"52:54:00:bc:00:01"}, "commission": {"false"}}
		for k, v := range bmc {
			form[k] = v
		}
		var m apiMachine
		e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, form, &m)
		e.waitPowerKnown(m.SystemID)

		// A machine with manual power is never queried; given a BMC, it is.
		_, _, addr2 := bmcMachine(t, "52:54:00:bc:00:02")
		bmc.Set("power_parameters_power_address", addr2)
		e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, url.Values{"hostname": {"fresh-2"}, "mac_addresses": {"52:54:00:bc:00:02"},
			"power_type": {"manual"}, "commission": {"false"}}, &m)
		e.must(http.StatusOK, http.MethodPut, "machines/"+m.SystemID+"/", e.admin, bmc, nil)
		e.waitPowerKnown(m.SystemID)
	}, withPowerMonitor(time.Hour, time.Minute))
}

// waitPowerKnown waits up to ten seconds for the machine's power state to
// be read from its BMC.
func (e *env) waitPowerKnown(id string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var m apiMachine
		e.must(http.StatusOK, http.MethodGet, "machines/"+id+"/", e.admin, nil, &m)
		if m.PowerState == "on" || m.PowerState == "off" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("machine %s: power %q ten seconds after its BMC was added", id, m.PowerState)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
