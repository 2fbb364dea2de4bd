package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestE2ESettings reads and changes settings under MAAS's names: the
// value reads back as the server has it, an unknown name or a bad value
// is refused in the server's words, and a secret is not shown in the
// table of all settings.
func TestE2ESettings(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		if out := e.ok("settings", "get", "power_poll_interval"); out != "300\n" {
			t.Errorf("settings get printed %q", out)
		}
		if out := e.ok("settings", "set", "power_poll_interval", "5m"); out != "power_poll_interval = 300\n" {
			t.Errorf("settings set printed %q", out)
		}
		if out := e.ok("settings", "set", "power_poll_interval", "2m"); out != "power_poll_interval = 120\n" {
			t.Errorf("settings set printed %q", out)
		}
		if out := e.ok("settings", "set", "ntp_servers", "ntp1.example.com ntp2.example.com"); out != "ntp_servers = ntp1.example.com ntp2.example.com\n" {
			t.Errorf("settings set ntp_servers printed %q", out)
		}
		if out := e.ok("settings", "get", "enable_analytics", "--json"); out != "true\n" {
			t.Errorf("settings get --json printed %q", out)
		}
		e.fails([]string{"settings", "set", "power_poll_intervall", "5m"}, "400 Bad Request", "power_poll_intervall is not a valid config setting", "power_poll_interval")
		e.fails([]string{"settings", "get", "nosuch"}, "nosuch is not a valid config setting")
		e.fails([]string{"settings", "set", "power_poll_interval", "soon"}, "400 Bad Request", `"soon" is neither seconds nor a duration`)
		if out := e.ok("settings", "get", "power_poll_interval"); out != "120\n" {
			t.Errorf("after a refused set: %q", out)
		}

		const secret = "k-g-0123456789"
		if out := e.ok("settings", "set", "maas_auto_ipmi_k_g_bmc_key", secret); out != "Set maas_auto_ipmi_k_g_bmc_key.\n" {
			t.Errorf("setting a secret printed %q", out)
		}
		out := e.ok("settings", "get")
		if !strings.HasPrefix(out, "NAME ") || lineWith(out, "power_poll_interval", "120") == "" ||
			lineWith(out, "maas_auto_ipmi_k_g_bmc_key", "(secret)") == "" || lineWith(out, "vcenter_password", "(not set)") == "" ||
			lineWith(out, "ntp_servers", "ntp1.example.com ntp2.example.com") == "" || strings.Contains(out, secret) {
			t.Errorf("settings get (all):\n%s", out)
		}
		var all map[string]any
		if err := json.Unmarshal([]byte(e.ok("settings", "get", "--json")), &all); err != nil || all["power_poll_interval"] != 120.0 {
			t.Errorf("settings get --json: %v %v", all, err)
		} else if _, shown := all["maas_auto_ipmi_k_g_bmc_key"]; shown {
			t.Errorf("settings get --json shows a secret")
		}
		// An administrator reads the secret by name.
		if out := e.ok("settings", "get", "maas_auto_ipmi_k_g_bmc_key"); out != secret+"\n" {
			t.Errorf("settings get of the secret printed %q", out)
		}

		// Another user reads the settings but not the secrets, and changes
		// nothing; the refusals are the server's.
		ctx := context.Background()
		if _, err := e.srv.Store.EnsureUser(ctx, "alice", false); err != nil {
			t.Fatal(err)
		}
		tok, err := e.srv.Store.CreateToken(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		e.ok("login", "alice", e.url, tok.APIKey())
		out = e.ok("settings", "get", "--profile", "alice")
		if lineWith(out, "maas_auto_ipmi_k_g_bmc_key", "(administrators only)") == "" || lineWith(out, "power_poll_interval", "120") == "" || strings.Contains(out, secret) {
			t.Errorf("settings get (all) as a user:\n%s", out)
		}
		e.fails([]string{"settings", "get", "maas_auto_ipmi_k_g_bmc_key", "--profile", "alice"}, "403 Forbidden", "Only administrators")
		e.fails([]string{"settings", "set", "power_poll_interval", "1h", "--profile", "alice"}, "403 Forbidden")
		e.fails([]string{"tags", "create", "mine", "--profile", "alice"}, "403 Forbidden")
		e.fails([]string{"zones", "create", "mine", "--profile", "alice"}, "403 Forbidden")
		e.fails([]string{"images", "upload", writeFile(t, "root.tar.gz", rootTarball(t)), "--name", "mine", "--profile", "alice"},
			"403 Forbidden", "needs an administrator")
		if out := e.ok("settings", "get", "power_poll_interval"); out != "120\n" {
			t.Errorf("after a user's refused set: %q", out)
		}
	})
}
