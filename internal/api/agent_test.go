package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/ipmibmc"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/metadata"
	"github.com/anvilmetal/anvil/internal/serve"
	"gopkg.in/mgo.v2/bson"
)

// The metadata API as the ephemeral environment uses it, through the
// environment's own client against a real server.

func (e *env) agent(token string) *agentapi.Client {
	return &agentapi.Client{Base: strings.TrimSuffix(e.base, "/MAAS/") + metadata.Prefix, Token: token}
}

func ident(uuid string, macs ...string) agentapi.Identity {
	return agentapi.Identity{MACs: macs, BootMAC: macs[0], UUID: uuid, Arch: "amd64/generic", Firmware: "bios"}
}

func testInventory(macs ...string) *machine.Inventory {
	inv := &machine.Inventory{
		CPU: machine.CPU{Model: "QEMU Virtual CPU", Cores: 2, Threads: 2, MHz: 2400}, MemoryMiB: 1024, Firmware: "bios",
		Disks:  []machine.Disk{{Name: "vda", Model: "QEMU HARDDISK", Serial: "d1", Size: 8 << 30, Rotational: true}},
		SMBIOS: machine.SMBIOS{Vendor: "QEMU", Product: "Standard PC"},
	}
	for i, m := range macs {
		inv.NICs = append(inv.NICs, machine.NIC{Name: fmt.Sprintf("ens%d", 3+i), MAC: m, Driver: "virtio_net", Link: true})
	}
	return inv
}

func inventoryFile(t *testing.T, inv *machine.Inventory) map[string][]byte {
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{agentapi.InventoryFile: b, "cpuinfo": []byte("processor : 0\n")}
}

