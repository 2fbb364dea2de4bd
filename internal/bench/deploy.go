package bench

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anvilmetal/anvil/internal/agent"
	"github.com/anvilmetal/anvil/internal/agentapi"
)

// DeployConfig says what `anvil bench deploy` measures.
type DeployConfig struct {
	Binary   string // the anvil binary, re-run as the image's HTTP server
	Size     int64  // bytes written to the target (the raw image)
	Runs     int
	FileType string    // ddraw, ddgz or ddxz
	Dir      string    // where the image and the target go; "" for the temporary directory
	Out      io.Writer // progress
}

// DeployRun is one method's figures for one run.
type DeployRun struct {
	Method  string
	Run     int // from 1
	Bytes   int64
	Seconds float64
	CPU     float64 // user+system seconds of the writer (the server excluded)
}

// DeployResult is everything one bench measured.
type DeployResult struct {
	Config     DeployConfig
	ImageBytes int64 // served over HTTP
	Runs       []DeployRun
}

// The figures cover the writer alone: the image is served by a separate
// process (an anvil child running ServeImage), so neither side's CPU
// includes the server.

// RunDeploy generates an image, serves it from a child process, and times
// Anvil's deploy writer (agent.WriteImage) and a curl | dd pipeline
// writing it to a file next to it, alternating which goes first. It
// removes what it wrote before returning.
func RunDeploy(ctx context.Context, cfg DeployConfig) (DeployResult, error) {
	res := DeployResult{Config: cfg}
	if cfg.Size < 1<<20 || cfg.Runs < 1 {
		return res, errors.New("deploy bench: --size must be at least 1 MiB and --runs positive")
	}
	var decompress []string
	switch cfg.FileType {
	case agent.FileTypeRaw:
	case agent.FileTypeGz:
		decompress = []string{"gunzip"}
	case agent.FileTypeXz:
		decompress = []string{"xz", "-d"}
	default:
		return res, fmt.Errorf("deploy bench: unknown --filetype %q (ddraw, ddgz or ddxz)", cfg.FileType)
	}
	tools := []string{"curl", "dd"}
	if decompress != nil {
		tools = append(tools, decompress[0])
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return res, fmt.Errorf("deploy bench needs %s: %w", tool, err)
		}
	}
	dir, err := os.MkdirTemp(cfg.Dir, "anvil-deploy-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)

	logf := func(format string, args ...any) {
		if cfg.Out != nil {
			fmt.Fprintf(cfg.Out, format+"\n", args...)
		}
	}
	logf("generating a %d MiB %s image in %s...", cfg.Size>>20, cfg.FileType, dir)
	image, err := makeImage(ctx, dir, cfg.Size, cfg.FileType)
	if err != nil {
		return res, err
	}
	sum, size, err := hashFile(image)
	if err != nil {
		return res, err
	}
	res.ImageBytes = size

	srv := exec.CommandContext(ctx, cfg.Binary, "bench", "deploy", "serve-image", "--file", image)
	var srvErr strings.Builder
	srv.Stderr = &lockedWriter{w: &srvErr}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		return res, err
	}
	if err := srv.Start(); err != nil {
		return res, fmt.Errorf("start image server: %w", err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return res, fmt.Errorf("image server did not start: %v; it said: %s", err, srvErr.String())
	}
	url := "http://" + strings.TrimSpace(line) + "/image"
	img := agentapi.Image{URL: url, SHA256: sum, Size: size, FileType: cfg.FileType}
	target := filepath.Join(dir, "target")

	anvil := func(run int) (DeployRun, error) {
		r := DeployRun{Method: "anvil WriteImage", Run: run}
		f, err := os.Create(target)
		if err != nil {
			return r, err
		}
		f.Close()
		runtime.GC()
		before, err := selfCPU()
		if err != nil {
			return r, err
		}
		t := time.Now()
		r.Bytes, err = agent.WriteImage(ctx, img, target, 0, nil)
		r.Seconds = time.Since(t).Seconds()
		after, _ := selfCPU()
		r.CPU = (after - before).Seconds()
		return r, err
	}
	argvs := [][]string{{"curl", "-s", "-f", url}}
	if decompress != nil {
		argvs = append(argvs, decompress)
	}
	argvs = append(argvs, []string{"dd", "of=" + target, "bs=4M", "conv=fsync", "status=none"})
	names := make([]string, len(argvs))
	for i, a := range argvs {
		names[i] = a[0]
	}
	if decompress != nil {
		names[1] = strings.Join(decompress, " ")
	}
	shell := func(run int) (DeployRun, error) {
		r := DeployRun{Method: strings.Join(names, " | "), Run: run}
		t := time.Now()
		cpu, err := pipeline(ctx, argvs)
		r.Seconds = time.Since(t).Seconds()
		r.CPU = cpu.Seconds()
		if err != nil {
			return r, err
		}
		st, err := os.Stat(target)
		if err != nil {
			return r, err
		}
		r.Bytes = st.Size()
		if r.Bytes != cfg.Size {
			return r, fmt.Errorf("%s wrote %d bytes, want %d", r.Method, r.Bytes, cfg.Size)
		}
		return r, nil
	}

	for run := 1; run <= cfg.Runs; run++ {
		order := []func(int) (DeployRun, error){anvil, shell}
		if run%2 == 0 {
			order[0], order[1] = order[1], order[0]
		}
		for _, m := range order {
			r, err := m(run)
			_ = os.Remove(target)
			if err != nil {
				return res, fmt.Errorf("run %d, %s: %w", run, r.Method, err)
			}
			logf("run %d %-24s %.2f s  %.0f MB/s  cpu %.2f s", run, r.Method, r.Seconds, float64(r.Bytes)/1e6/r.Seconds, r.CPU)
			res.Runs = append(res.Runs, r)
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// makeImage writes the raw image, size bytes of 64 KiB blocks, half of
// them random (incompressible, like packaged files) and half zeros (like
// free space), then compresses it if the file type says so. It returns
// the path of the file to serve.
func makeImage(ctx context.Context, dir string, size int64, fileType string) (string, error) {
	raw := filepath.Join(dir, "image.raw")
	f, err := os.Create(raw)
	if err != nil {
		return "", err
	}
	rng := rand.NewChaCha8([32]byte{'a', 'n', 'v', 'i', 'l'})
	pick := rand.New(rand.NewPCG(1, 2))
	w := bufio.NewWriterSize(f, 4<<20)
	block := make([]byte, 64<<10)
	zero := make([]byte, len(block))
	for left := size; left > 0; {
		b := block[:min(int64(len(block)), left)]
		if pick.IntN(2) == 0 {
			_, _ = rng.Read(b)
		} else {
			b = zero[:len(b)]
		}
		if _, err := w.Write(b); err != nil {
			f.Close()
			return "", err
		}
		left -= int64(len(b))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	switch fileType {
	case agent.FileTypeGz:
		out := raw + ".gz"
		err = compressFile(raw, out, func(w io.Writer) (io.WriteCloser, error) {
			return gzip.NewWriterLevel(w, gzip.DefaultCompression)
		})
		os.Remove(raw)
		return out, err
	case agent.FileTypeXz:
		// xz -1 on all cores: the level barely changes decompression
		// speed, and higher ones take minutes to make the image.
		out := raw + ".xz"
		cmd := exec.CommandContext(ctx, "xz", "-1", "-T0", "-k", raw)
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("xz: %v: %s", err, b)
		}
		os.Remove(raw)
		return out, nil
	}
	return raw, nil
}

func compressFile(in, out string, newWriter func(io.Writer) (io.WriteCloser, error)) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(dst, 1<<20)
	zw, err := newWriter(bw)
	if err == nil {
		_, err = io.Copy(zw, src)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// selfCPU is this process's user+system time so far.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// pipeline runs argvs connected stdout to stdin and returns the user+system
// time of all of them, from their own rusage.
func pipeline(ctx context.Context, argvs [][]string) (time.Duration, error) {
	cmds := make([]*exec.Cmd, len(argvs))
	errs := make([]strings.Builder, len(argvs))
	var closeAfterStart []*os.File
	for i, a := range argvs {
		cmds[i] = exec.CommandContext(ctx, a[0], a[1:]...)
		cmds[i].Stderr = &errs[i]
	}
	for i := 0; i+1 < len(cmds); i++ {
		r, w, err := os.Pipe()
		if err != nil {
			return 0, err
		}
		cmds[i].Stdout, cmds[i+1].Stdin = w, r
		closeAfterStart = append(closeAfterStart, r, w)
	}
	var started []*exec.Cmd
	var err error
	for _, c := range cmds {
		if err = c.Start(); err != nil {
			break
		}
		started = append(started, c)
	}
	for _, f := range closeAfterStart {
		f.Close()
	}
	var cpu time.Duration
	for i, c := range started {
		werr := c.Wait()
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		if werr != nil && err == nil {
			err = fmt.Errorf("%s: %v: %s", argvs[i][0], werr, strings.TrimSpace(errs[i].String()))
		}
	}
	return cpu, err
}

// ServeImage serves the file at /image with http.ServeContent (Range
// requests included) on a free loopback port, prints the address on out,
// and serves until ctx ends.
func ServeImage(ctx context.Context, path string, out io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /image", func(w http.ResponseWriter, r *http.Request) {
		// Each request reads through its own section of the file.
		http.ServeContent(w, r, "image", st.ModTime(), io.NewSectionReader(f, 0, st.Size()))
	})
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintln(out, l.Addr().String())
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ParseSize reads a byte count such as 512MiB, 1GiB, 100MB or 4096.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	num := strings.TrimRight(t, "kmgtib")
	mult := map[string]int64{
		"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
	}[t[len(num):]]
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || mult == 0 || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 512MiB, 2GiB)", s)
	}
	return int64(n * float64(mult)), nil
}

