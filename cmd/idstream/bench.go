package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/internal/loadbench"
)

// benchOptions are the flags of `idstream bench`.
type benchOptions struct {
	url, apiKey, dataDir string
	metrics              []string
	corpus, modelsDir    string
	build                int
	seed                 uint64
	flow                 string
	sessions, warmup     int
	concurrency, rates   []float64
	timeout, poll        time.Duration
	cores                int
	out                  string
	webhookAddr          string
	hook                 *webhookReceiver // the receiver of --webhook-addr, nil without
	chipPKI              string
	chips                *benchChips // the chip_id_card flow's chips, nil for the other flows
}

// runBench is `idstream bench`: it drives whole verification sessions of one flow through a
// running service (`idstream dev`, or the edge of separate processes) over its REST API, as
// integrators and their users do, at each load level asked for: a number of sessions in
// flight (--concurrency, closed loop) or an arrival rate (--rate, open loop: a session
// starts every 1/rate seconds whatever the service does). Per level it reports sessions per
// second, the gate's answer p50/p99 (upload → answer), last capture → decision p50/p99 (as
// Data Get first shows it, polled every --poll), last capture → the session-completed
// webhook received p50/p99 (by a receiver on --webhook-addr given as each session's
// webhook_url), Data Get p99, 429s and errors, and the CPU the service spent per session,
// by group (from the metrics of every --metrics URL, read before and after the level). The
// first level, when it runs one session at a time, gives the compute limit: the cores over
// the CPU of one session run alone. It prints a table and writes bench.json and latency.png under --out. The sessions' images come from a labelled
// corpus (--corpus, or --build N to write one first, as `idstream eval` does); a document is
// sent again and again, so the fraud checks reject repeats: the bench measures load, not
// accuracy.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o benchOptions
	var metrics, conc, rates string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "the edge's base URL")
	fs.StringVar(&o.apiKey, "api-key", os.Getenv("IDSTREAM_API_KEY"), "an API key of a tenant (default: $IDSTREAM_API_KEY, else the dev sandbox's key in --data-dir)")
	fs.StringVar(&o.dataDir, "data-dir", envOr("data-dir", ".data"), "the dev service's data dir (its sandbox API key)")
	fs.StringVar(&metrics, "metrics", "http://"+devMetricsAddr+"/metrics", "comma-separated /metrics URLs (each process's --metrics-addr) of every process of the service")
	fs.StringVar(&o.corpus, "corpus", ".data/bench-corpus", "corpus directory (internal/evaluation's format)")
	fs.StringVar(&o.modelsDir, "models-dir", envOr("models-dir", "models"), "face photos for --build")
	fs.IntVar(&o.build, "build", 0, "first build a corpus of N documents per type into --corpus")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of --build")
	fs.StringVar(&o.flow, "flow", "id_card", "flow: id_card, chip_id_card, passport or vehicle_registration")
	fs.StringVar(&o.chipPKI, "chip-pki", "", "for --flow chip_id_card: the development PKI (idstream chip-pki) whose document signer signs each session's chip; the service must trust its csca/ (--csca-dir)")
	fs.IntVar(&o.sessions, "sessions", 20, "sessions per load level")
	fs.IntVar(&o.warmup, "warmup", 2, "sessions sent one at a time before the first level, not measured (models, caches and the heap warm)")
	fs.StringVar(&conc, "concurrency", "1,2,4", "closed-loop levels: sessions in flight")
	fs.StringVar(&rates, "rate", "", "open-loop levels: sessions started per second (instead of --concurrency)")
	fs.DurationVar(&o.timeout, "session-timeout", 2*time.Minute, "how long one session may take to be decided")
	fs.DurationVar(&o.poll, "poll", 50*time.Millisecond, "how often Data Get is asked while waiting for the decision")
	fs.IntVar(&o.cores, "cores", runtime.NumCPU(), "the service's cores, for the compute limit")
	fs.StringVar(&o.out, "out", "bench-report", "directory for bench.json and latency.png")
	fs.StringVar(&o.webhookAddr, "webhook-addr", "127.0.0.1:0", "where to receive the sessions' webhooks, given to each session as its webhook_url (the dev sandbox tenant may call private addresses); empty: no webhooks")
	if err := parse(fs, args); err != nil {
		return err
	}
	var err error
	if o.concurrency, err = levels(conc); err != nil {
		return fmt.Errorf("%w: --concurrency: %w", errUsage, err)
	}
	for _, n := range o.concurrency {
		if n != math.Trunc(n) {
			return fmt.Errorf("%w: --concurrency: %g is not a whole number of sessions", errUsage, n)
		}
	}
	if rates != "" {
		if o.rates, err = levels(rates); err != nil {
			return fmt.Errorf("%w: --rate: %w", errUsage, err)
		}
		o.concurrency = nil
	}
	o.metrics = strings.Split(metrics, ",")
	if o.apiKey == "" {
		b, err := os.ReadFile(filepath.Join(o.dataDir, "sandbox-api-key"))
		if err != nil {
			return fmt.Errorf("%w: no --api-key and no dev sandbox key: %v", errUsage, err)
		}
		o.apiKey = strings.TrimSpace(string(b))
	}
	if o.sessions < 1 || o.warmup < 0 {
		return fmt.Errorf("%w: --sessions must be at least 1, --warmup at least 0", errUsage)
	}
	if o.build > 0 {
		if err := buildCorpus(o.corpus, o.modelsDir, o.build, o.seed, stderr, evaluation.HeldOut); err != nil {
			return err
		}
	}
	c, err := evaluation.Load(o.corpus)
	if err != nil {
		return err
	}
	work, err := benchWork(c, o.flow)
	if err != nil {
		return err
	}
	if o.flow == "chip_id_card" {
		if o.chips, err = newBenchChips(o.chipPKI); err != nil {
			return err
		}
	}
	if o.webhookAddr != "" {
		if o.hook, err = startWebhookReceiver(o.webhookAddr); err != nil {
			return err
		}
		defer o.hook.Close()
	}
	// Every upload is other bytes (uniqueJPEG): the service must decode each as it would a
	// new person's, not find it among the images it decoded for an earlier session.
	cl := &evalClient{base: strings.TrimRight(o.url, "/"), http: &http.Client{Timeout: 30 * time.Second}, corpus: c, uploads: new(atomic.Int64)}
	// A service just started runs its first sessions slower (lazy model setup, a small heap,
	// cold caches): warmed, the first level's CPU per session, and so the compute limit, is
	// the steady state's.
	for i := range o.warmup {
		if s := benchSession(ctx, cl, o, work[i%len(work)]); s.Err != "" {
			return fmt.Errorf("warm-up session: %s", s.Err)
		}
	}
	var sums []loadbench.Summary
	run := func(mode string, offered float64) error {
		l, err := benchLevel(ctx, cl, o, work, mode, offered, stderr)
		if err != nil {
			return err
		}
		sums = append(sums, loadbench.Summarise(l))
		return nil
	}
	for _, n := range o.concurrency {
		if err := run(loadbench.Closed, n); err != nil {
			return err
		}
	}
	for _, r := range o.rates {
		if err := run(loadbench.Open, r); err != nil {
			return err
		}
	}
	limit := loadbench.ComputeLimit(sums[0], o.cores)
	if sums[0].Mode != loadbench.Closed || sums[0].Offered != 1 {
		limit = loadbench.ComputeLimit(loadbench.Summary{}, o.cores) // NaN: no level ran one session at a time
	}
	if err := loadbench.WriteTable(stdout, sums, limit); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(map[string]any{"flow": o.flow, "cores": o.cores, "compute_limit_per_s": jsonNumber(limit), "levels": sums}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "bench.json"), b, 0o644); err != nil {
		return err
	}
	written := "bench.json, latency.png"
	switch err := loadbench.WritePlot(filepath.Join(o.out, "latency.png"), sums); {
	case errors.Is(err, loadbench.ErrNothingToPlot):
		written = "bench.json (no latency was measured: no plot)"
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "\nwritten to %s: %s\n", o.out, written)
	return nil
}

