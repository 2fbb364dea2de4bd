package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestConflictNamesTheHolder: an administrator's 409 names the machine
// holding a MAC or hostname by hostname and system ID; a user's 409 (a
// deploy renaming a free machine to a taken hostname) names no machine.
func TestConflictNamesTheHolder(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		holder := e.addMachine("db-7", "52:54:00:c0:00:01", nil)
		want := "db-7 (" + holder.SystemID + ")"
		for what, f := range map[string]url.Values{
			"mac_address 52:54:00:c0:00:01": {"hostname": {"other"}, "mac_addresses": {"52:54:00:C0:00:01"}},
			"hostname db-7":                 {"hostname": {"db-7"}, "mac_addresses": {"52:54:00:c0:00:02"}},
		} {
			code, body := e.call(http.MethodPost, "machines/", e.admin, f)
			if code != http.StatusConflict || !strings.Contains(string(body), what+" is already in use by "+want) {
				t.Errorf("admin's create: %d %q; want 409 naming %s", code, body, want)
			}
		}

		e.defaultImage()
		free := e.readyMachine("spare", "52:54:00:c0:00:03")
		code, body := e.call(http.MethodPost, "machines/"+free+"/", e.user, url.Values{"op": {"deploy"}, "hostname": {"db-7"}})
		if code != http.StatusConflict || !strings.Contains(string(body), "hostname db-7 is already in use by another machine") ||
			strings.Contains(string(body), holder.SystemID) || strings.Contains(string(body), "(") {
			t.Errorf("user's deploy to a taken hostname: %d %q; want a 409 naming no machine", code, body)
		}
	})
}
