package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
)

// regionProfileSeconds is how much of a sweep the region's CPU profile
// covers: shorter than a sweep of 10,000 BMCs, so that it is all sweep.
const regionProfileSeconds = 10

// sweepProfiles takes CPU profiles during a sweep, when a directory is
// set: the region's through its --pprof-listen, and this process's (the
// BMCs, and the racks when they run here), until stop.
type sweepProfiles struct {
	dir, name, pprofPort string
	self                 *os.File
	wg                   sync.WaitGroup
	errs                 []error
	mu                   sync.Mutex
}

// serverArgs are the flags the region needs for its profile.
func (p *sweepProfiles) serverArgs() ([]string, error) {
	if p.dir == "" {
		return nil, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p.pprofPort = port
	return []string{"--pprof-listen", "127.0.0.1:" + port}, nil
}

func (p *sweepProfiles) start(ctx context.Context) {
	if p.dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(p.dir, p.name+"-bench-cpu.pprof"))
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		} else {
			p.self = f
		}
	}
	p.note(err)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		u := fmt.Sprintf("http://127.0.0.1:%s/debug/pprof/profile?seconds=%d", p.pprofPort, regionProfileSeconds)
		p.note(fetchTo(ctx, u, filepath.Join(p.dir, p.name+"-region-cpu.pprof")))
	}()
}

// stopSelf ends this process's profile (at the end of the sweep).
func (p *sweepProfiles) stopSelf() {
	if p.self != nil {
		pprof.StopCPUProfile()
		p.note(p.self.Close())
		p.self = nil
	}
}

// wait waits for the region's profile and returns what went wrong.
func (p *sweepProfiles) wait() error {
	p.stopSelf()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, err := range p.errs {
		if err != nil {
			return fmt.Errorf("profile %s: %w", p.name, err)
		}
	}
	return nil
}

func (p *sweepProfiles) note(err error) {
	p.mu.Lock()
	p.errs = append(p.errs, err)
	p.mu.Unlock()
}