// jsonNumber is v, or nil for NaN (which JSON cannot hold).
func jsonNumber(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return v
}

// levels parses a comma-separated list of positive numbers.
func levels(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// benchCase is what one bench session sends: a document's images in the flow's steps and
// a selfie.
type benchCase struct {
	doc    evaluation.Document
	selfie string // a face id
}

// benchWork lists the corpus's genuine sessions whose document the flow takes.
func benchWork(c *evaluation.Corpus, flow string) ([]benchCase, error) {
	want := map[string]string{"id_card": "id_card", "chip_id_card": "id_card", "passport": "passport", "vehicle_registration": "vehicle_registration"}[flow]
	if want == "" {
		return nil, fmt.Errorf("%w: --flow %q: id_card, chip_id_card, passport or vehicle_registration", errUsage, flow)
	}
	var out []benchCase
	for _, s := range c.Sessions {
		d, ok := c.Document(s.Document)
		if ok && s.Kind == evaluation.Genuine && d.Type == want {
			out = append(out, benchCase{doc: d, selfie: s.Selfie})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the corpus has no genuine session with a %s", want)
	}
	return out, nil
}

// benchLevel drives o.sessions sessions at one load level and reads the service's CPU
// before and after.
func benchLevel(ctx context.Context, cl *evalClient, o benchOptions, work []benchCase, mode string, offered float64, progress io.Writer) (loadbench.Level, error) {
	l := loadbench.Level{Mode: mode, Offered: offered, Flow: o.flow, Sessions: make([]loadbench.Session, o.sessions)}
	before, err := readUsage(ctx, cl.http, o.metrics)
	if err != nil {
		return l, err
	}
	label := fmt.Sprintf("%s ×%g", o.flow, offered)
	if mode == loadbench.Open {
		label = fmt.Sprintf("%s %g/s", o.flow, offered)
	}
	bar := evaluation.NewProgress(progress, label, o.sessions)
	one := func(i int) {
		l.Sessions[i] = benchSession(ctx, cl, o, work[i%len(work)])
		bar.Step()
	}
	start := time.Now()
	var wg sync.WaitGroup
	if mode == loadbench.Closed {
		var next atomic.Int64
		for range int(offered) {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < o.sessions && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
					one(i)
				}
			})
		}
	} else {
		every := time.Duration(float64(time.Second) / offered)
		for i := range o.sessions {
			if i > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(time.Until(start.Add(time.Duration(i) * every))):
				}
			}
			if ctx.Err() != nil {
				break
			}
			wg.Go(func() { one(i) })
		}
	}
	wg.Wait()
	l.Wall = time.Since(start)
	bar.Done()
	if err := ctx.Err(); err != nil {
		return l, err
	}
	after, err := readUsage(ctx, cl.http, o.metrics)
	if err != nil {
		return l, err
	}
	l.CPU = after.Sub(before)
	return l, nil
}

