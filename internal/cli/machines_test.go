package cli

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestMachinesListTable(t *testing.T) {
	f, _ := loggedIn(t)
	f.machines[1]["memory"] = 1536
	f.machines[1]["tag_names"] = []string{}
	out, errOut, code := run(t, "machines", "list")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// Sorted by hostname; owner null shows as "-".
	want := "" +
		"HOSTNAME  SYSTEM_ID  STATUS    POWER  OWNER  ZONE     POOL     ARCH           CPUS  MEMORY   TAGS\n" +
		"db01      def456     Deployed  on     admin  default  default  amd64/generic  4     1.5 GiB  -\n" +
		"web01     abc123     Ready     off    -      default  default  amd64/generic  4     8 GiB    ssd,big\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
}

func TestMachinesListFiltersPassThrough(t *testing.T) {
	f, _ := loggedIn(t)
	run(t, "machines", "list", "--mac", "52:54:00:00:00:01,52:54:00:00:00:02", "--mac", "52:54:00:00:00:03",
		"--status", "ready", "--zone", "z1", "--pool", "p1", "--hostname", "a,b")
	want := "GET /MAAS/api/2.0/machines/?hostname=a&hostname=b" +
		"&mac_address=52%3A54%3A00%3A00%3A00%3A01&mac_address=52%3A54%3A00%3A00%3A00%3A02&mac_address=52%3A54%3A00%3A00%3A00%3A03" +
		"&pool=p1&status=ready&zone=z1"
	if got := f.takeRequests(); len(got) != 1 || got[0] != want {
		t.Errorf("requests %q\nwant %q", got, want)
	}
}

func TestMachinesListJSONIsTheServers(t *testing.T) {
	f, _ := loggedIn(t)
	out, _, code := run(t, "machines", "list", "--json")
	var got []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d, output %q", code, out)
	}
	want, _ := json.Marshal(f.machines)
	var wantV []map[string]any
	json.Unmarshal(want, &wantV)
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("JSON differs from the server's:\n%s", out)
	}
	if !strings.HasPrefix(out, "[\n  {\n    \"") {
		t.Errorf("not indented: %.40q", out)
	}
	// No machines is an empty array, not null.
	f.machines = nil
	if out, _, _ := run(t, "machines", "list", "--json"); out != "[]\n" {
		t.Errorf("empty list printed %q", out)
	}
}

func TestMachineShow(t *testing.T) {
	f, _ := loggedIn(t)
	f.machines[0]["status_message"] = "Powering on"
	out, _, code := run(t, "machine", "show", "abc123")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"Hostname:       web01\n",
		"System ID:      abc123\n",
		"Status:         Ready (Powering on)\n",
		"Power:          off (ipmi)\n",
		"Owner:          -\n",
		"Memory:         8 GiB\n",
		"Storage:        500.0 GB\n",
		"Tags:           ssd, big\n",
		"Interfaces:\n" +
			"  NAME  MAC                TYPE      ENABLED  BOOT  ADDRESSES\n" +
			"  eth0  52:54:00:00:00:01  physical  true     yes   10.0.0.5\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = run(t, "machine", "show", "abc123", "--json")
	var m map[string]any
	if json.Unmarshal([]byte(out), &m) != nil || m["system_id"] != "abc123" {
		t.Errorf("--json printed %q", out)
	}
}

func TestHostnameFallsBackToSystemID(t *testing.T) {
	f, _ := loggedIn(t)
	out, _, code := run(t, "machine", "deploy", "web01", "--distro-series", "noble")
	if code != 0 || out != "web01 (abc123): Deploying, power off\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	want := []string{
		"POST /MAAS/api/2.0/machines/web01/?op=deploy distro_series=noble",
		"GET /MAAS/api/2.0/machines/?hostname=web01",
		"POST /MAAS/api/2.0/machines/abc123/?op=deploy distro_series=noble",
	}
	if got := f.takeRequests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests %q\nwant %q", got, want)
	}
	// An FQDN works too.
	if out, _, _ := run(t, "machine", "show", "db01.maas"); !strings.Contains(out, "System ID:      def456") {
		t.Errorf("show db01.maas: %q", out)
	}
}