func (e *env) enrol(id string) string {
	e.t.Helper()
	m, err := e.srv.Store.GetMachine(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	// As the rack binds it for a boot served to this test's address.
	return agentapi.EnrolFor(m.EnrolSecret, "127.0.0.1")
}

// seen is the sighting a rack (here, signed with the admin's key, as a
// rack's key is an administrator's) puts on a boot it served to this
// test's address for mac, ago minutes back: a distinct one per boot.
func (e *env) seen(mac string, ago int) string {
	// Minutes apart, not seconds: a sighting is signed to the second, so
	// two signed a second apart on a slow machine would be one (spent).
	return agentapi.Sign(e.admin, mac, "127.0.0.1", time.Now().Add(-time.Duration(ago)*time.Minute))
}

func TestEnlistThenCommission(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		macs := []string{"52:54:00:aa:00:01", "52:54:00:aa:00:02"}
		id := ident("6f2c1f1e-0000-4000-8000-0000000000a1", macs...)
		a := e.agent("")
		r, err := a.Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: "enlist"})
		if err != nil || r.Action != agentapi.ActionEnlist {
			t.Fatalf("hello unknown: %+v %v", r, err)
		}
		// Enlisting is idempotent, also when machines race.
		var wg sync.WaitGroup
		answers := make([]agentapi.EnlistResponse, 8)
		errs := make([]error, 8)
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i], errs[i] = a.Enlist(ctx, agentapi.EnlistRequest{Identity: id, Inventory: testInventory(macs...)})
			}()
		}
		wg.Wait()
		for i := range answers {
			if errs[i] != nil || answers[i].Action != agentapi.ActionPowerOff || answers[i].SystemID != "" {
				t.Fatalf("enlist %d: %+v %v", i, answers[i], errs[i])
			}
		}
		if n := e.countMachines(); n != 1 {
			t.Fatalf("%d machines after 8 enlistments", n)
		}
		var list []apiMachine
		e.must(http.StatusOK, http.MethodGet, "machines/", e.admin, nil, &list)
		sid := list[0].SystemID
		m := e.machine(sid)
		if m.StatusName != "New" || len(m.Interfaces) != 2 || m.Architecture != "amd64/generic" {
			t.Fatalf("enlisted: %+v", m)
		}
		// Known now, and New: power off. Anonymous answers name nothing.
		if r, err := a.Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: "enlist"}); err != nil || r.Action != agentapi.ActionPowerOff || r.SystemID != "" || strings.Contains(r.Message, m.Hostname) {
			t.Fatalf("hello known: %+v %v", r, err)
		}

		e.must(http.StatusOK, http.MethodPost, "machines/"+sid+"/", e.admin, url.Values{"op": {"commission"}}, nil)
		e.waitStatus(sid, "Commissioning")
		secret := e.enrol(sid)
		if secret == "" {
			t.Fatal("no enrolment secret in a commissioning phase")
		}
		// The wrong secret, in a boot the rack saw, is a wrong boot; the
		// right one proceeds, once.
		hr := agentapi.HelloRequest{Identity: id, Purpose: "ephemeral", Enrol: "guess"}
		hr.Seen = e.seen(macs[0], 1)
		if r, err := a.Hello(ctx, hr); err != nil || r.Action != agentapi.ActionReboot {
			t.Fatalf("hello with a wrong secret: %+v %v", r, err)
		}
		hr.Enrol = e.enrol(sid)
		r, err = a.Hello(ctx, hr)
		if err != nil || r.Action != agentapi.ActionProceed || r.Phase != "commissioning" || r.Token == "" {
			t.Fatalf("hello with its secret: %+v %v", r, err)
		}
		if again, _ := a.Hello(ctx, hr); again.Action == agentapi.ActionProceed {
			t.Fatal("an enrolment secret worked twice")
		}
		tok := e.agent(r.Token)
		if b, err := tok.Get(ctx, "meta-data/instance-id"); err != nil || string(b) != sid {
			t.Fatalf("instance-id: %q %v", b, err)
		}
		if b, err := tok.Get(ctx, "meta-data/local-hostname"); err != nil || string(b) != m.Hostname {
			t.Fatalf("local-hostname: %q %v", b, err)
		}
		before, _ := e.srv.Store.GetMachine(ctx, sid)
		time.Sleep(20 * time.Millisecond)
		if err := tok.Signal(ctx, agentapi.StatusWorking, "", nil); err != nil {
			t.Fatal(err)
		}
		after, _ := e.srv.Store.GetMachine(ctx, sid)
		if !after.StatusExpires.After(before.StatusExpires) {
			t.Fatalf("heartbeat did not move the timeout: %v → %v", before.StatusExpires, after.StatusExpires)
		}
		// A bad inventory is refused and changes nothing.
		if err := tok.Signal(ctx, agentapi.StatusOK, "", map[string][]byte{agentapi.InventoryFile: []byte("{bad")}); !isStatus(err, 400) {
			t.Fatalf("bad inventory: %v", err)
		}
		if err := tok.Signal(ctx, "BOGUS", "", nil); !isStatus(err, 400) {
			t.Fatalf("bad status: %v", err)
		}
		e.waitStatus(sid, "Commissioning")
		if err := tok.Signal(ctx, agentapi.StatusOK, "", inventoryFile(t, testInventory(macs...))); err != nil {
			t.Fatal(err)
		}
		got := e.waitStatus(sid, "Ready")
		var full struct {
			CPU     int     `json:"cpu_count"`
			Memory  int64   `json:"memory"`
			Storage float64 `json:"storage"`
			Blocks  []struct {
				Name string `json:"name"`
				Size int64  `json:"size"`
			} `json:"blockdevice_set"`
			Ifaces []struct {
				Name string `json:"name"`
			} `json:"interface_set"`
			HW map[string]string `json:"hardware_info"`
		}
		e.must(http.StatusOK, http.MethodGet, "machines/"+sid+"/", e.admin, nil, &full)
		if full.CPU != 2 || full.Memory != 1024 || len(full.Blocks) != 1 || full.Blocks[0].Size != 8<<30 ||
			full.Ifaces[0].Name != "ens3" || full.HW["system_vendor"] != "QEMU" {
			t.Fatalf("inventory not shown: %+v (%s)", full, got.StatusName)
		}
		if raw := e.details("machines/" + sid + "/")["anvil_results"].(bson.M); len(raw["cpuinfo"].([]byte)) == 0 {
			t.Fatalf("raw results not kept: %v", raw)
		}
		// The phase is over: the token is dead.
		if _, err := tok.Get(ctx, "meta-data/instance-id"); !isStatus(err, 401) {
			t.Fatalf("token after the phase: %v", err)
		}
	})
}