// DeployMarkdown renders each run and each method's median as a table.
func DeployMarkdown(res DeployResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s image, %d MiB written (%d bytes served), %d runs; target a file in the image's directory\n\n",
		res.Config.FileType, res.Config.Size>>20, res.ImageBytes, res.Config.Runs)
	b.WriteString("| method | run | bytes | seconds | MB/s | CPU seconds |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	row := func(method, run string, bytes int64, secs, cpu float64) {
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.0f | %.2f |\n", method, run, bytes, secs, float64(bytes)/1e6/secs, cpu)
	}
	// A pipe in a table cell needs escaping, also inside code.
	cell := func(m string) string { return "`" + strings.ReplaceAll(m, "|", `\|`) + "`" }
	var methods []string
	by := map[string][]DeployRun{}
	for _, r := range res.Runs {
		if by[r.Method] == nil {
			methods = append(methods, r.Method)
		}
		by[r.Method] = append(by[r.Method], r)
	}
	for _, m := range methods {
		for _, r := range by[m] {
			row(cell(m), strconv.Itoa(r.Run), r.Bytes, r.Seconds, r.CPU)
		}
	}
	for _, m := range methods {
		rs := by[m]
		secs := make([]float64, len(rs))
		cpu := make([]float64, len(rs))
		for i, r := range rs {
			secs[i], cpu[i] = r.Seconds, r.CPU
		}
		row(cell(m), "**median**", rs[0].Bytes, median(secs), median(cpu))
	}
	return b.String()
}
