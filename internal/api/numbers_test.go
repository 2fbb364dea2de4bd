package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/metadata"
	"github.com/anvilmetal/anvil/internal/serve"
)

// manyEnlistments lifts the per-source enlistment limit, so one test can
// try many refused enlistments from loopback.
func manyEnlistments(c *serve.Config) {
	c.Metadata.Rate, c.Metadata.Burst, c.Metadata.EnlistPerHour = 1000, 1000, 1000
}

// enlistRaw posts an enlistment as raw JSON, as anyone on the
// provisioning network can: the inventory's members are patched with
// raw JSON text (numbers a Go client could not send, such as 1e400).
func (e *env) enlistRaw(mac string, patch func(inv map[string]any)) (int, string) {
	e.t.Helper()
	b, _ := json.Marshal(testInventory(mac))
	var inv map[string]any
	if err := json.Unmarshal(b, &inv); err != nil {
		e.t.Fatal(err)
	}
	patch(inv)
	body, err := json.Marshal(map[string]any{"macs": []string{mac}, "boot_mac": mac, "architecture": "amd64/generic", "inventory": inv})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.postMetadata(agentapi.EnlistPath, body)
}

// postMetadata posts a raw JSON body to one of the metadata API's
// anonymous calls.
func (e *env) postMetadata(path string, body []byte) (int, string) {
	e.t.Helper()
	u := strings.TrimSuffix(e.base, "/MAAS/") + metadata.Prefix + path
	resp, err := http.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	a, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(a)
}

// set puts raw JSON at a path of the inventory ("cpu.threads",
// "disks.0.size").
func set(path, raw string) func(map[string]any) {
	return func(inv map[string]any) {
		keys := strings.Split(path, ".")
		var at any = inv
		for _, k := range keys[:len(keys)-1] {
			switch t := at.(type) {
			case map[string]any:
				if t[k] == nil {
					t[k] = map[string]any{}
				}
				at = t[k]
			case []any:
				var i int
				fmt.Sscan(k, &i)
				at = t[i]
			}
		}
		at.(map[string]any)[keys[len(keys)-1]] = json.RawMessage(raw)
	}
}

// An anonymous enlistment with a number no machine has is refused with
// a 400 naming the field, and nothing is stored: the CPU count of a
// stored machine sizes what the machine list renders.
func TestEnlistmentNumbersAreBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		cases := []struct{ path, raw, field string }{
			{"cpu.threads", "1000000000000", "cpu.threads"},
			{"cpu.threads", "16385", "cpu.threads"},
			{"cpu.cores", "1e400", "cpu.cores"},
			{"cpu.sockets", "-1", "cpu.sockets"},
			{"cpu.mhz", "99999999", "cpu.mhz"},
			{"memory_mib", "9223372036854775807", "memory_mib"},
			{"disks.0.size", "9000000000000000000", "disks[0].size"},
			{"disks.0.size", "-1", "disks[0].size"},
			{"disks.0.block_size", "3", "disks[0].block_size"},
			{"disks.0.block_size", "1073741824", "disks[0].block_size"},
			{"nics.0.speed_mbps", "2147483647", "nics[0].speed_mbps"},
			{"bmc", `{"type":"ipmi","address":"192.0.2.9","port":99999}`, "bmc.port"},
			{"nics.0.name", `"ens\u00003"`, "nics.name"},
			{"smbios.vendor", `"Q\u0000EMU"`, "smbios.vendor"},
		}
		for i, c := range cases {
			mac := fmt.Sprintf("52:54:00:ee:10:%02x", i)
			code, body := e.enlistRaw(mac, set(c.path, c.raw))
			if code != http.StatusBadRequest || !strings.Contains(body, c.field) {
				t.Errorf("%s = %s: %d %s, want 400 naming %s", c.path, c.raw, code, body, c.field)
			}
		}
		if n := e.countMachines(); n != 0 {
			t.Errorf("%d machines stored from refused enlistments", n)
		}
		// The identity's BMC (a hello's as well as an enlistment's).
		body := `{"macs":["52:54:00:ee:10:fe"],"purpose":"ephemeral","bmc":{"type":"ipmi","address":"192.0.2.9","port":4294967296}}`
		for _, path := range []string{agentapi.HelloPath, agentapi.EnlistPath} {
			if code, b := e.postMetadata(path, []byte(body)); code != http.StatusBadRequest || !strings.Contains(b, "bmc") {
				t.Errorf("%s with BMC port 2^32: %d %s, want 400 naming bmc", path, code, b)
			}
		}
		body = `{"macs":["52:54:00:ee:10:fe"],"purpose":"ephemeral","bmc":{"type":"ipmi","address":"192.0.2.9","port":70000}}`
		for _, path := range []string{agentapi.HelloPath, agentapi.EnlistPath} {
			if code, b := e.postMetadata(path, []byte(body)); code != http.StatusBadRequest || !strings.Contains(b, "bmc.port") {
				t.Errorf("%s with BMC port 70000: %d %s, want 400 naming bmc.port", path, code, b)
			}
		}
		// The same inventory within the bounds enlists.
		if code, body := e.enlistRaw("52:54:00:ee:10:ff", set("cpu.threads", "16384")); code != http.StatusOK {
			t.Errorf("16,384 threads: %d %s", code, body)
		}
	}, manyEnlistments)
}