func isStatus(err error, code int) bool {
	var se *agentapi.StatusError
	return errors.As(err, &se) && se.Code == code
}

// bmcMachine starts a lab IPMI BMC on loopback in front of a simulated
// machine.
func bmcMachine(t *testing.T, macs ...string) (*lab.SimMachine, *lab.Log, string) {
	sim := lab.NewSim("bmc-only", "6f2c1f1e-0000-4000-8000-0000000000b1", macs...)
	log := &lab.Log{}
	b := ipmibmc.New(sim, ipmibmc.Options{User: "admin", Password: "secret", Log: log})
	addr, err := b.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return sim, log, addr.String()
}

func TestAddByBMCAlone(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		macs := []string{"52:54:00:bb:00:01", "52:54:00:bb:00:02"}
		sim, log, addr := bmcMachine(t, macs...)
		form := url.Values{
			"hostname": {"rack7-u12"}, "zone": {"default"}, "description": {"added by BMC"},
			"power_type": {"ipmi"}, "power_parameters_power_address": {addr},
			"power_parameters_power_user": {"admin"}, "power_parameters_power_pass": {"secret"},
		}
		var m apiMachine
		e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, form, &m)
		if m.StatusName != "Commissioning" || len(m.Interfaces) != 0 {
			t.Fatalf("added by BMC: %+v", m)
		}
		// The same BMC cannot be claimed twice.
		form.Set("hostname", "other")
		code, body := e.call(http.MethodPost, "machines/", e.admin, form)
		if code != http.StatusConflict || !strings.Contains(string(body), m.SystemID) {
			t.Fatalf("second machine on the BMC: %d %s", code, body)
		}
		// Anvil powers it on with a network boot-once through its BMC.
		waitFor(t, "the machine to be powered on", 30*time.Second, func() bool { return sim.IsOn() })
		var cmds []string
		for _, en := range log.Entries() {
			cmds = append(cmds, en.Command)
		}
		if j := strings.Join(cmds, ","); !strings.HasPrefix(j, "boot device,") || !strings.Contains(j, "power on") {
			t.Fatalf("BMC commands: %v", cmds)
		}
		// It boots as unknown; its environment reports the BMC it sits
		// behind (read in-band) and is matched to the waiting record.
		// The rack saw it boot after Anvil powered it on, and its
		// SMBIOS UUID is the system GUID its BMC gives.
		host := strings.Split(addr, ":")[0]
		id := ident(sim.UUID(), macs...)
		id.BMC = &machine.BMCInfo{Type: "ipmi", Address: host, MAC: "02:00:00:00:00:b1"}
		id.Seen = e.seen(macs[0], 0)
		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: "enlist"})
		if err != nil || r.Action != agentapi.ActionProceed || r.SystemID != m.SystemID || r.Phase != "commissioning" {
			t.Fatalf("hello from behind the BMC: %+v %v", r, err)
		}
		got := e.machine(m.SystemID)
		if len(got.Interfaces) != 2 || got.Hostname != "rack7-u12" || e.countMachines() != 1 {
			t.Fatalf("after the match: %+v", got)
		}
		if err := e.agent(r.Token).Signal(ctx, agentapi.StatusOK, "", inventoryFile(t, testInventory(macs...))); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(m.SystemID, "Ready")
		waitFor(t, "the machine to be powered off", 30*time.Second, func() bool { return !sim.IsOn() })
	})
}

