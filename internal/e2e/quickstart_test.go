package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/lab/demo"
)

// TestQuickstart runs the README's quickstart, `anvil lab demo`, as an
// operator would: it builds what is missing (the Debian image from the
// README's recipe, cached), and its one QEMU machine enlists, is
// commissioned and deployed with Debian. The test waits for DEPLOYED
// through the forwarded API, then for Debian's login prompt on the serial
// console, interrupts the demo and checks that the namespace and every
// process it started are gone.
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a QEMU machine")
	}
	if os.Geteuid() != 0 {
		t.Skip("lab demo needs root")
	}
	for _, bin := range []string{"qemu-system-x86_64", "ipmi_sim", "debootstrap", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it)", bin)
		}
	}
	t.Parallel() // the demo's namespace and ports are its own
	bin := anvilBinary(t)
	ns := fmt.Sprintf("anvdemo%d", os.Getpid()%100000)
	tmp := t.TempDir()
	state := filepath.Join(tmp, "state")
	sshKey := filepath.Join(tmp, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", sshKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	// The cache is the temp directory, shared with the other tests' builds
	// of the environment.
	cmd := exec.Command(bin, "lab", "demo", "--dir", state, "--cache", os.TempDir(), "--netns", ns, "--web", "127.0.0.1:0",
		"--ssh-key", sshKey+".pub")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &demoOut{}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go out.read(pipe)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
		if t.Failed() {
			t.Logf("lab demo output:\n%s", out.String())
			b, _ := os.ReadFile(filepath.Join(state, "serve.log"))
			t.Logf("anvil serve log (end):\n%s", tail(b, 8000))
		}
	})

	// Building the image (once) takes about 3 minutes, the environment
	// about one.
	web := out.await(t, exited, `web page\s+(\S+)`, 15*time.Minute)
	key := out.await(t, exited, `API key\s+(\S+)`, time.Second)
	cl, err := client.New(web, key)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var id string
	deadline := time.Now().Add(15 * time.Minute)
	for status := ""; status != "Deployed"; time.Sleep(2 * time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("machine %s is %q, not Deployed, after 15 minutes", id, status)
		}
		select {
		case err := <-exited:
			t.Fatalf("lab demo ended before the machine was deployed: %v", err)
		default:
		}
		b, err := cl.Do(context.Background(), "GET", "machines/", nil, nil)
		if err != nil {
			continue
		}
		var ms []struct {
			ID     string `json:"system_id"`
			Status string `json:"status_name"`
			Msg    string `json:"status_message"`
		}
		if json.Unmarshal(b, &ms) != nil || len(ms) == 0 {
			continue
		}
		if len(ms) != 1 {
			t.Fatalf("%d machines, not one: %s", len(ms), b)
		}
		id, status = ms[0].ID, ms[0].Status
		if strings.HasPrefix(status, "Failed") {
			t.Fatalf("machine %s is %s: %s", id, status, ms[0].Msg)
		}
	}
	t.Logf("first machine seen to DEPLOYED: %.0f s", time.Since(t0).Seconds())
	serial := filepath.Join(state, "machine", "qemu", "serial.log")
	deadline = time.Now().Add(5 * time.Minute)
	for {
		b, _ := os.ReadFile(serial)
		if demo.LoginPrompt.Match(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no login prompt on the serial console 5 minutes after DEPLOYED:\n%s", tail(b, 6000))
		}
		time.Sleep(time.Second)
	}
	t.Logf("first machine seen to the login prompt: %.0f s", time.Since(t0).Seconds())

	// The user cloud-init made logs in with the key from the demo's
	// user data, on a root mounted read-write.
	b, _ := os.ReadFile(serial)
	m := regexp.MustCompile(`boot0\s*\|\s*True\s*\|\s*(198\.51\.100\.\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no address of the deployed machine on its serial console:\n%s", tail(b, 6000))
	}
	ssh := func(command string) ([]byte, error) {
		return exec.Command("ip", "netns", "exec", ns, "ssh", "-i", sshKey, "-o", "BatchMode=yes",
			"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10",
			"debian@"+string(m[1]), command).CombinedOutput()
	}
	rootRW := func() {
		t.Helper()
		var login []byte
		deadline := time.Now().Add(3 * time.Minute)
		for {
			login, err = ssh("findmnt -no OPTIONS /")
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(3 * time.Second)
		}
		if err != nil || !strings.HasPrefix(strings.TrimSpace(lastLine(login)), "rw") {
			t.Fatalf("ssh debian@%s findmnt /: %v\n%s", m[1], err, login)
		}
	}
	rootRW()

	// DEPLOYED came from the installed OS (cloud-init's phone_home with
	// the deployment's token), after the rack had sent it to its disk.
	evs := machineEvents(t, cl, id)
	local := slices.IndexFunc(evs, func(e string) bool { return strings.HasPrefix(e, "Booting from disk:") })
	up := slices.IndexFunc(evs, func(e string) bool { return strings.Contains(e, "the deployed OS reported that it is up") })
	if local < 0 || up < 0 || up < local {
		t.Fatalf("the timeline does not show the local boot and then the OS's report:\n%s", strings.Join(evs, "\n"))
	}

	// Rebooted from inside, twice: each time the firmware netboots first,
	// the rack answers with a local boot, and it comes up from its disk.
	// Nothing in between boots Anvil's environment.
	for i := 1; i <= 2; i++ {
		before := len(demo.LoginPrompt.FindAll(readFile(serial), -1))
		_, _ = ssh("sudo systemctl reboot") // the connection drops
		deadline := time.Now().Add(6 * time.Minute)
		for len(demo.LoginPrompt.FindAll(readFile(serial), -1)) <= before {
			if time.Now().After(deadline) {
				t.Fatalf("reboot %d: no new login prompt within 6 minutes:\n%s", i, tail(readFile(serial), 6000))
			}
			time.Sleep(2 * time.Second)
		}
		rootRW()
	}
	evs = machineEvents(t, cl, id)
	for _, e := range evs[up:] {
		if strings.Contains(e, "purpose enlist") || strings.Contains(e, "purpose ephemeral") || strings.Contains(e, "purpose install") ||
			strings.HasPrefix(e, "Wrong boot") || strings.HasPrefix(e, "Boot loop") {
			t.Fatalf("after DEPLOYED the machine reached Anvil's environment (%q):\n%s", e, strings.Join(evs[up:], "\n"))
		}
	}
	if n := countWith(evs[up:], "purpose local"); n < 2 {
		t.Fatalf("%d local-boot answers after DEPLOYED, want one per reboot:\n%s", n, strings.Join(evs[up:], "\n"))
	}
	if b, err := cl.Do(context.Background(), "GET", "machines/"+id+"/", nil, nil); err != nil || !strings.Contains(string(b), `"status_name":"Deployed"`) {
		t.Fatalf("after two reboots: %v %s", err, b)
	}

	// Ctrl-C: everything the demo started goes.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("lab demo after an interrupt: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("lab demo still runs a minute after an interrupt")
	}
	if b, _ := exec.Command("ip", "netns", "list").Output(); regexp.MustCompile(`(?m)^` + ns + `\b`).Match(b) {
		t.Errorf("namespace %s is left after the interrupt", ns)
	}
	pids := out.pids()
	if len(pids) < 2 {
		t.Fatalf("the demo named %d process ids (serve, QEMU), not 2 or more", len(pids))
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d the demo started still runs after the interrupt", pid)
		}
	}
}

// demoOut collects a process's output and finds values in it.
type demoOut struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *demoOut) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.mu.Lock()
		l.buf.WriteString(sc.Text() + "\n")
		l.mu.Unlock()
	}
}

func (l *demoOut) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// await returns the first group of pattern once the output has it.
func (l *demoOut) await(t *testing.T, exited chan error, pattern string, d time.Duration) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(d)
	for {
		if m := re.FindStringSubmatch(l.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("lab demo ended (%v) before printing %q", err, pattern)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab demo did not print %q within %s", pattern, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pids are the process ids the demo says it started.
func (l *demoOut) pids() []int {
	var out []int
	for _, m := range regexp.MustCompile(`\(pid (\d+)\)`).FindAllStringSubmatch(l.String(), -1) {
		if n, err := strconv.Atoi(m[1]); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// machineEvents is machine id's timeline, oldest first, as "Type: text".
func machineEvents(t *testing.T, cl *client.Client, id string) []string {
	t.Helper()
	page, err := cl.QueryEvents(context.Background(), url.Values{"id": {id}, "limit": {"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(page.Events))
	for i := len(page.Events) - 1; i >= 0; i-- {
		out = append(out, page.Events[i].Type+": "+page.Events[i].Description)
	}
	return out
}

func countWith(lines []string, text string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, text) {
			n++
		}
	}
	return n
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
