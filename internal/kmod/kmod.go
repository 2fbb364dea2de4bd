// Package kmod reads a kernel's modules as an initramfs builder needs
// them: the newest installed kernel, modules.dep and modules.builtin, the
// wanted modules with their dependencies in load order, decompressed.
package kmod

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Name is a module's canonical name: file name without the .ko suffix
// (and compression), dashes as underscores, as the kernel names it.
func Name(file string) string {
	b := path.Base(file)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}

// Index is what modules.dep and modules.builtin say about a kernel.
type Index struct {
	Path    map[string]string   // name → path relative to the modules dir
	Deps    map[string][]string // name → names it needs
	Builtin map[string]bool
}

func ReadIndex(dir string) (*Index, error) {
	idx := &Index{Path: map[string]string{}, Deps: map[string][]string{}, Builtin: map[string]bool{}}
	dep, err := os.ReadFile(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(dep))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n := Name(mod)
		idx.Path[n] = mod
		for _, d := range strings.Fields(rest) {
			idx.Deps[n] = append(idx.Deps[n], Name(d))
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, l := range strings.Fields(string(b)) {
			idx.Builtin[Name(l)] = true
		}
	}
	return idx, sc.Err()
}

// Resolve orders the wanted modules and their dependencies so each comes
// after everything it needs. It returns the order, the wanted names that are
// built in and those the kernel has neither way.
func (idx *Index) Resolve(wanted []string) (order, builtin, missing []string) {
	seen := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, d := range idx.Deps[n] {
			visit(d)
		}
		order = append(order, n)
	}
	for _, w := range wanted {
		n := Name(w)
		switch {
		case idx.Builtin[n]:
			builtin = append(builtin, n)
		case idx.Path[n] == "":
			missing = append(missing, n)
		default:
			visit(n)
		}
	}
	return order, builtin, missing
}

// Read reads a module file, decompressed: plain .ko and .ko.gz
// directly, .ko.xz and .ko.zst through the xz or zstd command when the
// build host has it.
func Read(file string) ([]byte, error) {
	switch {
	case strings.HasSuffix(file, ".ko"):
		return os.ReadFile(file)
	case strings.HasSuffix(file, ".ko.gz"):
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return io.ReadAll(zr)
	case strings.HasSuffix(file, ".ko.xz"):
		return decompressWith("xz", file)
	case strings.HasSuffix(file, ".ko.zst"):
		return decompressWith("zstd", file)
	}
	return nil, fmt.Errorf("%s: unknown module format", file)
}

func decompressWith(tool, file string) ([]byte, error) {
	if _, err := exec.LookPath(tool); err != nil {
		return nil, fmt.Errorf("%s is compressed and %s is not installed", file, tool)
	}
	out, err := exec.Command(tool, "-dc", file).Output()
	if err != nil {
		return nil, fmt.Errorf("%s -dc %s: %w", tool, file, err)
	}
	return out, nil
}

// NewestKernel is the newest kernel version with a vmlinuz in bootDir.
func NewestKernel(bootDir string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	var vs []string
	for _, m := range matches {
		vs = append(vs, strings.TrimPrefix(filepath.Base(m), "vmlinuz-"))
	}
	if len(vs) == 0 {
		return "", fmt.Errorf("no kernel installed (no %s/vmlinuz-*)", bootDir)
	}
	sort.Slice(vs, func(i, j int) bool { return versionLess(vs[i], vs[j]) })
	return vs[len(vs)-1], nil
}

// versionLess compares kernel versions number by number (6.1.0-10 before
// 6.1.0-9 would be wrong as strings).
func versionLess(a, b string) bool {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' })
	}
	pa, pb := split(a), split(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		var na, nb int
		_, ea := fmt.Sscan(pa[i], &na)
		_, eb := fmt.Sscan(pb[i], &nb)
		if ea == nil && eb == nil && na != nb {
			return na < nb
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}

// Module is a kernel module ready to put in an initramfs.
type Module struct {
	Name string
	File string // path relative to the kernel's modules directory
	Data []byte // decompressed
}

// Load resolves the wanted modules of the kernel whose modules live in dir
// (/lib/modules/<version>), dependencies first, built-in ones skipped; a
// module the kernel has neither way is an error.
func Load(dir string, wanted []string) ([]Module, error) {
	idx, err := ReadIndex(dir)
	if err != nil {
		return nil, err
	}
	order, _, missing := idx.Resolve(wanted)
	if len(missing) > 0 {
		return nil, fmt.Errorf("kernel %s has no module %s", filepath.Base(dir), strings.Join(missing, ", "))
	}
	out := make([]Module, 0, len(order))
	for _, n := range order {
		data, err := Read(filepath.Join(dir, idx.Path[n]))
		if err != nil {
			return nil, err
		}
		out = append(out, Module{Name: n, File: idx.Path[n], Data: data})
	}
	return out, nil
}