func TestHeldAndLoopGuard(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		a := e.addMachine("a", "52:54:00:cc:00:01", nil)
		b := e.addMachine("b", "52:54:00:cc:00:02", nil)
		// One environment reporting both machines' MACs is held.
		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", "52:54:00:cc:00:01", "52:54:00:cc:00:02"), Purpose: "enlist"})
		if err != nil || r.Action != agentapi.ActionPowerOff || !strings.Contains(r.Message, "more than one machine") || strings.Contains(r.Message, a.SystemID) {
			t.Fatalf("two machines: %+v %v", r, err)
		}
		if !e.hasEvent(a.SystemID, "Enlistment held") || !e.hasEvent(b.SystemID, "Enlistment held") {
			t.Fatal("no held event")
		}
		// A commissioning machine that keeps booting the enlistment
		// environment fails after three boots instead of looping.
		e.must(http.StatusOK, http.MethodPost, "machines/"+a.SystemID+"/", e.admin, url.Values{"op": {"commission"}}, nil)
		e.waitStatus(a.SystemID, "Commissioning")
		for i := 1; i <= machine.MaxWrongBoots; i++ {
			id := ident("", "52:54:00:cc:00:01", "52:54:00:cc:00:09")
			id.Seen = e.seen("52:54:00:cc:00:01", i)
			r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: "enlist"})
			want := agentapi.ActionReboot
			if i == machine.MaxWrongBoots {
				want = agentapi.ActionPowerOff
			}
			if err != nil || r.Action != want {
				t.Fatalf("wrong boot %d: %+v %v", i, r, err)
			}
		}
		got := e.waitStatus(a.SystemID, "Failed commissioning")
		if !strings.Contains(got.StatusMsg, "3 wrong boots in a row") {
			t.Fatalf("status message %q", got.StatusMsg)
		}
		// The secondary NIC it booted from was learned.
		if len(e.machine(a.SystemID).Interfaces) != 2 {
			t.Fatal("secondary NIC not learned")
		}
	})
}

func TestMachineTokenScope(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		var toks []string
		var ids []string
		for i, mac := range []string{"52:54:00:dd:00:01", "52:54:00:dd:00:02"} {
			m := e.addMachine(fmt.Sprintf("m%d", i), mac, nil)
			e.must(http.StatusOK, http.MethodPost, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"commission"}}, nil)
			e.waitStatus(m.SystemID, "Commissioning")
			r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", mac), Purpose: "ephemeral", Enrol: e.enrol(m.SystemID)})
			if err != nil || r.Action != agentapi.ActionProceed {
				t.Fatalf("hello %d: %+v %v", i, r, err)
			}
			toks, ids = append(toks, r.Token), append(ids, m.SystemID)
		}
		// A's token reads and writes A only.
		if b, _ := e.agent(toks[0]).Get(ctx, "meta-data/instance-id"); string(b) != ids[0] {
			t.Fatalf("token 0 reads %q", b)
		}
		if err := e.agent(toks[0]).Signal(ctx, agentapi.StatusFailed, "disk on fire", nil); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(ids[0], "Failed commissioning")
		if e.machine(ids[1]).StatusName != "Commissioning" {
			t.Fatal("A's signal reached B")
		}
		// Forged tokens: B's keys with A's secret, garbage, an admin API key.
		pa, pb := strings.SplitN(toks[0], ":", 3), strings.SplitN(toks[1], ":", 3)
		for _, forged := range []string{pb[0] + ":" + pb[1] + ":" + pa[2], "a:b:c", e.admin} {
			if _, err := e.agent(forged).Get(ctx, "meta-data/instance-id"); !isStatus(err, 401) {
				t.Fatalf("forged token %q: %v", forged[:3], err)
			}
		}
		if _, err := e.agent("").Get(ctx, "meta-data/instance-id"); !isStatus(err, 401) {
			t.Fatalf("anonymous meta-data: %v", err)
		}
	})
}

