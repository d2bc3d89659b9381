package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPprof: with --pprof-addr the process serves its profiles there (and only there: the
// edge does not).
func TestPprof(t *testing.T) {
	s := testService(t, []string{"session"}, func(c *Config) { c.PprofAddr = "127.0.0.1:0" })
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("http://" + s.pprofAddr + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("goroutine profile: %d %.200s", code, body)
	}
	if code, _ := get("http://" + s.edgeAddr + "/debug/pprof/goroutine?debug=1"); code == http.StatusOK {
		t.Fatal("the edge serves profiles")
	}
}
