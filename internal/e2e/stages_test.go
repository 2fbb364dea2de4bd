package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// stages times a boot from the outside: it watches a machine's serial
// console (which accumulates across boots, so it starts at the current
// end) and notes when each marker first appears, to within the 100 ms it
// polls at. The agent's own stage line adds what happens inside it.
type stages struct {
	start   time.Time
	path    string
	offset  int64
	markers []marker
	stop    chan struct{}
	done    chan struct{}

	mu   sync.Mutex
	seen map[string]time.Time
	text string
}

type marker struct {
	name string
	re   *regexp.Regexp
}

// bootMarkers are the steps of a network boot into Anvil's environment as
// SeaBIOS, iPXE, Linux and the agent print them on the serial console.
var bootMarkers = []marker{
	{"firmware", regexp.MustCompile(`iPXE \(http`)},
	{"dhcp", regexp.MustCompile(`Configuring \(net\d [^)]*\)[. ]*ok`)},
	{"loader", regexp.MustCompile(`Linux version`)},
	{"kernel", regexp.MustCompile(`anvil-agent: `)},
	{"agent", regexp.MustCompile(`anvil-agent: hello action=`)},
	{"done", regexp.MustCompile(`anvil-agent: stage `)},
}

func watchStages(serial string) *stages {
	st := &stages{start: time.Now(), path: serial, markers: bootMarkers, stop: make(chan struct{}), done: make(chan struct{}), seen: map[string]time.Time{}}
	if fi, err := os.Stat(serial); err == nil {
		st.offset = fi.Size()
	}
	go st.run()
	return st
}

func (st *stages) run() {
	defer close(st.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-st.stop:
			return
		case <-t.C:
		}
		b, err := os.ReadFile(st.path)
		if err != nil || int64(len(b)) < st.offset {
			continue
		}
		text := string(b[st.offset:])
		now := time.Now()
		st.mu.Lock()
		st.text = text
		for _, m := range st.markers {
			if _, ok := st.seen[m.name]; !ok && m.re.MatchString(text) {
				st.seen[m.name] = now
			}
		}
		st.mu.Unlock()
	}
}

// mark notes an event seen from outside the console (READY, power off).
func (st *stages) mark(name string) {
	st.mu.Lock()
	st.seen[name] = time.Now()
	st.mu.Unlock()
}

var stageLine = regexp.MustCompile(`anvil-agent: stage (.*)`)

// report stops watching and renders the stages in order, each as the
// time since the one before, with the agent's own breakdown.
func (st *stages) report(title string, order ...string) string {
	close(st.stop)
	<-st.done
	st.mu.Lock()
	defer st.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%s (total %.1f s)\n", title, st.latest().Sub(st.start).Seconds())
	prev := st.start
	for _, name := range order {
		at, ok := st.seen[name]
		if !ok {
			fmt.Fprintf(&b, "  %-10s not seen\n", name)
			continue
		}
		fmt.Fprintf(&b, "  %-10s %6.1f s  (at %6.1f s)\n", name, at.Sub(prev).Seconds(), at.Sub(st.start).Seconds())
		prev = at
	}
	if m := stageLine.FindAllStringSubmatch(st.text, -1); len(m) > 0 {
		fmt.Fprintf(&b, "  agent: %s\n", strings.TrimSpace(m[len(m)-1][1]))
	}
	return b.String()
}

func (st *stages) latest() time.Time {
	l := st.start
	for _, t := range st.seen {
		if t.After(l) {
			l = t
		}
	}
	return l
}