func TestMetadataRefusesFloodsAndJunk(t *testing.T) {
	e := start(t, "", func(c *serve.Config) { c.Metadata.Rate, c.Metadata.Burst = 2, 10 })
	u := strings.TrimSuffix(e.base, "/MAAS/") + metadata.Prefix + agentapi.HelloPath
	post := func(ct, body string) int {
		resp, err := http.Post(u, ct, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		ct, body string
		want     int
	}{
		{"application/json", `{"macs":["52:54:00:ee:00:01"],"purpose":"enlist"}`, 200},
		{"application/json", `{bad`, 400},
		{"text/plain", `{}`, 415},
		{"application/json", `{"macs":["zz"],"purpose":"enlist"}`, 400},
		{"application/json", `{"macs":[],"purpose":"enlist"}`, 400},
		{"application/json", `{"macs":["52:54:00:ee:00:01"],"purpose":"weird"}`, 400},
	} {
		if got := post(c.ct, c.body); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.ct, c.body, got, c.want)
		}
	}
	refused := 0
	for i := 0; i < 40; i++ {
		if post("application/json", `{"macs":["52:54:00:ee:00:01"],"purpose":"enlist"}`) == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused < 20 {
		t.Fatalf("only %d of 40 flooding requests refused", refused)
	}
	if n := e.countMachines(); n != 0 {
		t.Fatalf("junk created %d machines", n)
	}
}

func (e *env) hasEvent(id, typ string) bool {
	e.t.Helper()
	var evs struct {
		Events []struct {
			Type string `json:"type"`
		} `json:"events"`
	}
	e.must(http.StatusOK, http.MethodGet, "events/", e.admin, url.Values{"op": {"query"}, "id": {id}, "limit": {"100"}}, &evs)
	for _, ev := range evs.Events {
		if ev.Type == typ {
			return true
		}
	}
	return false
}

// A Redfish BMC names its systems' MACs and UUIDs out of band: a machine
// added by such a BMC alone is known by its MACs before it boots.
func TestAddByRedfishKnowsMACs(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		u, sims, _ := chassis(t, 2, lab.Faults{})
		form := url.Values{
			"hostname": {"rf0"}, "power_type": {"redfish"}, "power_parameters_power_address": {u},
			"power_parameters_power_user": {"admin"}, "power_parameters_power_pass": {"secret"},
			"power_parameters_node_id": {sims[0].ID()},
		}
		var m apiMachine
		e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, form, &m)
		if m.StatusName != "Commissioning" || len(m.Interfaces) != 1 || m.Interfaces[0].MAC != sims[0].MACs()[0] {
			t.Fatalf("added by Redfish: %+v", m)
		}
		// The same system twice is refused; its neighbour behind the same
		// BMC is another identity.
		form.Set("hostname", "rf0-again")
		if code, body := e.call(http.MethodPost, "machines/", e.admin, form); code != http.StatusConflict || !strings.Contains(string(body), m.SystemID) {
			t.Fatalf("same system again: %d %s", code, body)
		}
		form.Set("hostname", "rf1")
		form.Set("power_parameters_node_id", sims[1].ID())
		e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, form, nil)
	})
}

// With --enlist-commission an enlisting machine goes straight on to
// commissioning in the environment it is already running.
func TestEnlistStraightToCommissioning(t *testing.T) {
	e := start(t, "", func(c *serve.Config) { c.EnlistCommission = true })
	ctx := t.Context()
	macs := []string{"52:54:00:ab:00:01"}
	r, err := e.agent("").Enlist(ctx, agentapi.EnlistRequest{Identity: ident("", macs...), Inventory: testInventory(macs...)})
	if err != nil || r.Action != agentapi.ActionProceed || r.Phase != "commissioning" || r.Token == "" {
		t.Fatalf("enlist: %+v %v", r, err)
	}
	e.waitStatus(r.SystemID, "Commissioning")
	if err := e.agent(r.Token).Signal(ctx, agentapi.StatusOK, "", inventoryFile(t, testInventory(macs...))); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(r.SystemID, "Ready")
}

