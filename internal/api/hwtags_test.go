package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agent"
	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/scripts"
)

func lshwXML(memBytes int64) string {
	return fmt.Sprintf(`<?xml version="1.0" standalone="yes" ?>
<list><node id="vm" class="system"><vendor>QEMU</vendor>
<node id="core" class="bus"><node id="memory" class="memory"><size units="bytes">%d</size></node></node>
</node></list>`, memBytes)
}

// commissionWithLSHW commissions a machine as its environment would,
// reporting the given lshw XML as the 00-maas-01-lshw result, and ends
// the phase.
func (e *env) commissionWithLSHW(host, mac, xml string) string {
	e.t.Helper()
	m := e.addMachine(host, mac, nil)
	e.must(200, http.MethodPost, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"commission"}}, nil)
	ctx := e.t.Context()
	r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", mac), Purpose: "ephemeral", Enrol: e.enrol(m.SystemID)})
	if err != nil || r.Action != agentapi.ActionProceed {
		e.t.Fatalf("hello: %+v %v", r, err)
	}
	env := e.agent(r.Token)
	task, err := env.Task(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	inv := inventoryFile(e.t, testInventory(mac))
	runner := &agent.ScriptRunner{Report: env.Report, Logf: e.t.Logf, Dir: e.t.TempDir(),
		Builtin: func(ctx context.Context, name string) ([]byte, error) {
			if name == scripts.LSHW {
				return []byte(xml), nil
			}
			return inv[agentapi.InventoryFile], nil
		}}
	if bad, err := runner.Run(ctx, task.Scripts); err != nil || len(bad) > 0 {
		e.t.Fatalf("commissioning scripts: %v %v", bad, err)
	}
	if err := env.Signal(ctx, agentapi.StatusOK, "", inv); err != nil {
		e.t.Fatal(err)
	}
	e.waitStatus(m.SystemID, "Ready")
	return m.SystemID
}

func (e *env) tagged(tag string) []string {
	e.t.Helper()
	var ms []apiMachine
	e.must(200, http.MethodGet, "tags/"+tag+"/", e.user, url.Values{"op": {"machines"}}, &ms)
	var out []string
	for _, m := range ms {
		out = append(out, m.Hostname)
	}
	return out
}