// A commissioning signal's inventory file goes through the same check:
// refused whole, and the machine keeps what it had.
func TestSignalInventoryNumbersAreBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m, token := e.commissioning("sig", "52:54:00:ee:11:01")
		before := e.numbers(m.SystemID)
		for _, raw := range []string{
			`{"cpu":{"threads":1000000000000},"memory_mib":1024}`,
			`{"cpu":{"threads":4},"memory_mib":1e400}`,
			`{"cpu":{"threads":4},"disks":[{"name":"vda","size":8589934592,"block_size":7}]}`,
		} {
			files := map[string][]byte{agentapi.InventoryFile: []byte(raw)}
			err := e.agent(token).Signal(t.Context(), agentapi.StatusWorking, "", files)
			if !isStatus(err, http.StatusBadRequest) {
				t.Errorf("%s: %v, want 400", raw, err)
			}
		}
		if got := e.numbers(m.SystemID); got != before {
			t.Errorf("%+v after refused signals; was %+v", got, before)
		}
	})
}

// A machine stored before the bounds (an older database) with absurd
// numbers still renders everywhere: the renderers clamp rather than
// allocate by a stored number. Run under a memory limit (ulimit -v or
// GOMEMLIMIT) when checking this against code that does not clamp.
func TestAbsurdStoredMachineRenders(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		// math.MaxInt32: the largest count PostgreSQL's column holds; a
		// slice of that many ints is 16 GiB.
		inv := machine.Inventory{
			CPU:       machine.CPU{Sockets: math.MaxInt32, Cores: math.MaxInt32, Threads: math.MaxInt32, MHz: math.MaxInt32},
			MemoryMiB: math.MaxInt64,
			Disks: []machine.Disk{{Name: "sda", Size: math.MaxInt64, BlockSize: math.MaxInt32},
				{Name: "sdb", Size: math.MaxInt64, BlockSize: 1}},
			NICs: []machine.NIC{{Name: "eth0", MAC: "52:54:00:ee:12:01", SpeedMbps: math.MaxInt32, Link: true}},
			BMC:  &machine.BMCInfo{Type: "ipmi", Port: math.MaxInt32},
		}
		m := &machine.Machine{
			Hostname: "absurd", Architecture: "amd64/generic", Domain: "maas", PowerType: "manual", Status: machine.Ready,
			CPUCount: math.MaxInt32, Memory: math.MaxInt64, Storage: 1e300, Inventory: &inv,
			Interfaces: []machine.Interface{{Name: "eth0", MAC: "52:54:00:ee:12:01", Boot: true}},
		}
		if err := e.srv.Store.CreateMachine(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"machines/", "nodes/", "machines/" + m.SystemID + "/", "nodes/" + m.SystemID + "/",
			"machines/" + m.SystemID + "/?op=details", "nodes/" + m.SystemID + "/?op=details"} {
			if code, body := e.call("GET", path, e.admin, nil); code != http.StatusOK {
				t.Errorf("GET %s: %d %.300s", path, code, body)
			}
		}
		var got struct {
			NUMA []struct{ Cores []int } `json:"numanode_set"`
		}
		e.must(http.StatusOK, "GET", "machines/"+m.SystemID+"/", e.admin, nil, &got)
		if len(got.NUMA) != 1 || len(got.NUMA[0].Cores) != machine.MaxCPUs {
			t.Errorf("NUMA node 0 lists %v cores, want %d (clamped)", len(got.NUMA[0].Cores), machine.MaxCPUs)
		}
		web := e.webClient(t)
		get := func(page string) (int, string) {
			resp, err := web.Get(e.base + page)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		// The pages' machine list follows the store's change stream: wait
		// for the machine to arrive there, however long a loaded machine
		// takes, while every answer on the way is a page.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			code, body := get("machines/rows")
			if code != http.StatusOK {
				t.Fatalf("machines/rows: %d %.300s", code, body)
			}
			if strings.Contains(body, "absurd") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the machine never reached the page list: %.300s", body)
			}
		}
		for _, page := range []string{"machines", "machine/" + m.SystemID, "machine/" + m.SystemID + "/live"} {
			if code, body := get(page); code != http.StatusOK || !strings.Contains(body, "absurd") && !strings.HasSuffix(page, "/live") {
				t.Errorf("page %s: %d %.300s", page, code, body)
			}
		}
	})
}

