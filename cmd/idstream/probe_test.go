package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestProbe: `idstream probe` exits 0 on a 2xx answer only (a container's health check).
func TestProbe(t *testing.T) {
	var ready atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	probe := func(url string) int {
		var out, errOut bytes.Buffer
		return run(context.Background(), []string{"probe", url}, &out, &errOut)
	}
	if code := probe(srv.URL + "/readyz"); code == 0 {
		t.Fatal("probe of a 503 succeeded")
	}
	ready.Store(true)
	if code := probe(srv.URL + "/readyz"); code != 0 {
		t.Fatalf("probe of a 200: exit %d", code)
	}
	srv.Close()
	if code := probe(srv.URL + "/readyz"); code == 0 {
		t.Fatal("probe of a closed server succeeded")
	}
}
