// Package ephemeral builds Anvil's ephemeral environment: the distribution's
// kernel and an initramfs whose /init is the Anvil agent, with the kernel
// modules the agent loads for NICs, disks and the in-band BMC.
package ephemeral

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvilmetal/anvil/internal/kmod"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agent"
)

// Options says what to build and from where. Zero values take the defaults.
type Options struct {
	Out           string   // output directory (created)
	KernelVersion string   // default: the newest installed
	BootDir       string   // default /boot
	ModulesDir    string   // default /lib/modules
	SourceDir     string   // the Anvil module's root; default: found from the working directory
	Modules       []string // default WantedModules
	// Agent, when set, is a prebuilt agent binary used instead of building one.
	Agent string
}

// File describes one output file.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Manifest describes a build; it is written as manifest.json.
type Manifest struct {
	KernelVersion string    `json:"kernel_version"`
	Arch          string    `json:"arch"`
	Kernel        File      `json:"kernel"`
	Initrd        File      `json:"initrd"`
	AgentSize     int64     `json:"agent_size"`
	Modules       []string  `json:"modules"` // load order, dependencies included
	ModulesSize   int64     `json:"modules_size"`
	Builtin       []string  `json:"builtin,omitempty"`
	Missing       []string  `json:"missing,omitempty"`
	BuiltAt       time.Time `json:"built_at"`

	// Tools are the programs and files for root filesystem tarballs the
	// initramfs carries; MissingTools those the build machine lacked.
	Tools        []string `json:"tools,omitempty"`
	MissingTools []string `json:"missing_tools,omitempty"`
	// ScriptTools are the programs commissioning and testing scripts use
	// (agent.ScriptTools); MissingScriptTools those the build machine
	// lacked, whose scripts then skip or fail in words.
	ScriptTools        []string `json:"script_tools,omitempty"`
	MissingScriptTools []string `json:"missing_script_tools,omitempty"`
}

// Output file names in Options.Out.
const (
	KernelFile   = "vmlinuz"
	InitrdFile   = "initrd.img"
	ManifestFile = "manifest.json"
)

// Build builds the environment into o.Out.
func Build(o Options) (*Manifest, error) {
	if o.Out == "" {
		return nil, errors.New("ephemeral: no output directory")
	}
	if o.BootDir == "" {
		o.BootDir = "/boot"
	}
	if o.ModulesDir == "" {
		o.ModulesDir = "/lib/modules"
	}
	if o.Modules == nil {
		o.Modules = WantedModules
	}
	if o.KernelVersion == "" {
		v, err := NewestKernel(o.BootDir)
		if err != nil {
			return nil, err
		}
		o.KernelVersion = v
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	m := &Manifest{KernelVersion: o.KernelVersion, Arch: runtime.GOARCH, BuiltAt: time.Now().UTC()}

	agentBin, err := o.agent()
	if err != nil {
		return nil, err
	}
	m.AgentSize = int64(len(agentBin))
	files := map[string]entry{
		"init": {Mode: 0o755, Data: agentBin},
		"dev":  {Dir: true, Mode: 0o755}, "proc": {Dir: true, Mode: 0o555}, "sys": {Dir: true, Mode: 0o555},
		"run": {Dir: true, Mode: 0o755}, "tmp": {Dir: true, Mode: 0o1777},
	}

	modDir := filepath.Join(o.ModulesDir, o.KernelVersion)
	idx, err := kmod.ReadIndex(modDir)
	if err != nil {
		return nil, fmt.Errorf("kernel %s modules: %w", o.KernelVersion, err)
	}
	order, builtin, missing := idx.Resolve(o.Modules)
	m.Builtin, m.Missing = builtin, missing
	var list strings.Builder
	for _, n := range order {
		data, err := kmod.Read(filepath.Join(modDir, idx.Path[n]))
		if err != nil {
			return nil, err
		}
		name := n + ".ko"
		files[strings.TrimPrefix(agent.ModulesDir, "/")+"/"+name] = entry{Mode: 0o644, Data: data}
		list.WriteString(name + "\n")
		m.Modules = append(m.Modules, n)
		m.ModulesSize += int64(len(data))
	}
	files[strings.TrimPrefix(agent.ModulesList, "/")] = entry{Mode: 0o644, Data: []byte(list.String())}

	if m.Tools, m.MissingTools, err = addRootfsTools(files); err != nil {
		return nil, err
	}
	// The scripts' shell (busybox sh) and the shipped scripts' programs.
	if m.ScriptTools, m.MissingScriptTools, err = addTools(files, agent.ScriptTools, "usr/bin/"); err != nil {
		return nil, err
	}

	var initrd bytes.Buffer
	if err := writeCpio(&initrd, files); err != nil {
		return nil, err
	}
	if m.Initrd, err = writeOut(o.Out, InitrdFile, initrd.Bytes()); err != nil {
		return nil, err
	}
	kernel, err := os.ReadFile(filepath.Join(o.BootDir, "vmlinuz-"+o.KernelVersion))
	if err != nil {
		return nil, err
	}
	if m.Kernel, err = writeOut(o.Out, KernelFile, kernel); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := writeOut(o.Out, ManifestFile, append(js, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

func writeOut(dir, name string, data []byte) (File, error) {
	sum := sha256.Sum256(data)
	f := File{Name: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	return f, os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// agent returns the agent binary: o.Agent's, or a static build of
// ./cmd/anvil-agent.
func (o Options) agent() ([]byte, error) {
	if o.Agent != "" {
		return os.ReadFile(o.Agent)
	}
	src := o.SourceDir
	if src == "" {
		var err error
		if src, err = ModuleRoot(); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "anvil-agent-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "anvil-agent")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/anvil-agent")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/anvil-agent: %v\n%s", err, out)
	}
	return os.ReadFile(bin)
}

// ModuleRoot is the directory of the go.mod the working directory is in.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the Anvil module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}

// NewestKernel is the newest kernel version with a vmlinuz in bootDir.
func NewestKernel(bootDir string) (string, error) { return kmod.NewestKernel(bootDir) }