// webClient is a browser's session for the web pages, as an administrator.
func (e *env) webClient(t *testing.T) *http.Client {
	t.Helper()
	if err := serve.SetPassword(t.Context(), e.dataDir, e.dbURL, "webadmin", "Web-admin-password-1", true); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Timeout: 30 * time.Second, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	pageLogin(t, c, e.base, "webadmin", "Web-admin-password-1")
	return c
}

// numbers are a machine's stored numbers as the API answers them.
type numbers struct {
	CPU         int    `json:"cpu_count"`
	Memory      int64  `json:"memory"`
	Description string `json:"description"`
	Hostname    string `json:"hostname"`
}

func (e *env) numbers(id string) numbers {
	e.t.Helper()
	var n numbers
	e.must(http.StatusOK, "GET", "machines/"+id+"/", e.admin, nil, &n)
	return n
}

// A request sent three ways: a urlencoded form, a JSON object, and the
// maas CLI's base64 multipart parts.
type sender func(e *env, method, path string, params map[string]string) (int, string)

var senders = map[string]sender{
	"form": func(e *env, method, path string, params map[string]string) (int, string) {
		form := url.Values{}
		for k, v := range params {
			form.Set(k, v)
		}
		code, b := e.call(method, path, e.admin, form)
		return code, string(b)
	},
	"json": func(e *env, method, path string, params map[string]string) (int, string) {
		body, _ := json.Marshal(params)
		code, b, _ := e.raw(method, path, e.admin, "application/json", bytes.NewReader(body))
		return code, string(b)
	},
	"cli": func(e *env, method, path string, params map[string]string) (int, string) {
		var parts []cliPart
		for k, v := range params {
			parts = append(parts, cliPart{name: k, value: v})
		}
		a := e.cli(method, path, e.admin, cliBody(parts...))
		return a.code, string(a.body)
	},
}

// Numbers an administrator sends are whole, finite and in range, however
// they are sent; a refused update is a 400 naming the field and changes
// nothing. NaN once became the least int64 and broke every list.
func TestAPINumbersAreBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m := e.addMachine("nums", "52:54:00:ee:13:01", nil)
		e.must(http.StatusOK, "PUT", "machines/"+m.SystemID+"/", e.admin, url.Values{"cpu_count": {"4"}, "memory": {"2048"}}, nil)
		var sn struct {
			ID    int64 `json:"id"`
			Lease int   `json:"lease_seconds"`
		}
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"198.51.100.0/24"}}, &sn)
		bad := map[string][]string{
			"cpu_count":     {"NaN", "nan", "Inf", "-Infinity", "1e400", "1e12", "16385", "-1", "2.5", "0x10p99"},
			"memory":        {"NaN", "+Inf", "1e400", "9223372036854775807", "1073741825"},
			"lease_seconds": {"NaN", "Infinity", "1e400", "1e12", "2147483648", "31536001", "59"},
		}
		for how, send := range senders {
			for field, values := range bad {
				path := "machines/" + m.SystemID + "/"
				if field == "lease_seconds" {
					path = fmt.Sprintf("subnets/%d/", sn.ID)
				}
				for _, v := range values {
					code, body := send(e, "PUT", path, map[string]string{field: v})
					if code != http.StatusBadRequest || !strings.Contains(body, field) {
						t.Errorf("%s %s=%s: %d %.200s, want 400 naming it", how, field, v, code, body)
					}
				}
			}
		}
		if n := e.numbers(m.SystemID); n.CPU != 4 || n.Memory != 2048 {
			t.Errorf("after refused updates: cpu_count %d, memory %d; want 4, 2048", n.CPU, n.Memory)
		}
		var got struct {
			Lease int `json:"lease_seconds"`
		}
		e.must(http.StatusOK, "GET", fmt.Sprintf("subnets/%d/", sn.ID), e.admin, nil, &got)
		if got.Lease != sn.Lease {
			t.Errorf("lease_seconds %d after refused updates, was %d", got.Lease, sn.Lease)
		}
		for _, path := range []string{"machines/", "nodes/"} {
			if code, body := e.call("GET", path, e.admin, nil); code != http.StatusOK {
				t.Errorf("GET %s: %d %.200s", path, code, body)
			}
		}
		// Filters refuse non-finite numbers too.
		for _, q := range []string{"cpu_count=NaN", "mem=Inf", "limit=NaN", "cpu_count=1e400"} {
			v, _ := url.ParseQuery(q)
			if code, body := e.call("GET", "machines/", e.admin, v); code != http.StatusBadRequest {
				t.Errorf("GET machines/?%s: %d %.200s, want 400", q, code, body)
			}
		}
	})
}