func TestUnknownAndAmbiguousMachines(t *testing.T) {
	f, _ := loggedIn(t)
	_, errOut, code := run(t, "machine", "show", "nosuch")
	if code != 1 || errOut != "error: no machine has system id or hostname \"nosuch\"\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	f.machines = append(f.machines, fakeMachine("zzz999", "web01", 4, "Ready", "off", nil))
	_, errOut, code = run(t, "machine", "release", "web01")
	if code != 1 || errOut != "error: hostname \"web01\" is ambiguous: machines abc123, zzz999 have it; use a system id\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestMachineAddForm(t *testing.T) {
	f, _ := loggedIn(t)
	out, _, code := run(t, "machine", "add", "--hostname", "n1", "--arch", "amd64", "--mac", "52:54:00:aa:bb:01",
		"--mac", "52:54:00:aa:bb:02", "--power-type", "ipmi", "--power-param", "power_address=10.0.0.9",
		"--power-param", "power_pass=a,b=c", "--zone", "z", "--pool", "p", "--description", "rack 4")
	if code != 0 || out != "n1 (new789): New, power unknown\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	want := "POST /MAAS/api/2.0/machines/ architecture=amd64&description=rack+4&hostname=n1" +
		"&mac_addresses=52%3A54%3A00%3Aaa%3Abb%3A01&mac_addresses=52%3A54%3A00%3Aaa%3Abb%3A02&pool=p" +
		"&power_parameters_power_address=10.0.0.9&power_parameters_power_pass=a%2Cb%3Dc&power_type=ipmi&zone=z"
	if got := f.takeRequests(); len(got) != 1 || got[0] != want {
		t.Errorf("requests %q\nwant %q", got, want)
	}
	_, errOut, code := run(t, "machine", "add", "--power-param", "novalue")
	if code != 1 || errOut != "error: --power-param \"novalue\": want key=value\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestMachineActions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		reqs []string
		out  string
	}{
		{[]string{"commission", "abc123"}, []string{"POST /MAAS/api/2.0/machines/abc123/?op=commission"},
			"web01 (abc123): Commissioning, power off"},
		{[]string{"deploy", "abc123", "--osystem", "ubuntu", "--distro-series", "noble"},
			[]string{"POST /MAAS/api/2.0/machines/abc123/?op=deploy distro_series=noble&osystem=ubuntu"},
			"web01 (abc123): Deploying, power off"},
		{[]string{"release", "abc123", "--quick-erase", "--comment", "done"},
			[]string{"POST /MAAS/api/2.0/machines/abc123/?op=release comment=done&erase=true&quick_erase=true"},
			"web01 (abc123): Releasing, power off"},
		{[]string{"release", "abc123", "--secure-erase"},
			[]string{"POST /MAAS/api/2.0/machines/abc123/?op=release erase=true&secure_erase=true"}, ""},
		{[]string{"release", "abc123"}, []string{"POST /MAAS/api/2.0/machines/abc123/?op=release"}, ""},
		{[]string{"abort", "abc123"}, []string{"POST /MAAS/api/2.0/machines/abc123/?op=abort"}, ""},
		{[]string{"mark-broken", "abc123", "--comment", "disk dead"},
			[]string{"POST /MAAS/api/2.0/machines/abc123/?op=mark_broken comment=disk+dead"},
			"web01 (abc123): Broken, power off"},
		{[]string{"mark-fixed", "abc123"}, []string{"POST /MAAS/api/2.0/machines/abc123/?op=mark_fixed"}, ""},
		{[]string{"power-on", "abc123"}, []string{"POST /MAAS/api/2.0/machines/abc123/?op=power_on"},
			"web01 (abc123): Ready, power on"},
		{[]string{"power-off", "def456"}, []string{"POST /MAAS/api/2.0/machines/def456/?op=power_off"},
			"db01 (def456): Deployed, power off"},
		{[]string{"power-state", "abc123"}, []string{
			"GET /MAAS/api/2.0/machines/abc123/?op=query_power_state",
			"GET /MAAS/api/2.0/machines/abc123/",
		}, "web01 (abc123): Ready, power on"},
		{[]string{"allocate", "web01"}, []string{
			"GET /MAAS/api/2.0/machines/web01/",
			"GET /MAAS/api/2.0/machines/?hostname=web01",
			"GET /MAAS/api/2.0/machines/abc123/",
			"POST /MAAS/api/2.0/machines/?op=allocate system_id=abc123",
		}, "web01 (abc123): Allocated, power off"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, _ := loggedIn(t)
			out, errOut, code := run(t, append([]string{"machine"}, tc.args...)...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if got := f.takeRequests(); !reflect.DeepEqual(got, tc.reqs) {
				t.Errorf("requests %q\nwant %q", got, tc.reqs)
			}
			if tc.out != "" && out != tc.out+"\n" {
				t.Errorf("stdout %q, want %q", out, tc.out)
			}
		})
	}
}