// TestXPathTags: a tag with an XPath definition over lshw's XML is
// applied to the machine it matches and not to the other, when it is
// created, when a machine is commissioned after it, and when its
// definition changes; an invalid XPath is MAAS's 400 with nothing
// stored; the tag's kernel_opts reach the matching machine's boot
// config through a rack following the region.
func TestXPathTags(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.commissionWithLSHW("big", "52:54:00:7a:00:01", lshwXML(2<<30))
		e.commissionWithLSHW("small", "52:54:00:7a:00:02", lshwXML(256<<20))
		var sets []apiSet
		e.must(200, http.MethodGet, "nodes/"+e.machineByHost("big")+"/results/", e.user, url.Values{"type": {"commissioning"}, "include_output": {"1"}}, &sets)
		found := false
		for _, r := range sets[0].Results {
			found = found || r.Name == scripts.LSHW && r.StatusName == "Passed" && strings.Contains(dec(t, r.Stdout), "<size units=\"bytes\">2147483648</size>")
		}
		if !found {
			t.Fatalf("no lshw result: %+v", sets)
		}

		code, b := e.call(http.MethodPost, "tags/", e.admin, url.Values{"name": {"broken"}, "definition": {`//node[@id="memory"`}})
		if code != 400 || !strings.Contains(string(b), `{"definition":["Invalid XPath expression: `) {
			t.Fatalf("invalid xpath: %d %s", code, b)
		}
		if code, _ := e.call(http.MethodGet, "tags/broken/", e.user, nil); code != 404 {
			t.Fatalf("the invalid tag was stored: %d", code)
		}

		// A kernel option iPXE's loader would misread is refused; nothing stored.
		if code, b := e.call(http.MethodPost, "tags/", e.admin, url.Values{"name": {"misread"}, "kernel_opts": {"quiet hugemem=1"}}); code != 400 ||
			!strings.Contains(string(b), `"hugemem=1\" contains \"mem=\"`) {
			t.Fatalf("kernel_opts with mem= inside a word: %d %s", code, b)
		}
		if code, _ := e.call(http.MethodGet, "tags/misread/", e.user, nil); code != 404 {
			t.Fatalf("the refused tag was stored: %d", code)
		}
		def := `//node[@id="memory"]/size[@units="bytes"] > 500000000`
		e.must(200, http.MethodPost, "tags/", e.admin, url.Values{"name": {"bigmem"}, "definition": {def}, "kernel_opts": {"hugepages=16 nomodeset"}}, nil)
		if got := e.tagged("bigmem"); strings.Join(got, ",") != "big" {
			t.Fatalf("bigmem machines %v", got)
		}
		// Commissioned after the tag exists: tagged by its own lshw.
		e.commissionWithLSHW("big2", "52:54:00:7a:00:03", lshwXML(1<<30))
		if got := e.tagged("bigmem"); strings.Join(got, ",") != "big,big2" {
			t.Fatalf("bigmem machines after commissioning %v", got)
		}
		// A new definition, then rebuild: applied at once.
		e.must(200, http.MethodPut, "tags/bigmem/", e.admin, url.Values{"definition": {`//node[@id="memory"]/size > 1500000000`}}, nil)
		if got := e.tagged("bigmem"); strings.Join(got, ",") != "big" {
			t.Fatalf("bigmem machines after the new definition %v", got)
		}
		if code, b := e.call(http.MethodPut, "tags/bigmem/", e.admin, url.Values{"definition": {"//node[@"}}); code != 400 || !strings.Contains(string(b), "Invalid XPath expression") {
			t.Fatalf("invalid update: %d %s", code, b)
		}
		var tag map[string]any
		e.must(200, http.MethodGet, "tags/bigmem/", e.user, nil, &tag)
		if tag["definition"] != `//node[@id="memory"]/size > 1500000000` {
			t.Fatalf("a refused definition replaced the stored one: %v", tag["definition"])
		}
		e.must(200, http.MethodPost, "tags/bigmem/", e.admin, url.Values{"op": {"rebuild"}}, nil)
		if got := e.tagged("bigmem"); strings.Join(got, ",") != "big" {
			t.Fatalf("bigmem machines after rebuild %v", got)
		}

		// The kernel options reach the boot config of the machine with
		// the tag, through a rack following the region.
		cl, err := client.New(e.base, e.admin)
		if err != nil {
			t.Fatal(err)
		}
		cache := rack.NewCache("")
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go rack.Follow(ctx, cl, cache, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		for _, id := range []string{e.machineByHost("big"), e.machineByHost("small")} {
			e.must(200, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"commission"}}, nil)
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "lpxelinux.0"), []byte("loader"), 0o644)
		src := &rack.BootSource{Cache: cache, Files: boot.Dir(dir), Report: rack.NewReporter(10), HTTPBase: "http://192.0.2.1:5248",
			MetadataURL: "http://192.0.2.1:5240/MAAS/metadata/", Kernel: "ephemeral/vmlinuz", Initrd: "ephemeral/initrd.img"}
		cfg := func(mac string) string {
			f, err := src.Open(context.Background(), "ipxe.cfg-"+mac, boot.Client{Proto: "http"})
			if err != nil {
				return err.Error()
			}
			b, _ := io.ReadAll(f)
			return string(b)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(cfg("52:54:00:7a:00:01"), "hugepages=16 nomodeset") || !strings.Contains(cfg("52:54:00:7a:00:02"), "anvil.purpose=ephemeral") {
			if time.Now().After(deadline) {
				t.Fatalf("big's boot config: %s", cfg("52:54:00:7a:00:01"))
			}
			time.Sleep(50 * time.Millisecond)
		}
		if c := cfg("52:54:00:7a:00:02"); strings.Contains(c, "hugepages") || !strings.Contains(c, "anvil.purpose=ephemeral") {
			t.Fatalf("small's boot config: %s", c)
		}
		// Changing the kernel options reaches the rack too.
		e.must(200, http.MethodPut, "tags/bigmem/", e.admin, url.Values{"kernel_opts": {"hugepages=32"}}, nil)
		for !strings.Contains(cfg("52:54:00:7a:00:01"), "hugepages=32") {
			if time.Now().After(deadline.Add(10 * time.Second)) {
				t.Fatalf("big's boot config after the change: %s", cfg("52:54:00:7a:00:01"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func (e *env) machineByHost(host string) string {
	e.t.Helper()
	var ms []apiMachine
	e.must(200, http.MethodGet, "machines/", e.admin, url.Values{"hostname": {host}}, &ms)
	if len(ms) != 1 {
		e.t.Fatalf("machines named %s: %d", host, len(ms))
	}
	return ms[0].SystemID
}
