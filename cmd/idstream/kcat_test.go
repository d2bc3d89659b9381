package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestKcatReadsDecisions: kcat (librdkafka, Debian's build), as a data team would point it at
// ekyc.decisions.v1, reads the committed decision of a session: its key is the session id
// and its value starts with the single-object encoding's header (deploy/DATA.md).
func TestKcatReadsDecisions(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (make deps installs it)")
	}
	s := testService(t, []string{"session", "quality", "chip", "liveness", "facematch", "fraud", "decision"})
	c := newClient(t, s)
	id := runFlow(t, s, c, "nfc_only", 12)
	c.waitStatus(id, "verified")
	out, err := exec.Command(kcat, "-C", "-b", strings.Join(s.brokers, ","), "-t", "ekyc.decisions.v1",
		"-o", "beginning", "-e", "-q", "-f", "%k\t%s\n").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	i := bytes.Index(out, []byte(id+"\t"))
	if i < 0 {
		t.Fatalf("kcat read no decision keyed %s: %q", id, out)
	}
	if v := out[i+len(id)+1:]; len(v) < 10 || v[0] != 0xC3 || v[1] != 0x01 {
		t.Fatalf("the decision's value does not start with the single-object header: % x", v[:min(len(v), 10)])
	}
	if n := bytes.Count(out, []byte(id+"\t")); n != 1 {
		t.Errorf("%d decisions of %s", n, id)
	}
}