func TestActionJSON(t *testing.T) {
	loggedIn(t)
	out, _, _ := run(t, "machine", "deploy", "abc123", "--json")
	var m map[string]any
	if json.Unmarshal([]byte(out), &m) != nil || m["status_name"] != "Deploying" {
		t.Errorf("--json printed %q", out)
	}
}

func TestMachineDelete(t *testing.T) {
	f, _ := loggedIn(t)
	if out, _, code := run(t, "machine", "delete", "abc123"); code != 0 || out != "Deleted abc123.\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if out, _, code := run(t, "machine", "delete", "db01"); code != 0 || out != "Deleted db01 (def456).\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	want := []string{
		"DELETE /MAAS/api/2.0/machines/abc123/",
		"DELETE /MAAS/api/2.0/machines/db01/",
		"GET /MAAS/api/2.0/machines/?hostname=db01",
		"DELETE /MAAS/api/2.0/machines/def456/",
	}
	if got := f.takeRequests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests %q\nwant %q", got, want)
	}
}

func TestAPIErrorsExitNonZeroWithoutUsage(t *testing.T) {
	f, _ := loggedIn(t)
	f.fail["deploy"] = apiFailure{http.StatusConflict, "Cannot deploy a machine in status Ready: allocate it first."}
	out, errOut, code := run(t, "machine", "deploy", "abc123")
	want := "error: deploy abc123: 409 Conflict: Cannot deploy a machine in status Ready: allocate it first.\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	f.fail["deploy"] = apiFailure{http.StatusBadRequest, `{"distro_series": ["'nope' is not a valid distro_series."]}`}
	_, errOut, _ = run(t, "machine", "deploy", "abc123", "--distro-series", "nope")
	if errOut != "error: deploy abc123: 400 Bad Request: distro_series: 'nope' is not a valid distro_series.\n" {
		t.Errorf("stderr %q", errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	loggedIn(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"machine", "show"}, "error: accepts 1 arg(s), received 0\n"},
		{[]string{"machines", "list", "--bogus"}, "error: unknown flag: --bogus\n"},
		{[]string{"frobnicate"}, "error: unknown command \"frobnicate\" for \"anvil\"\n"},
	} {
		out, errOut, code := run(t, tc.args...)
		if code != 1 || out != "" || errOut != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestUnreachableServer(t *testing.T) {
	f, _ := loggedIn(t)
	f.Close()
	_, errOut, code := run(t, "machines", "list")
	if code != 1 || !strings.HasPrefix(errOut, "error: list machines: Get \""+f.URL+"/MAAS/api/2.0/machines/\": ") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
