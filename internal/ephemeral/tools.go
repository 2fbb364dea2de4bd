package ephemeral

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/anvilmetal/anvil/internal/agent"
)

// RootfsFiles are data files the agent reads for root filesystem
// tarballs, copied from the build machine when it has them.
var RootfsFiles = []string{agent.MBRCodeFile, agent.Mke2fsConf}

// addRootfsTools adds agent.RootfsTools and agent.LayoutTools (as
// usr/sbin/<name>) with the shared libraries ldd lists for them, and
// RootfsFiles, to files. What the build machine lacks is returned, not an
// error: the environment then fails the deployments that need it only.
func addRootfsTools(files map[string]entry) (added, missing []string, err error) {
	added, missing, err = addTools(files, append(append([]string(nil), agent.RootfsTools...), agent.LayoutTools...), "usr/sbin/")
	if err != nil {
		return added, missing, err
	}
	for _, f := range RootfsFiles {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, f)
			continue
		}
		if err != nil {
			return added, missing, err
		}
		files[strings.TrimPrefix(f, "/")] = entry{Mode: 0o644, Data: b}
		added = append(added, f)
	}
	return added, missing, nil
}

// addTools adds the programs named (as dir+name) with the shared
// libraries ldd lists for them; those the build machine lacks are
// returned as missing.
func addTools(files map[string]entry, names []string, dir string) (added, missing []string, err error) {
	for _, name := range names {
		p, lerr := exec.LookPath(name)
		if lerr != nil {
			for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
				if fi, serr := os.Stat(filepath.Join(d, name)); serr == nil && fi.Mode().IsRegular() {
					p, lerr = filepath.Join(d, name), nil
					break
				}
			}
		}
		if lerr != nil {
			missing = append(missing, name)
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return added, missing, err
		}
		libs, err := sharedLibs(p)
		if err != nil {
			return added, missing, err
		}
		files[dir+name] = entry{Mode: 0o755, Data: data}
		for _, lib := range libs {
			b, err := os.ReadFile(lib) // through symbolic links
			if err != nil {
				return added, missing, fmt.Errorf("%s needs %s: %w", name, lib, err)
			}
			files[strings.TrimPrefix(lib, "/")] = entry{Mode: 0o755, Data: b}
		}
		added = append(added, name)
	}
	return added, missing, nil
}

// sharedLibs lists the absolute paths of the shared libraries and the
// dynamic loader ldd names for a program (none for a static one).
func sharedLibs(prog string) ([]string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("ldd", prog)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(string(out)+stderr.String(), "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %v: %s", prog, err, stderr.String())
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if _, rest, ok := strings.Cut(l, "=>"); ok {
			l = strings.TrimSpace(rest)
		}
		f := strings.Fields(l)
		if len(f) == 0 || !strings.HasPrefix(f[0], "/") {
			if strings.Contains(l, "not found") {
				return nil, fmt.Errorf("ldd %s: %s", prog, l)
			}
			continue // linux-vdso.so.1 and the like
		}
		libs = append(libs, f[0])
	}
	return libs, sc.Err()
}