// The deploy phase as the environment sees it: the task names the image,
// the image downloads with its checksum, INSTALLED turns network boot off,
// and the rack's local answer ends the phase.
func TestDeployPhase(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		img := bytes.Repeat([]byte("anvil-image "), 100000)
		sum := sha256.Sum256(img)
		if code, body := e.upload(e.admin, url.Values{"name": {"custom/testimg"}, "architecture": {"amd64/generic"},
			"filetype": {"ddraw"}, "sha256": {hex.EncodeToString(sum[:])}, "size": {strconv.Itoa(len(img))}}, img); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
		id := e.readyMachine("d1", "52:54:00:de:00:01")
		key := testKey(7, "admin@desk")
		e.must(http.StatusCreated, http.MethodPost, "sshkeys/", e.admin, url.Values{"key": {key}}, nil)
		ud := "#cloud-config\nruncmd: [echo hello]\n"
		e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"deploy"}, "osystem": {"custom"},
			"distro_series": {"testimg"}, "user_data": {base64.StdEncoding.EncodeToString([]byte(ud))}, "hostname": {"web-1"}}, nil)
		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", "52:54:00:de:00:01"), Purpose: "install", Enrol: e.enrol(id)})
		if err != nil || r.Action != agentapi.ActionProceed || r.Phase != "deploying" {
			t.Fatalf("hello: %+v %v", r, err)
		}
		tok := e.agent(r.Token)
		task, err := tok.Task(ctx)
		if err != nil || task.Image == nil || task.Hostname != "web-1" || string(task.UserData) != ud || task.Image.FileType != "ddraw" ||
			len(task.SSHKeys) != 1 || task.SSHKeys[0] != key {
			t.Fatalf("task: %+v %v", task, err)
		}
		resp, err := http.Get(task.Image.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if gs := sha256.Sum256(got); hex.EncodeToString(gs[:]) != task.Image.SHA256 || int64(len(got)) != task.Image.Size {
			t.Fatalf("image download: %d bytes", len(got))
		}
		if b, err := tok.Get(ctx, "user-data"); err != nil || string(b) != ud {
			t.Fatalf("user-data: %q %v", b, err)
		}
		if err := tok.Signal(ctx, agentapi.StatusInstalled, "", nil); err != nil {
			t.Fatal(err)
		}
		if m, _ := e.srv.Store.GetMachine(ctx, id); m.Status != machine.Deploying || m.Netboot {
			t.Fatalf("after INSTALLED: %s netboot=%v", m.Status, m.Netboot)
		}
		// The rack answers its next network boot with a local boot: that
		// shows the firmware was sent to the disk, not that an OS is up.
		e.rackBootedLocal("52:54:00:de:00:01")
		if m, _ := e.srv.Store.GetMachine(ctx, id); m.Status != machine.Deploying {
			t.Fatalf("after the local boot: %s, want Deploying until the OS reports", m.Status)
		}
		// The deployed OS's phone_home (what the seed's vendor-data asks
		// cloud-init for) ends the deployment; the token dies with it.
		if code, body := osUp(t, tok.OSUpURL()); code != http.StatusOK {
			t.Fatalf("os-up: %d %s", code, body)
		}
		m := e.waitStatus(id, "Deployed")
		if code, _ := osUp(t, tok.OSUpURL()); code != http.StatusUnauthorized {
			t.Fatalf("os-up with the spent token: %d, want 401", code)
		}
		if m2, _ := e.srv.Store.GetMachine(ctx, id); m2.Status != machine.Deployed || m.StatusName != "Deployed" {
			t.Fatalf("after a replayed os-up: %s", m2.Status)
		}

		// Failures end the phase with the reason in words: here the
		// image is deleted after the deploy was accepted.
		e.uploadImage("custom/gone", "amd64/generic")
		id2 := e.readyMachine("d2", "52:54:00:de:00:02")
		e.must(http.StatusOK, http.MethodPost, "machines/"+id2+"/", e.admin, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"gone"}}, nil)
		rs, _ := e.srv.Store.ListBootResources(ctx)
		for _, res := range rs {
			if res.Name == "gone" {
				e.must(http.StatusNoContent, http.MethodDelete, "boot-resources/"+itoa(res.ID)+"/", e.admin, nil, nil)
			}
		}
		r, _ = e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", "52:54:00:de:00:02"), Purpose: "install", Enrol: e.enrol(id2)})
		tok = e.agent(r.Token)
		if _, err := tok.Task(ctx); !isStatus(err, 404) {
			t.Fatalf("task without an image: %v", err)
		}
		if err := tok.Signal(ctx, agentapi.StatusFailed, "custom/gone for amd64 is not uploaded", nil); err != nil {
			t.Fatal(err)
		}
		if m := e.waitStatus(id2, "Failed deployment"); !strings.Contains(m.StatusMsg, "not uploaded") {
			t.Fatalf("status message %q", m.StatusMsg)
		}
	})
}