// readUsage reads and adds up the CPU usage of every metrics URL.
func readUsage(ctx context.Context, hc *http.Client, urls []string) (loadbench.Usage, error) {
	var total loadbench.Usage
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return total, err
		}
		res, err := hc.Do(req)
		if err != nil {
			return total, fmt.Errorf("metrics %s: %w", u, err)
		}
		b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
		res.Body.Close()
		if err != nil {
			return total, fmt.Errorf("metrics %s: %w", u, err)
		}
		if res.StatusCode != http.StatusOK {
			return total, fmt.Errorf("metrics %s: HTTP %d: %.200s", u, res.StatusCode, b)
		}
		usage, err := loadbench.ParseUsage(bytes.NewReader(b))
		if err != nil {
			return total, fmt.Errorf("metrics %s: %w", u, err)
		}
		total = total.Add(usage)
	}
	return total, nil
}

// benchSession runs one session: init, every step's capture, then Data Get until the
// decision shows, the session ends otherwise or the timeout passes. A request the edge
// sheds (429) is sent again after its Retry-After and counted; Data Get, polled every
// --poll, counts against the tenant's rate limit like any request.
func benchSession(ctx context.Context, cl *evalClient, o benchOptions, c benchCase) loadbench.Session {
	var s loadbench.Session
	deadline := time.Now().Add(o.timeout)
	fail := func(err error) loadbench.Session {
		s.Err = err.Error()
		return s
	}
	// send makes a request until the edge takes it (anything but 429), waiting out each
	// Retry-After, or fails when that would pass the session's deadline.
	send := func(req func() (edgeAnswer, error)) (edgeAnswer, error) {
		for {
			res, err := req()
			if err != nil || res.status != http.StatusTooManyRequests {
				return res, err
			}
			s.Shed++
			wait, _ := strconv.Atoi(res.header.Get("Retry-After"))
			pause := time.Duration(max(wait, 1)) * time.Second
			if time.Now().Add(pause).After(deadline) {
				return res, errors.New("shed until the session's deadline")
			}
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(pause):
			}
		}
	}
	var init struct {
		SessionID string   `json:"session_id"`
		Steps     []string `json:"steps"`
		SDKToken  string   `json:"sdk_token"`
		Nonce     string   `json:"nonce"`
	}
	initBody := map[string]string{"flow": o.flow}
	if o.hook != nil {
		initBody["webhook_url"] = o.hook.url
	}
	res, err := send(func() (edgeAnswer, error) {
		return cl.do(ctx, http.MethodPost, "/v1/ekyc/sessions", o.apiKey, initBody)
	})
	if err == nil && res.status != http.StatusCreated {
		err = fmt.Errorf("HTTP %d: %.200s", res.status, res.body)
	}
	if err == nil {
		err = json.Unmarshal(res.body, &init)
	}
	if err != nil {
		return fail(fmt.Errorf("session init: %w", err))
	}
	for _, step := range init.Steps {
		if step == "nfc" {
			if err := sendChip(ctx, cl, o, c, init.SessionID, init.SDKToken, init.Nonce, send); err != nil {
				return fail(err)
			}
			continue // answered at once (202): not the gate's
		}
		path := c.doc.Images[step]
		if step == "selfie" {
			f, ok := cl.corpus.Face(c.selfie)
			if !ok {
				return fail(fmt.Errorf("no face %q", c.selfie))
			}
			path = f.Image
		}
		if path == "" {
			return fail(fmt.Errorf("document %s has no image for step %s", c.doc.ID, step))
		}
		res, err := send(func() (edgeAnswer, error) { return cl.postImage(ctx, init.SessionID, init.SDKToken, step, path) })
		if err != nil {
			return fail(fmt.Errorf("upload %s: %w", step, err))
		}
		if res.status != http.StatusOK && res.status != http.StatusAccepted {
			return fail(fmt.Errorf("upload %s: HTTP %d", step, res.status))
		}
		s.Gate = append(s.Gate, res.elapsed)
		s.GateStep = append(s.GateStep, step)
	}
	last := time.Now()
	for {
		res, err := send(func() (edgeAnswer, error) {
			return cl.do(ctx, http.MethodGet, "/v1/ekyc/sessions/"+init.SessionID, o.apiKey, nil)
		})
		if err == nil && res.status != http.StatusOK {
			err = fmt.Errorf("HTTP %d: %.200s", res.status, res.body)
		}
		var view struct {
			Status string `json:"status"`
		}
		if err == nil {
			err = json.Unmarshal(res.body, &view)
		}
		if err != nil {
			return fail(fmt.Errorf("data get: %w", err))
		}
		s.DataGet = append(s.DataGet, res.elapsed)
		s.Status = view.Status
		switch view.Status {
		case "verified", "rejected":
			s.Decision = time.Since(last)
			if o.hook != nil {
				at, err := o.hook.wait(ctx, init.SessionID, deadline)
				if err != nil {
					return fail(fmt.Errorf("webhook: %w", err))
				}
				s.Webhook = at.Sub(last)
			}
			return s
		case "expired", "cancelled":
			return fail(fmt.Errorf("the session ended %s", view.Status))
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("not decided within %s (status %s)", o.timeout, view.Status))
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(o.poll):
		}
	}
}
