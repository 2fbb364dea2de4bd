package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/settings"
)

// getConfig reads one setting as MAAS's CLI does and decodes its JSON.
func (e *env) getConfig(key, name string) (int, any) {
	e.t.Helper()
	code, b := e.call(http.MethodGet, "maas/?op=get_config&name="+url.QueryEscape(name), key, nil)
	var v any
	if code == http.StatusOK {
		if err := json.Unmarshal(b, &v); err != nil {
			e.t.Fatalf("get_config %s: %s is not JSON: %v", name, b, err)
		}
	}
	return code, v
}

func (e *env) setConfig(key, name, value string) (int, string) {
	e.t.Helper()
	code, b := e.call(http.MethodPost, "maas/", key, url.Values{"op": {"set_config"}, "name": {name}, "value": {value}})
	return code, string(b)
}

// TestConfigNames: every MAAS configuration name reads back with MAAS's
// type, is refused in MAAS's words when wrong (keyed by the name, nothing
// stored), and unknown names are a 400 listing the valid ones.
func TestConfigNames(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		for _, it := range settings.All() {
			code, v := e.getConfig(e.admin, it.Name)
			if code != http.StatusOK {
				t.Fatalf("get_config %s: %d", it.Name, code)
			}
			ok := false
			switch it.Kind {
			case settings.Bool:
				_, ok = v.(bool)
			case settings.Int, settings.Port, settings.Seconds:
				_, ok = v.(float64)
				ok = ok || (v == nil && it.Default == nil)
			case settings.Choices:
				_, ok = v.([]any)
			case settings.Choice:
				if _, isInt := it.Default.(int); isInt {
					_, ok = v.(float64)
				} else {
					_, ok = v.(string)
				}
			default:
				_, ok = v.(string)
				ok = ok || (v == nil && it.Default == nil)
			}
			if !ok {
				t.Errorf("get_config %s = %#v (%T), not of kind %v", it.Name, v, v, it.Kind)
			}
		}
		code, b := e.call(http.MethodGet, "maas/?op=get_config&name=no_such_option", e.admin, nil)
		var fields map[string][]string
		if err := json.Unmarshal(b, &fields); code != http.StatusBadRequest || err != nil ||
			!strings.Contains(strings.Join(fields["no_such_option"], ""), "no_such_option is not a valid config setting (valid settings are: ") {
			t.Fatalf("unknown name: %d %s", code, b)
		}

		for _, c := range []struct{ name, value, want string }{
			{"node_timeout", "ten", "whole number"},
			{"default_storage_layout", "zfs", "not one of the available choices"},
			{"upstream_dns", "192.0.2.300", "Invalid IP address"},
			{"maas_proxy_port", "5240", "reserved for MAAS services"},
			{"enlist_commissioning", "perhaps", "not a boolean"},
			{"maas_name", "", "required"},
		} {
			before, was := e.getConfig(e.admin, c.name)
			code, body := e.setConfig(e.admin, c.name, c.value)
			var f map[string][]string
			if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &f) != nil || !strings.Contains(strings.Join(f[c.name], ""), c.want) {
				t.Errorf("set_config %s=%q: %d %s; want 400 under %q naming %q", c.name, c.value, code, body, c.name, c.want)
			}
			if after, now := e.getConfig(e.admin, c.name); after != before || !equalJSON(now, was) {
				t.Errorf("a refused %s changed it: %#v -> %#v", c.name, was, now)
			}
		}

		for _, c := range []struct {
			name, value string
			want        any
		}{
			{"node_timeout", "45", 45.0},
			{"upstream_dns", "192.0.2.53,198.51.100.53", "192.0.2.53 198.51.100.53"},
			{"ntp_server", "ntp.example.org", "ntp.example.org"}, // MAAS's old name
			{"maas_auto_ipmi_workaround_flags", "opensesspriv authcap", []any{"opensesspriv", "authcap"}},
			{"http_proxy", "http://proxy.example:3128/", "http://proxy.example:3128/"},
			{"http_proxy", "", nil},
			{"completed_intro", "true", true},
			{"active_discovery_interval", "3600", 3600.0},
		} {
			if code, body := e.setConfig(e.admin, c.name, c.value); code != http.StatusOK || strings.TrimSpace(body) != "OK" {
				t.Fatalf("set_config %s=%q: %d %s", c.name, c.value, code, body)
			}
			name := c.name
			if name == "ntp_server" {
				name = "ntp_servers"
			}
			if _, v := e.getConfig(e.user, name); !equalJSON(v, c.want) {
				t.Errorf("%s reads %#v after setting %q, want %#v", name, v, c.value, c.want)
			}
		}

		// Only administrators set, and read secrets.
		if code, _ := e.setConfig(e.user, "maas_name", "mine"); code != http.StatusForbidden {
			t.Errorf("a user's set_config: %d", code)
		}
		if code, _ := e.setConfig(e.admin, "vcenter_password", "s3cret-vc"); code != http.StatusOK {
			t.Fatalf("set vcenter_password: %d", code)
		}
		if code, _ := e.getConfig(e.user, "vcenter_password"); code != http.StatusForbidden {
			t.Errorf("a user read vcenter_password: %d", code)
		}
		if _, v := e.getConfig(e.admin, "vcenter_password"); v != "s3cret-vc" {
			t.Errorf("admin reads vcenter_password as %#v", v)
		}
	})
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestConfigWired: the settings that change what Anvil does take effect
// on the next request that uses them, without a restart.
func TestConfigWired(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()

		// node_timeout: a phase started after the change gets it.
		e.setConfig(e.admin, "node_timeout", "7")
		m := e.addMachine("timed", "52:54:00:c0:00:01", nil)
		e.must(http.StatusOK, http.MethodPost, "machines/"+m.SystemID+"/?op=commission", e.admin, nil, nil)
		got, _ := e.srv.Store.GetMachine(ctx, m.SystemID)
		if left := time.Until(got.StatusExpires); left < 6*time.Minute || left > 7*time.Minute {
			t.Errorf("commissioning expires in %s, want about 7 minutes", left)
		}

		// enable_disk_erasing_on_release: a release that does not say erases.
		id := e.readyMachine("erased", "52:54:00:c0:00:02")
		e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, url.Values{"op": {"allocate"}, "system_id": {id}}, nil)
		e.setConfig(e.admin, "enable_disk_erasing_on_release", "true")
		e.setConfig(e.admin, "disk_erase_with_secure_erase", "false")
		e.setConfig(e.admin, "disk_erase_with_quick_erase", "true")
		e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"release"}}, nil)
		if got, _ := e.srv.Store.GetMachine(ctx, id); got.Status.String() != "Disk erasing" || got.EraseMode != "quick" {
			t.Errorf("release with erasing on: %s erase=%q, want Disk erasing, quick", got.Status, got.EraseMode)
		}

		// default_distro_series: refused until an image of it exists, then
		// deploys that name none use it.
		if code, body := e.setConfig(e.admin, "default_distro_series", "bookworm"); code != http.StatusBadRequest || !strings.Contains(body, "no images are uploaded") {
			t.Errorf("default release with no images: %d %s", code, body)
		}
		img := bytes.Repeat([]byte("config-image "), 1000)
		sum := sha256.Sum256(img)
		if code, body := e.upload(e.admin, url.Values{"name": {"debian/bookworm"}, "architecture": {"amd64/generic"},
			"filetype": {"ddraw"}, "sha256": {hex.EncodeToString(sum[:])}, "size": {strconv.Itoa(len(img))}}, img); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
		if code, body := e.setConfig(e.admin, "default_distro_series", "bookworm"); code != http.StatusBadRequest || !strings.Contains(body, "debian/bookworm") {
			t.Errorf("a release the default OS (ubuntu) lacks: %d %s, want a refusal listing debian/bookworm", code, body)
		}
		for _, kv := range [][2]string{{"default_osystem", "debian"}, {"default_distro_series", "bookworm"}} {
			if code, body := e.setConfig(e.admin, kv[0], kv[1]); code != http.StatusOK {
				t.Fatalf("set %s: %d %s", kv[0], code, body)
			}
		}
		dep := e.readyMachine("deployed", "52:54:00:c0:00:03")
		e.must(http.StatusOK, http.MethodPost, "machines/"+dep+"/", e.admin, url.Values{"op": {"deploy"}}, nil)
		if got, _ := e.srv.Store.GetMachine(ctx, dep); got.OSystem != "debian" || got.DistroSeries != "bookworm" {
			t.Errorf("a deploy naming nothing deploys %s/%s, want debian/bookworm", got.OSystem, got.DistroSeries)
		}

		// maas_auto_ipmi_user: the user an enlisting environment is asked
		// to create on its BMC.
		e.setConfig(e.admin, "maas_auto_ipmi_user", "site-ops")
		resp, err := (&agentapi.Client{Base: e.base + "metadata/"}).Hello(ctx, agentapi.HelloRequest{Purpose: "enlist",
			Identity: agentapi.Identity{MACs: []string{"52:54:00:c0:00:09"}, Arch: "amd64/generic", BMC: &machine.BMCInfo{Type: "ipmi", Address: "192.0.2.9"}}})
		if err != nil || resp.Action != agentapi.ActionEnlist || resp.BMCUser != "site-ops" {
			t.Errorf("hello of an unknown machine: %+v %v; want enlist with BMC user site-ops", resp, err)
		}

		// network_discovery=disabled: unknown MACs booting are not kept.
		e.setConfig(e.admin, "network_discovery", "disabled")
		evs, _ := json.Marshal([]map[string]any{{"mac": "52:54:00:c0:00:99", "kind": "dhcp", "detail": "discover", "at": time.Now()}})
		e.must(http.StatusOK, http.MethodPost, "rack/", e.admin, url.Values{"op": {"boot_events"}, "events": {string(evs)}}, nil)
		if ds, err := e.srv.Store.ListDiscoveries(ctx); err != nil || len(ds) != 0 {
			t.Errorf("discoveries with network_discovery disabled: %+v %v", ds, err)
		}
	})
}