// rackBootedLocal reports, as the rack does, that it answered mac's
// network boot with a local boot.
func (e *env) rackBootedLocal(mac string) {
	e.t.Helper()
	evs, _ := json.Marshal([]map[string]any{{"mac": mac, "kind": "config", "purpose": "local",
		"detail": "config ipxe.cfg-" + mac + ": purpose local (status Deploying)", "at": time.Now()}})
	e.must(http.StatusOK, http.MethodPost, "rack/", e.admin, url.Values{"op": {"boot_events"}, "events": {string(evs)}}, nil)
}

// osUp posts what cloud-init's phone_home posts to url.
func osUp(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.PostForm(u, url.Values{"instance_id": {"i-1"}, "hostname": {"web-1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readyMachine adds a machine and puts it straight into Ready (its
// commissioning is not what these tests are about).
func (e *env) readyMachine(host, mac string) string {
	e.t.Helper()
	m := e.addMachine(host, mac, nil)
	if _, err := e.srv.Store.UpdateMachine(context.Background(), m.SystemID, func(x *machine.Machine) ([]machine.Event, error) {
		x.Status = machine.Ready
		return nil, nil
	}); err != nil {
		e.t.Fatal(err)
	}
	return m.SystemID
}

// A deployment that stops reporting fails with a timeout; one aborted
// mid-write goes back to Allocated, is powered off, and the environment's
// token stops working at once.
func TestDeployTimeoutAndAbort(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		eachDB(t, func(t *testing.T, e *env) {
			id := e.readyMachine("slow", "52:54:00:df:00:01")
			e.defaultImage()
			e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"deploy"}}, nil)
			if got := e.waitStatus(id, "Failed deployment"); !strings.Contains(got.StatusMsg, "timed out") {
				t.Fatalf("status message %q", got.StatusMsg)
			}
		}, withTimeout(300*time.Millisecond, 50*time.Millisecond))
	})
	t.Run("abort", func(t *testing.T) {
		eachDB(t, func(t *testing.T, e *env) {
			ctx := t.Context()
			id := e.readyMachine("aborted", "52:54:00:df:00:02")
			e.defaultImage()
			e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"deploy"}}, nil)
			r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", "52:54:00:df:00:02"), Purpose: "install", Enrol: e.enrol(id)})
			if err != nil || r.Action != agentapi.ActionProceed {
				t.Fatalf("hello: %+v %v", r, err)
			}
			tok := e.agent(r.Token)
			if err := tok.Signal(ctx, agentapi.StatusWorking, "", nil); err != nil {
				t.Fatal(err)
			}
			code, body := e.call(http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"abort"}})
			if code != http.StatusOK {
				t.Fatalf("abort: %d %s", code, body)
			}
			e.waitStatus(id, "Allocated")
			if err := tok.Signal(ctx, agentapi.StatusWorking, "", nil); !isStatus(err, 401) {
				t.Fatalf("heartbeat after the abort: %v", err)
			}
			q, err := e.srv.Store.PowerQueue(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, pr := range q {
				found = found || pr.Action == string(machine.PowerDown)
			}
			if last, _ := e.srv.Store.GetMachine(ctx, id); !found && last.Watch.LastAsk.Action != machine.PowerDown {
				t.Fatalf("no power off after the abort: queue %+v", q)
			}
		})
	})
}

