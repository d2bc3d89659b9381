package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startPprof serves Go's profiles (net/http/pprof: CPU, heap, goroutines, mutexes) of the
// whole process on --pprof-addr, for profiling the pipeline under load (`go tool pprof
// http://ADDR/debug/pprof/profile?seconds=30` while `idstream bench` runs). Off unless the
// flag is given; it has no authentication, so it belongs on a loopback or private address,
// never beside the edge.
func (s *Service) startPprof(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	var err error
	s.pprofAddr, err = s.serveHTTP("pprof", addr, mux)
	return err
}

// serveHTTP serves handler on addr (net/http, not the edge's fiber) until the service stops,
// and returns the address it listens on.
func (s *Service) serveHTTP(name, addr string, handler http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s listen: %w", name, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	s.spawn(name, func(ctx context.Context) error {
		go func() {
			<-ctx.Done()
			_ = srv.Close()
		}()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return ln.Addr().String(), nil
}