// Text parameters are text: a NUL or invalid UTF-8 anywhere a parameter
// is read (form, JSON, the CLI's base64 parts, the query, the path) is a
// 400 on both databases, before any handler stores it.
func TestAPIStringsAreText(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m := e.addMachine("text", "52:54:00:ee:14:01", nil)
		e.must(http.StatusOK, "PUT", "machines/"+m.SystemID+"/", e.admin, url.Values{"description": {"rack 7"}}, nil)
		for how, send := range senders {
			for _, v := range []string{"a\x00b", "\xff\xfe", "ok\xc3"} {
				if how == "json" && v != "a\x00b" {
					continue // json.Marshal would send U+FFFD; raw bodies follow
				}
				for _, field := range []string{"description", "hostname"} {
					code, body := send(e, "PUT", "machines/"+m.SystemID+"/", map[string]string{field: v})
					if code != http.StatusBadRequest {
						t.Errorf("%s %s=%q: %d %.200s, want 400", how, field, v, code, body)
					}
				}
			}
		}
		if n := e.numbers(m.SystemID); n.Description != "rack 7" || n.Hostname != "text" {
			t.Errorf("after refused updates: %+v", n)
		}
		// A JSON object member (read as its JSON text) and a JSON body
		// that is not UTF-8.
		for _, body := range []string{`{"power_parameters":{"power_address":"a\u0000b"}}`, "{\"description\":\"\xff\"}"} {
			code, b, _ := e.raw("PUT", "machines/"+m.SystemID+"/", e.admin, "application/json", strings.NewReader(body))
			if code != http.StatusBadRequest {
				t.Errorf("JSON %q: %d %.200s, want 400", body, code, b)
			}
		}
		// The query string and the path.
		for _, path := range []string{"machines/?hostname=%00", "machines/?hostname=%ff", "machines/%00/", "machines/%ff/", "tags/%00/", "zones/?name=a%00"} {
			if code, b, _ := e.raw("GET", path, e.admin, "", nil); code != http.StatusBadRequest {
				t.Errorf("GET %s: %d %.200s, want 400", path, code, b)
			}
		}
		// Credentials: a key that is not text is refused, not looked up.
		for _, key := range []string{"a%00:b:c", "a:%ff:c"} {
			if code, _, _ := e.raw("GET", "machines/", key, "", nil); code != http.StatusUnauthorized {
				t.Errorf("an API key %q: %d, want 401", key, code)
			}
		}
		// Files stay bytes: a script uploaded as a file part may hold
		// anything a file can.
		a := e.cli("POST", "scripts/", e.admin, cliBody(cliPart{name: "name", value: "binary-ok"}, cliPart{name: "type", value: "testing"},
			cliPart{name: "script", file: "binary-ok", value: "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# name: binary-ok\n# --- End MAAS 1.0 script metadata ---\nprintf '\\000'\n"}))
		if a.code != http.StatusOK {
			t.Errorf("a script file: %d %.300s", a.code, a.body)
		}
	})
}

// The metadata API's anonymous bodies and the environment's signal form
// are text too.
func TestMetadataStringsAreText(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		for _, body := range []string{`{"macs":["52:54:00:ee:15:01"],"uuid":"a\u0000b"}`, "{\"macs\":[\"52:54:00:ee:15:01\"],\"architecture\":\"\xff\"}"} {
			if code, b := e.postMetadata(agentapi.HelloPath, []byte(body)); code != http.StatusBadRequest {
				t.Errorf("hello %q: %d %s, want 400", body, code, b)
			}
		}
		// The deployed OS's phone-home names its token in the path.
		for _, key := range []string{"a%00:b:c", "a:b:%ff"} {
			if code, b := e.postMetadata(agentapi.OSUpPath+key, []byte("{}")); code != http.StatusBadRequest {
				t.Errorf("os-up with the key %q: %d %s, want 400", key, code, b)
			}
		}
		code, body := e.enlistRaw("52:54:00:ee:15:02", set("cpu.model", `"Xeon\u0000"`))
		if code != http.StatusBadRequest {
			t.Errorf("an enlistment with a NUL: %d %s", code, body)
		}
		_, token := e.commissioning("sigtext", "52:54:00:ee:15:03")
		err := e.agent(token).Signal(t.Context(), agentapi.StatusWorking, "bad\x00error", nil)
		if !isStatus(err, http.StatusBadRequest) {
			t.Errorf("a signal whose error holds a NUL: %v, want 400", err)
		}
		// Result files are bytes and are kept as they are.
		if err := e.agent(token).Signal(t.Context(), agentapi.StatusWorking, "", map[string][]byte{"lshw": []byte("\x00\xff binary")}); err != nil {
			t.Errorf("a binary result file: %v", err)
		}
		if n := e.countMachines(); n != 1 {
			t.Errorf("%d machines, want the one commissioning", n)
		}
	}, manyEnlistments)
}