// An enlisting environment that reads an IPMI BMC in-band is asked to give
// it Anvil's user; the credentials it sends make the machine power
// managed, and are never shown in events. Credentials nobody asked for are
// ignored.
func TestEnlistCreatesBMCUser(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		a := e.agent("")
		id := ident("6f2c1f1e-0000-4000-8000-0000000000b7", "52:54:00:b7:00:01")
		// Loopback, port 9 (discard): the power monitor may poll it.
		id.BMC = &machine.BMCInfo{Type: "ipmi", Address: "127.0.0.1", MAC: "02:00:00:00:00:77", Port: 9}
		r, err := a.Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: "enlist"})
		if err != nil || r.Action != agentapi.ActionEnlist || r.BMCUser != "anvil" {
			t.Fatalf("hello: %+v %v", r, err)
		}
		noBMC := ident("", "52:54:00:b7:00:09")
		if r, err := a.Hello(ctx, agentapi.HelloRequest{Identity: noBMC, Purpose: "enlist"}); err != nil || r.BMCUser != "" {
			t.Fatalf("hello without a BMC: %+v %v", r, err)
		}
		const pw = "Zq3xK8mN2pR7tW4v"
		if _, err := a.Enlist(ctx, agentapi.EnlistRequest{Identity: id, BMCCredentials: &agentapi.BMCCredentials{User: "anvil", Password: pw}}); err != nil {
			t.Fatal(err)
		}
		var list []apiMachine
		e.must(http.StatusOK, http.MethodGet, "machines/", e.admin, url.Values{"mac_address": {"52:54:00:b7:00:01"}}, &list)
		if len(list) != 1 || list[0].PowerType != "ipmi" {
			t.Fatalf("enlisted: %+v", list)
		}
		var params map[string]string
		e.must(http.StatusOK, http.MethodGet, "machines/"+list[0].SystemID+"/", e.admin, url.Values{"op": {"power_parameters"}}, &params)
		if params["power_address"] != "127.0.0.1:9" || params["power_user"] != "anvil" || params["power_pass"] != pw {
			t.Fatalf("power parameters %v", params)
		}
		var evs struct {
			Events []struct{ Type, Description string } `json:"events"`
		}
		e.must(http.StatusOK, http.MethodGet, "events/?op=query", e.admin, url.Values{"id": {list[0].SystemID}}, &evs)
		text := fmt.Sprint(evs.Events)
		if strings.Contains(text, pw) || !strings.Contains(text, "has the user anvil, created in-band") {
			t.Fatalf("events: %s", text)
		}

		// Another user name than the one asked for: not taken.
		other := ident("", "52:54:00:b7:00:02")
		other.BMC = &machine.BMCInfo{Type: "ipmi", Address: "127.0.0.2", Port: 9}
		if _, err := a.Enlist(ctx, agentapi.EnlistRequest{Identity: other, BMCCredentials: &agentapi.BMCCredentials{User: "root", Password: "calvin"}}); err != nil {
			t.Fatal(err)
		}
		e.must(http.StatusOK, http.MethodGet, "machines/", e.admin, url.Values{"mac_address": {"52:54:00:b7:00:02"}}, &list)
		if len(list) != 1 || list[0].PowerType != "manual" || strings.Contains(list[0].StatusMsg, "calvin") || !strings.Contains(list[0].StatusMsg, "ignored") {
			t.Fatalf("unasked credentials: %+v", list)
		}
	}, func(c *serve.Config) { c.EnlistBMCUser = "anvil" })
}
