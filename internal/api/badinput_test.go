package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBadInput sends malformed and hostile requests: each gets a clear 4xx
// naming the problem, and nothing is stored.
func TestBadInput(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.addMachine("existing", "52:54:00:aa:bb:cc", nil)
		ok := url.Values{"hostname": {"new"}, "mac_addresses": {"52:54:00:00:00:01"}}
		with := func(k, v string) url.Values {
			f := url.Values{}
			for kk, vv := range ok {
				f[kk] = vv
			}
			f.Set(k, v)
			return f
		}
		cases := []struct {
			name, method, path, key string
			form                    url.Values
			code                    int
			says                    string
		}{
			{"no credentials", "GET", "machines/", "", nil, 401, "credentials"},
			{"unknown token", "GET", "machines/", "a:b:c", nil, 401, "Invalid access token"},
			{"wrong secret", "GET", "machines/", strings.Join(strings.SplitN(e.admin, ":", 3)[:2], ":") + ":wrong", nil, 401, "Invalid access token"},
			{"unknown op", "POST", "machines/?op=explode", "admin", nil, 400, "op=explode"},
			{"unknown op on a machine", "GET", "machines/xyz/?op=fly", "admin", nil, 400, "op=fly"},
			{"wrong method", "PATCH", "machines/", "admin", nil, 405, "PATCH"},
			{"delete the collection", "DELETE", "machines/", "admin", nil, 405, "DELETE"},
			{"bad MAC", "POST", "machines/", "admin", with("mac_addresses", "52:54:00:zz:00:01"), 400, "mac_addresses"},
			{"EUI-64 MAC", "POST", "machines/", "admin", with("mac_addresses", "02:00:00:00:00:00:00:01"), 400, "mac_addresses"},
			{"no MAC", "POST", "machines/", "admin", url.Values{"hostname": {"x"}}, 400, "mac_addresses"},
			{"duplicate MAC", "POST", "machines/", "admin", with("mac_addresses", "52:54:00:AA:BB:CC"), 409, "52:54:00:aa:bb:cc"},
			{"duplicate hostname", "POST", "machines/", "admin", with("hostname", "existing"), 409, "existing"},
			{"bad hostname", "POST", "machines/", "admin", with("hostname", "-bad_name"), 400, "hostname"},
			{"bad architecture", "POST", "machines/", "admin", with("architecture", "z80"), 400, "architecture"},
			{"unknown power type", "POST", "machines/", "admin", with("power_type", "telepathy"), 400, "power_type"},
			{"power parameters not JSON", "POST", "machines/", "admin", with("power_parameters", "{nope"), 400, "power_parameters"},
			{"parameters manual cannot use", "POST", "machines/", "admin", with("power_parameters_power_address", "192.0.2.1"), 400, "power_parameters"},
			{"unknown zone", "POST", "machines/", "admin", with("zone", "atlantis"), 400, "atlantis"},
			{"unknown pool", "POST", "machines/", "admin", with("pool", "nowhere"), 400, "nowhere"},
			{"bad commission flag", "POST", "machines/", "admin", with("commission", "maybe"), 400, "commission"},
			{"bad status filter", "GET", "machines/", "admin", url.Values{"status": {"sleeping"}}, 400, "status"},
			{"bad MAC filter", "GET", "machines/", "admin", url.Values{"mac_address": {"xx"}}, 400, "mac_address"},
			{"non-admin creates", "POST", "machines/", "user", ok, 403, "administrator"},
			{"bad event level", "GET", "events/?op=query", "admin", url.Values{"level": {"LOUD"}}, 400, "level"},
			{"huge event limit", "GET", "events/?op=query", "admin", url.Values{"limit": {"100000"}}, 400, "limit"},
			{"quick erase without erase", "POST", "machines/xyz/?op=release", "admin", url.Values{"quick_erase": {"true"}}, 400, "erase"},
		}
		before := e.countMachines()
		for _, c := range cases {
			key := map[string]string{"admin": e.admin, "user": e.user, "": ""}[c.key]
			if key == "" && c.key != "" {
				key = c.key
			}
			code, body := e.call(c.method, c.path, key, c.form)
			if code != c.code || !strings.Contains(string(body), c.says) {
				t.Errorf("%s: got %d %q, want %d mentioning %q", c.name, code, body, c.code, c.says)
			}
		}
		if after := e.countMachines(); after != before {
			t.Fatalf("bad requests changed the machine count from %d to %d", before, after)
		}
	})
}

func TestMalformedOAuthHeaders(t *testing.T) {
	e := start(t, "")
	for _, h := range []string{
		"Bearer abc",
		"OAuth",
		"OAuth oauth_consumer_key=unquoted",
		`OAuth oauth_signature_method="HMAC-SHA1", oauth_consumer_key="a", oauth_token="b", oauth_signature="x"`,
		`OAuth oauth_signature_method="PLAINTEXT", oauth_consumer_key="", oauth_token="", oauth_signature="&"`,
		`OAuth oauth_signature_method="PLAINTEXT", oauth_consumer_key="%zz", oauth_token="b", oauth_signature="&"`,
		"OAuth " + strings.Repeat(`a="b",`, 5000),
	} {
		req, _ := http.NewRequest("GET", e.base+"api/2.0/machines/", nil)
		req.Header.Set("Authorization", h)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("header %.40q: status %d, want 401", h, resp.StatusCode)
		}
	}
}

func TestOversizedBody(t *testing.T) {
	e := start(t, "")
	big := url.Values{"hostname": {"x"}, "mac_addresses": {"52:54:00:00:00:01"}, "description": {strings.Repeat("a", 2<<20)}}
	code, body := e.call("POST", "machines/", e.admin, big)
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("2 MiB body: %d %s", code, body)
	}
	if n := e.countMachines(); n != 0 {
		t.Fatalf("%d machines stored", n)
	}
}
