package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// servePprof serves Go's profiler (net/http/pprof) on its own listener,
// apart from the API, for profiling a running region:
//
//	go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=30
//
// It is off unless --pprof-listen is given; bind it to loopback, since it
// has no authentication.
func servePprof(addr string, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("profiler listening", "addr", l.Addr().String())
	go func() { _ = http.Serve(l, mux) }()
	return nil
}
