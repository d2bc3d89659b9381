package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/idstream/idstream/internal/chaos"
	"github.com/idstream/idstream/internal/chserver"
	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/schemas"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
)

// chaosOptions are the flags of `idstream chaos`.
type chaosOptions struct {
	dir, corpus, modelsDir string
	shape                  string // split: a process per component; dev: one idstream dev
	duration, settle       time.Duration
	killMin, killMax       time.Duration
	concurrency, replicas  int
	brokerRestarts         int
	clickhouseOutage       time.Duration
	receiverOutage         time.Duration
	flows                  []string
	seed                   uint64
	bin                    string   // the binary the processes run (default: this one)
	env                    []string // added to every process's environment
}

// runChaos is `idstream chaos`: it starts the production shape as separate processes of
// this binary on this machine — the broker (`idstream broker`, persisted), the sandbox
// registry, the edge, the consent API, every processor group and both sinks with
// --replicas replicas each — plus a ClickHouse server and a webhook receiver of its own;
// drives sessions of every flow through the edge for --duration, --concurrency at a time,
// while it SIGKILLs a random process every --kill-min..--kill-max and starts it again,
// restarts the broker --broker-restarts times, stops ClickHouse and the receiver for a
// while and has the receiver answer 500 or nothing to a share of deliveries. Then it lets
// the pipeline settle and checks the invariants of exactly-once processing (chaos.Check),
// printing each with its count. It returns an error when one is broken.
func runChaos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := chaosOptions{}
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".data/chaos", "work directory: the processes' data, logs and the report (emptied first)")
	fs.StringVar(&o.corpus, "corpus", ".data/chaos-corpus", "corpus of documents and faces to send (built there when missing)")
	fs.StringVar(&o.modelsDir, "models-dir", envOr("models-dir", "models"), "face models and photos (make deps)")
	fs.DurationVar(&o.duration, "duration", 10*time.Minute, "how long sessions are sent and processes killed")
	fs.DurationVar(&o.settle, "settle", 3*time.Minute, "how long the pipeline may take, after the chaos, to decide and deliver everything")
	fs.DurationVar(&o.killMin, "kill-min", 10*time.Second, "shortest pause between two kills")
	fs.DurationVar(&o.killMax, "kill-max", 20*time.Second, "longest pause between two kills")
	fs.IntVar(&o.concurrency, "concurrency", 3, "sessions in flight")
	fs.IntVar(&o.replicas, "replicas", 2, "replicas of every processor group and sink")
	fs.IntVar(&o.brokerRestarts, "broker-restarts", 2, "broker kills, spread over the run")
	fs.DurationVar(&o.clickhouseOutage, "clickhouse-outage", 20*time.Second, "ClickHouse is stopped this long at mid-run (0: never)")
	fs.DurationVar(&o.receiverOutage, "receiver-outage", 15*time.Second, "the webhook receiver is down this long at 40% of the run (0: never)")
	fs.StringVar(&o.shape, "shape", "split", "split: the production shape, a process per component; dev: one `idstream dev` process (broker, groups, sinks and its ClickHouse in one), killed and started again")
	flows := fs.String("flows", "id_card,chip_id_card,passport,vehicle_registration", "flows to send, in turn")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the kills and faults")
	err := parse(fs, args)
	if err != nil {
		return err
	}
	o.flows = strings.Split(*flows, ",")
	if o.killMin <= 0 || o.killMax < o.killMin || o.concurrency < 1 || o.replicas < 1 || (o.shape != "split" && o.shape != "dev") {
		return fmt.Errorf("%w: need 0 < --kill-min <= --kill-max, --concurrency and --replicas >= 1, --shape split or dev", errUsage)
	}
	if o.bin, err = os.Executable(); err != nil {
		return err
	}
	h, err := startChaos(ctx, o, stdout, stderr)
	if h != nil {
		defer h.close()
	}
	if err != nil {
		return err
	}
	rep, err := h.run(ctx)
	if err != nil {
		return err
	}
	if !rep.OK() {
		return errors.New("an invariant is broken (above; the processes' logs are in " + filepath.Join(o.dir, "logs") + ")")
	}
	return nil
}

// chaosHarness is one run of `idstream chaos`.
type chaosHarness struct {
	o        chaosOptions
	out      io.Writer
	start    time.Time
	fleet    *chaos.Fleet
	receiver *chaos.Receiver
	ch       *chserver.Server
	chDir    string
	chPort   int
	env      []string
	brokers  []string
	edgeURL  string
	apiKey   string
	cmpURL   string // the consent API
	cmpKey   string
	notice   string // the consent notice version people agree to
	client   *evalClient
	work     map[string][]benchCase
	bench    benchOptions // the chips of chip_id_card sessions

	mu       sync.Mutex
	sessions []chaos.Session
	decided  []time.Time // when the client first saw each decision
	events   []chaosEvent
	failures map[string]int // why sessions were given up, by reason
	lags     int            // Session Inits answered consent_required for a consent already accepted
}

// chaosEvent is one thing the harness did.
type chaosEvent struct {
	At     time.Duration `json:"at"`
	What   string        `json:"what"`
	Target string        `json:"target"`
	// Recovery: for a restart, the time until the client saw the next decision.
	Recovery time.Duration `json:"recovery,omitempty"`
}

// startChaos prepares the work dir, the corpus, the secrets and ClickHouse, and starts every
// process. The returned harness (also on error) must be closed.
func startChaos(ctx context.Context, o chaosOptions, stdout, stderr io.Writer) (*chaosHarness, error) {
	if o.shape != "split" && o.shape != "dev" {
		return nil, fmt.Errorf("chaos: shape %q: split or dev", o.shape)
	}
	h := &chaosHarness{o: o, out: stdout, failures: map[string]int{}}
	if err := os.RemoveAll(o.dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(o.corpus, "corpus.json")); err != nil {
		fmt.Fprintf(stdout, "building a corpus in %s …\n", o.corpus)
		if err := buildCorpus(o.corpus, o.modelsDir, 2, 7, stderr, evaluation.HeldOut); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
	}
	c, err := evaluation.Load(o.corpus)
	if err != nil {
		return nil, err
	}
	h.work = map[string][]benchCase{}
	for _, f := range o.flows {
		if h.work[f], err = benchWork(c, f); err != nil {
			return nil, err
		}
	}
	pkiDir := filepath.Join(o.dir, "chip-pki")
	if err := runChipPKI([]string{pkiDir}, io.Discard); err != nil {
		return nil, err
	}
	chips, err := newBenchChips(pkiDir)
	if err != nil {
		return nil, err
	}
	h.bench = benchOptions{chips: chips}

	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	h.receiver, err = chaos.StartReceiver([][]byte{secret}, 15*time.Second)
	if err != nil {
		return nil, err
	}
	h.apiKey = "sk_chaos_" + hex.EncodeToString(secret[:8])
	h.cmpKey = "ck_chaos_" + hex.EncodeToString(secret[8:16])
	tenants := filepath.Join(o.dir, "tenants.yaml")
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return h, err
	}
	hash := func(k string) string { s := sha256.Sum256([]byte(k)); return hex.EncodeToString(s[:]) }
	yaml := fmt.Sprintf(`tenants:
  - id: chaos
    name: Chaos Harness
    api_key_hashes: [%s]
    cmp_api_key_hashes: [%s]
    require_consent: true
    webhook_url: %s
    webhook_secrets: [whsec_%s]
    data_retention: service
    allow_private_webhooks: true
    session_ttl_seconds: 1800
    rate_limit_per_second: 1000
`, hash(h.apiKey), hash(h.cmpKey), h.receiver.URL(), base64.StdEncoding.EncodeToString(secret))
	if err := os.WriteFile(tenants, []byte(yaml), 0o600); err != nil {
		return h, err
	}

	ports, err := freePorts(5)
	if err != nil {
		return h, err
	}
	kafka, edgeAddr, consentAddr, registryAddr, chAddr := ports[0], ports[1], ports[2], ports[3], ports[4]
	h.brokers, h.edgeURL, h.cmpURL = []string{kafka}, "http://"+edgeAddr, "http://"+consentAddr
	if o.shape == "split" {
		h.chDir = filepath.Join(o.dir, "clickhouse")
		if h.ch, err = chserver.Start(ctx, chserver.WithDataDir(h.chDir)); err != nil {
			return h, err
		}
		chAddr = h.ch.Addr()
	}
	_, chPort, _ := net.SplitHostPort(chAddr)
	h.chPort, _ = strconv.Atoi(chPort)
	token := make([]byte, 32)
	_, _ = rand.Read(token)
	shared := filepath.Join(o.dir, "data")
	h.env = []string{
		"IDSTREAM_TOKEN_SECRET=" + hex.EncodeToString(token),
		"IDSTREAM_DATA_DIR=" + shared,
		"IDSTREAM_CLICKHOUSE_ADDR=" + chAddr,
		"IDSTREAM_CSCA_DIR=" + filepath.Join(pkiDir, mrtdtest.SignerCSCADir),
		"IDSTREAM_MODELS_DIR=" + o.modelsDir,
		"IDSTREAM_TENANTS=" + tenants,
		// Short retry waits: a delivery that failed is tried again within the settle time.
		"IDSTREAM_WEBHOOK_RETRIES=2s,4s,8s,15s,30s,30s,30s",
		"IDSTREAM_LOG_LEVEL=warn",
	}
	h.env = append(h.env, o.env...)
	if o.shape == "split" { // dev runs its own broker, and the sandbox registry when given none
		h.env = append(h.env, "KAFKA_BROKERS="+kafka, "IDSTREAM_REGISTRY_URL=http://"+registryAddr)
	}
	if h.fleet, err = chaos.NewFleet(o.bin, filepath.Join(o.dir, "logs")); err != nil {
		return h, err
	}
	h.start = time.Now()
	fmt.Fprintf(stdout, "idstream chaos (%s): work dir %s, broker %s, edge %s, ClickHouse %s, receiver %s\n", o.shape, o.dir, kafka, h.edgeURL, chAddr, h.receiver.URL())
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	h.client = &evalClient{base: h.edgeURL, http: &http.Client{Timeout: 30 * time.Second}, corpus: c, uploads: new(atomic.Int64)}
	if o.shape == "dev" {
		_, err := h.fleet.Add(startCtx, chaos.Spec{Name: "dev", Kind: "dev", Env: h.env, Ready: chaos.HTTPReady(h.edgeURL + "/readyz"),
			Args: []string{"dev", "--edge-addr", edgeAddr, "--consent-addr", consentAddr, "--kafka-addr", kafka,
				"--registry-addr", registryAddr, "--clickhouse-addr", chAddr, "--instance-id", "dev", "--metrics-addr", "127.0.0.1:0"}})
		h.event("started", "idstream dev")
		if err == nil {
			err = h.readNotice(ctx)
		}
		return h, err
	}
	// The broker alone first: every other process creates or checks the topics when it starts.
	if _, err := h.fleet.Add(startCtx, chaos.Spec{Name: "broker", Kind: "broker", Env: h.env,
		Args:  []string{"broker", "--data-dir", filepath.Join(o.dir, "broker"), "--kafka-addr", kafka},
		Ready: tcpReady(kafka)}); err != nil {
		return h, err
	}
	specs := []chaos.Spec{
		{Name: "registry", Kind: "registry", Args: []string{"registry-sandbox", "--registry-addr", registryAddr}, Ready: chaos.HTTPReady("http://" + registryAddr + "/healthz")},
		{Name: "edge", Kind: "edge", Args: []string{"edge", "--edge-addr", edgeAddr, "--instance-id", "edge"}, Ready: chaos.HTTPReady(h.edgeURL + "/readyz")},
		{Name: "consent", Kind: "consent", Args: []string{"consent", "--consent-addr", consentAddr, "--instance-id", "consent"}, Ready: chaos.HTTPReady("http://" + consentAddr + "/readyz")},
	}
	for r := 1; r <= o.replicas; r++ {
		for _, g := range allGroups {
			name := fmt.Sprintf("%s-%d", g, r)
			specs = append(specs, chaos.Spec{Name: name, Kind: "group", Args: []string{"process", g, "--instance-id", name}})
		}
		for _, s := range allSinks {
			name := fmt.Sprintf("sink-%s-%d", s, r)
			specs = append(specs, chaos.Spec{Name: name, Kind: "sink", Args: []string{"sink", s, "--instance-id", name}})
		}
	}
	errs := make(chan error, len(specs))
	for _, s := range specs {
		s.Env = h.env
		go func() { _, err := h.fleet.Add(startCtx, s); errs <- err }()
	}
	for range specs {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return h, err
	}
	h.event("started", fmt.Sprintf("%d processes", len(specs)+1))
	return h, h.readNotice(ctx)
}

// readNotice reads the consent notice version people agree to from Get Configuration.
func (h *chaosHarness) readNotice(ctx context.Context) error {
	res, err := h.cmp(ctx, http.MethodGet, "/v1/config", nil)
	if err != nil {
		return fmt.Errorf("consent config: %w", err)
	}
	var cfg struct {
		Notice struct {
			Version string `json:"version"`
		} `json:"notice"`
	}
	if err := json.Unmarshal(res.body, &cfg); err != nil || cfg.Notice.Version == "" {
		return fmt.Errorf("consent config: HTTP %d, no notice version", res.status)
	}
	h.notice = cfg.Notice.Version
	return nil
}

// cmp sends a request to the consent API with the tenant's CMP key.
func (h *chaosHarness) cmp(ctx context.Context, method, path string, body any) (edgeAnswer, error) {
	return sendJSON(ctx, h.client.http, method, h.cmpURL+path, "x-cmp-api-key", h.cmpKey, body, 1<<20)
}

// close stops every process, ClickHouse and the receiver.
func (h *chaosHarness) close() {
	if h.fleet != nil {
		h.fleet.Close(10 * time.Second)
	}
	if h.ch != nil {
		_ = h.ch.Close()
	}
	if h.receiver != nil {
		h.receiver.Close()
	}
}

// event notes and prints one thing the harness did.
func (h *chaosHarness) event(what, target string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noteLocked(what, target)
}

// noteLocked notes and prints one thing the harness did and returns its index.
func (h *chaosHarness) noteLocked(what, target string) int {
	at := time.Since(h.start)
	h.events = append(h.events, chaosEvent{At: at, What: what, Target: target})
	fmt.Fprintf(h.out, "  %7.1fs  %-18s %s\n", at.Seconds(), what, target)
	return len(h.events) - 1
}

// run drives the sessions and the chaos for the duration, lets the pipeline settle, checks
// the invariants and prints and writes the report.
func (h *chaosHarness) run(ctx context.Context) (chaos.Report, error) {
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < h.o.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for load.Err() == nil {
				h.session(ctx, load, int(next.Add(1)))
			}
		}()
	}
	h.chaos(ctx, h.o.duration)
	stopLoad()
	h.event("load stopped", "waiting for the sessions in flight")
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return chaos.Report{}, err
	}
	// Everything up and answering for the settle.
	h.receiver.SetFaults(0, 0)
	if err := h.receiver.Up(); err != nil {
		return chaos.Report{}, err
	}
	if err := h.clickhouseUp(ctx); err != nil {
		return chaos.Report{}, err
	}
	for _, p := range h.fleet.Procs() {
		if err := p.Start(ctx); err != nil {
			return chaos.Report{}, err
		}
	}
	h.event("settling", fmt.Sprintf("up to %s", h.o.settle))
	src := h.sources()
	deadline := time.Now().Add(h.o.settle)
	var rep chaos.Report
	for {
		var err error
		src.Deliveries = h.receiver.Deliveries()
		rep, err = chaos.Check(ctx, h.snapshot(), src)
		if err == nil && rep.OK() || time.Now().After(deadline) {
			if err != nil {
				return rep, err
			}
			break
		}
		select {
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
	// A process of the service rides out a broker restart, a rebalance or an outage of
	// ClickHouse; it ends only when killed.
	exits := chaos.Invariant{Name: "no process exited without being killed"}
	for _, p := range h.fleet.Procs() {
		exits.Checked++
		if st := p.Stats(); st.UnexpectedExits > 0 {
			exits.Broken = append(exits.Broken, fmt.Sprintf("%s: %d times (last: %s; its log: %s)", p.Name(), st.UnexpectedExits, st.LastExit, filepath.Join(h.o.dir, "logs", p.Name()+".log")))
		}
	}
	rep.Invariants = append(rep.Invariants, exits)
	h.event("checked", "")
	h.print(rep)
	return rep, h.writeReport(rep)
}

// chaos kills and restarts processes, the broker, ClickHouse and the receiver until d has
// passed.
func (h *chaosHarness) chaos(ctx context.Context, d time.Duration) {
	rnd := mrand.New(mrand.NewPCG(h.o.seed, 7))
	end := time.Now().Add(d)
	type planned struct {
		at   time.Time
		what string
	}
	var plan []planned
	for i := 1; i <= h.o.brokerRestarts && h.o.shape == "split"; i++ {
		plan = append(plan, planned{h.start.Add(d * time.Duration(i) / time.Duration(h.o.brokerRestarts+1)).Add(7 * time.Second), "broker"})
	}
	if h.o.clickhouseOutage > 0 && h.o.shape == "split" {
		plan = append(plan, planned{time.Now().Add(d / 2), "clickhouse"})
	}
	if h.o.receiverOutage > 0 {
		plan = append(plan, planned{time.Now().Add(d * 2 / 5), "receiver"})
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].at.Before(plan[j].at) })
	h.receiver.SetFaults(0.1, 0.03)
	// A kill picks a kind of process first (edge, consent, group, sink, dev), then one of
	// that kind: the edge and the consent API are killed as often as a kind as the 26
	// group and sink replicas. The broker's kills are planned; the registry stands for an
	// outside service.
	victims := map[string][]*chaos.Proc{}
	var kinds []string
	for _, p := range h.fleet.Procs() {
		if p.Kind() == "broker" || p.Kind() == "registry" {
			continue
		}
		if victims[p.Kind()] == nil {
			kinds = append(kinds, p.Kind())
		}
		victims[p.Kind()] = append(victims[p.Kind()], p)
	}
	var bg sync.WaitGroup
	defer bg.Wait()
	nextKill := time.Now().Add(h.o.killMin + time.Duration(rnd.Int64N(int64(h.o.killMax-h.o.killMin)+1)))
	for {
		now := time.Now()
		if now.After(end) || ctx.Err() != nil {
			return
		}
		wake := nextKill
		if len(plan) > 0 && plan[0].at.Before(wake) {
			wake = plan[0].at
		}
		if wake.After(end) {
			wake = end
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(wake)):
		}
		switch {
		case len(plan) > 0 && !time.Now().Before(plan[0].at):
			what := plan[0].what
			plan = plan[1:]
			switch what {
			case "broker":
				h.killAndRestart(ctx, h.fleet.Get("broker"), time.Duration(1+rnd.IntN(3))*time.Second)
			case "clickhouse":
				bg.Add(1)
				go func() { defer bg.Done(); h.clickhouseOutage(ctx) }()
			case "receiver":
				bg.Add(1)
				go func() { defer bg.Done(); h.receiverOutage(ctx) }()
			}
		case !time.Now().Before(nextKill):
			of := victims[kinds[rnd.IntN(len(kinds))]]
			p := of[rnd.IntN(len(of))]
			h.killAndRestart(ctx, p, time.Duration(rnd.IntN(2500))*time.Millisecond)
			nextKill = time.Now().Add(h.o.killMin + time.Duration(rnd.Int64N(int64(h.o.killMax-h.o.killMin)+1)))
		}
	}
}

// killAndRestart SIGKILLs p, starts it again after pause, and notes when the client saw the
// next decision after the restart (the recovery).
func (h *chaosHarness) killAndRestart(ctx context.Context, p *chaos.Proc, pause time.Duration) {
	p.Kill()
	h.event("SIGKILL", p.Name())
	select {
	case <-ctx.Done():
		return
	case <-time.After(pause):
	}
	if err := p.Start(ctx); err != nil {
		h.event("restart failed", p.Name()+": "+err.Error())
		return
	}
	h.mu.Lock()
	restarted := time.Now()
	i := h.noteLocked("restarted", p.Name())
	h.mu.Unlock()
	go func() {
		for ctx.Err() == nil && time.Since(restarted) < 2*time.Minute {
			h.mu.Lock()
			for _, t := range h.decided {
				if t.After(restarted) {
					h.events[i].Recovery = t.Sub(restarted)
					h.mu.Unlock()
					return
				}
			}
			h.mu.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
	}()
}

func (h *chaosHarness) clickhouseOutage(ctx context.Context) {
	h.mu.Lock()
	ch := h.ch
	h.ch = nil
	h.mu.Unlock()
	if ch != nil {
		_ = ch.Close()
	}
	h.event("ClickHouse down", fmt.Sprintf("for %s", h.o.clickhouseOutage))
	select {
	case <-ctx.Done():
	case <-time.After(h.o.clickhouseOutage):
	}
	if err := h.clickhouseUp(ctx); err != nil {
		h.event("ClickHouse failed", err.Error())
		return
	}
	h.event("ClickHouse up", "")
}

// clickhouseUp starts the server again on its data dir and port unless it runs.
func (h *chaosHarness) clickhouseUp(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ch != nil || h.o.shape != "split" {
		return nil // dev runs its own
	}
	ch, err := chserver.Start(ctx, chserver.WithDataDir(h.chDir), chserver.WithTCPPort(h.chPort))
	if err != nil {
		return err
	}
	h.ch = ch
	return nil
}

func (h *chaosHarness) receiverOutage(ctx context.Context) {
	h.receiver.Down()
	h.event("receiver down", fmt.Sprintf("for %s", h.o.receiverOutage))
	select {
	case <-ctx.Done():
	case <-time.After(h.o.receiverOutage):
	}
	if err := h.receiver.Up(); err != nil {
		h.event("receiver failed", err.Error())
		return
	}
	h.event("receiver up", "")
}

// session drives session n through the edge as a patient client: every request is sent
// again after a connection error, a 5xx or a 429 (the edge, the broker or a group may be
// down) until the session's deadline. A session is completed when the edge took every step;
// the client then waits for its decision in Data Get (while load runs).
func (h *chaosHarness) session(ctx, load context.Context, n int) {
	flow := h.o.flows[n%len(h.o.flows)]
	work := h.work[flow]
	c := work[n%len(work)]
	deadline := time.Now().Add(3 * time.Minute)
	fail := func(why string) {
		h.mu.Lock()
		h.failures[why]++
		h.mu.Unlock()
	}
	send := func(req func() (edgeAnswer, error)) (edgeAnswer, error) {
		for {
			res, err := req()
			if err == nil && res.status < 500 && res.status != http.StatusTooManyRequests {
				return res, nil
			}
			if time.Now().After(deadline) {
				if err == nil {
					err = fmt.Errorf("HTTP %d", res.status)
				}
				return res, fmt.Errorf("until the deadline: %w", err)
			}
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	// The tenant requires consent: the person agrees first (the consent API), then the
	// integrator opens the session with the tracking id.
	rec := chaos.Session{Flow: flow, TrackingID: fmt.Sprintf("trk_chaos_%d_%d", h.start.UnixNano(), n)}
	consent := map[string]any{"tracking_id": rec.TrackingID, "notice_version": h.notice, "channel": "web",
		"decisions": []map[string]string{{"purpose_id": "ekyc_identity_verification", "status": "granted"}}}
	res, err := send(func() (edgeAnswer, error) {
		rec.ConsentPosts++
		return h.cmp(ctx, http.MethodPost, "/v1/consents", consent)
	})
	if err == nil && res.status != http.StatusCreated {
		err = fmt.Errorf("HTTP %d: %.120s", res.status, res.body)
	}
	var written struct {
		Records []struct {
			ConsentID string `json:"consent_id"`
		} `json:"records"`
	}
	if err == nil {
		err = json.Unmarshal(res.body, &written)
	}
	if err != nil {
		fail("consent: " + err.Error())
		return
	}
	for _, r := range written.Records {
		rec.ConsentIDs = append(rec.ConsentIDs, r.ConsentID)
	}
	var init struct {
		SessionID string   `json:"session_id"`
		Steps     []string `json:"steps"`
		SDKToken  string   `json:"sdk_token"`
		Nonce     string   `json:"nonce"`
	}
	lagged := false
	for {
		res, err = send(func() (edgeAnswer, error) {
			return h.client.do(ctx, http.MethodPost, "/v1/ekyc/sessions", h.apiKey, map[string]string{"flow": flow, "tracking_id": rec.TrackingID})
		})
		// The edge's consent index follows the consent topic: right after a restart it may
		// not hold a consent the API has just accepted. Counted, and tried again.
		if err != nil || res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), "consent_required") || time.Now().After(deadline) {
			break
		}
		if !lagged {
			lagged = true
			h.mu.Lock()
			h.lags++
			h.mu.Unlock()
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err == nil && res.status != http.StatusCreated {
		err = fmt.Errorf("HTTP %d: %.120s", res.status, res.body)
	}
	if err == nil {
		err = json.Unmarshal(res.body, &init)
	}
	if err != nil {
		fail("session init: " + err.Error())
		return
	}
	rec.ID = init.SessionID
	h.mu.Lock()
	h.sessions = append(h.sessions, rec)
	i := len(h.sessions) - 1
	h.mu.Unlock()
	for _, step := range init.Steps {
		if step == "nfc" {
			if err := sendChip(ctx, h.client, h.bench, c, init.SessionID, init.SDKToken, init.Nonce, send); err != nil {
				fail("nfc: " + err.Error())
				return
			}
			continue
		}
		path := c.doc.Images[step]
		if step == "selfie" {
			f, _ := h.client.corpus.Face(c.selfie)
			path = f.Image
		}
		res, err := send(func() (edgeAnswer, error) { return h.client.postImage(ctx, init.SessionID, init.SDKToken, step, path) })
		if err == nil && res.status != http.StatusOK && res.status != http.StatusAccepted {
			err = fmt.Errorf("HTTP %d: %.120s", res.status, res.body)
		}
		if err != nil {
			fail("upload " + step + ": " + err.Error())
			return
		}
	}
	h.mu.Lock()
	h.sessions[i].Completed = true
	h.mu.Unlock()
	for load.Err() == nil && time.Now().Before(deadline) {
		d, err := h.dataGet(ctx, init.SessionID)
		if err == nil && d.Outcome != "" {
			h.mu.Lock()
			h.decided = append(h.decided, time.Now())
			h.mu.Unlock()
			if n%chaosEraseEvery == 0 {
				h.erase(ctx, init.SessionID, i, send)
			}
			return
		}
		select {
		case <-load.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// chaosEraseEvery: every so many sessions is erased once decided (DELETE).
const chaosEraseEvery = 7

// erase asks for the erasure of session i (its blobs and data) and notes it once the edge
// took it (204).
func (h *chaosHarness) erase(ctx context.Context, id string, i int, send func(func() (edgeAnswer, error)) (edgeAnswer, error)) {
	res, err := send(func() (edgeAnswer, error) {
		return h.client.do(ctx, http.MethodDelete, "/v1/ekyc/sessions/"+id, h.apiKey, nil)
	})
	if err == nil && res.status != http.StatusNoContent {
		err = fmt.Errorf("HTTP %d: %.120s", res.status, res.body)
	}
	if err != nil {
		h.mu.Lock()
		h.failures["erasure: "+err.Error()]++
		h.mu.Unlock()
		return
	}
	h.mu.Lock()
	h.sessions[i].Erased = true
	h.mu.Unlock()
}

// dataGet asks the edge for a session's status and decision.
func (h *chaosHarness) dataGet(ctx context.Context, id string) (chaos.Decided, error) {
	res, err := h.client.do(ctx, http.MethodGet, "/v1/ekyc/sessions/"+id, h.apiKey, nil)
	if err != nil {
		return chaos.Decided{}, err
	}
	if res.status == http.StatusNotFound {
		return chaos.Decided{}, nil
	}
	if res.status != http.StatusOK {
		return chaos.Decided{}, fmt.Errorf("HTTP %d", res.status)
	}
	var v struct {
		Status   string `json:"status"`
		Decision *struct {
			Outcome string `json:"outcome"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(res.body, &v); err != nil {
		return chaos.Decided{}, err
	}
	d := chaos.Decided{Status: v.Status}
	if v.Decision != nil {
		d.Outcome = v.Decision.Outcome
	}
	return d, nil
}

// sources is where the check reads: the broker, Data Get through the edge, ClickHouse.
func (h *chaosHarness) sources() chaos.Sources {
	codec, _ := schemas.NewCodec()
	return chaos.Sources{
		Brokers: h.brokers,
		Codec:   codec,
		DataGet: func(ctx context.Context, id string) (chaos.Decided, error) {
			var d chaos.Decided
			var err error
			for try := 0; try < 20; try++ {
				if d, err = h.dataGet(ctx, id); err == nil {
					return d, nil
				}
				time.Sleep(250 * time.Millisecond)
			}
			return d, err
		},
		ClickHouse: func(ctx context.Context) ([]chaos.ClickHouseRow, error) {
			var out []chaos.ClickHouseRow
			err := h.queryClickHouse(ctx, "SELECT session_id, decision_id, outcome FROM "+chsink.DefaultDatabase+".decisions FINAL", func(rows driver.Rows) error {
				var r chaos.ClickHouseRow
				if err := rows.Scan(&r.SessionID, &r.DecisionID, &r.Outcome); err != nil {
					return err
				}
				out = append(out, r)
				return nil
			})
			return out, err
		},
		BlobDir: filepath.Join(h.o.dir, "data", "blobs"),
		Consents: func(ctx context.Context, tracking string) ([]string, error) {
			res, err := h.cmp(ctx, http.MethodGet, "/v1/consents?tracking_id="+tracking, nil)
			if err == nil && res.status != http.StatusOK {
				err = fmt.Errorf("HTTP %d", res.status)
			}
			if err != nil {
				return nil, err
			}
			var data struct {
				Records []struct {
					ConsentID string `json:"consent_id"`
				} `json:"records"`
			}
			if err := json.Unmarshal(res.body, &data); err != nil {
				return nil, err
			}
			var ids []string
			for _, r := range data.Records {
				ids = append(ids, r.ConsentID)
			}
			return ids, nil
		},
		ClickHouseConsents: func(ctx context.Context) (map[string]int, error) {
			out := map[string]int{}
			err := h.queryClickHouse(ctx, "SELECT consent_id, count() FROM "+chsink.DefaultDatabase+".consents FINAL GROUP BY consent_id", func(rows driver.Rows) error {
				var id string
				var n uint64
				if err := rows.Scan(&id, &n); err != nil {
					return err
				}
				out[id] = int(n)
				return nil
			})
			return out, err
		},
	}
}

// queryClickHouse runs query on the run's ClickHouse and calls scan for each row.
func (h *chaosHarness) queryClickHouse(ctx context.Context, query string, scan func(driver.Rows) error) error {
	conn, err := chsink.Dial(ctx, "127.0.0.1:"+strconv.Itoa(h.chPort))
	if err != nil {
		return err
	}
	defer conn.Close()
	return chsink.EachRow(ctx, conn, query, nil, scan)
}

func (h *chaosHarness) snapshot() []chaos.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]chaos.Session(nil), h.sessions...)
}

// print writes the run's figures and the invariants.
func (h *chaosHarness) print(rep chaos.Report) {
	sessions := h.snapshot()
	completed := 0
	for _, s := range sessions {
		if s.Completed {
			completed++
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.out, "\nsessions: %d opened, %d completed by the client, %d decided on the topic\n", len(sessions), completed, len(rep.Decisions))
	kills, restarts, byKind := map[string]int{}, []time.Duration{}, map[string][]time.Duration{}
	for _, e := range h.events {
		if e.What == "SIGKILL" {
			kills[e.Target]++
		}
		if e.What == "restarted" && e.Recovery > 0 {
			restarts = append(restarts, e.Recovery)
			if p := h.fleet.Get(e.Target); p != nil {
				byKind[p.Kind()] = append(byKind[p.Kind()], e.Recovery)
			}
		}
	}
	fmt.Fprintf(h.out, "kills: %d processes, %d kills\n", len(kills), sum(kills))
	if len(h.decided) > 1 {
		span := h.decided[len(h.decided)-1].Sub(h.decided[0])
		fmt.Fprintf(h.out, "decisions seen by the client while the load ran: %d, %.2f/s\n", len(h.decided), float64(len(h.decided)-1)/span.Seconds())
	}
	if len(restarts) > 0 {
		fmt.Fprintf(h.out, "restart → the next decision the client saw: %s (%d restarts)\n", p50max(restarts), len(restarts))
		kinds := make([]string, 0, len(byKind))
		for k := range byKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(h.out, "  %-8s %s (%d)\n", k, p50max(byKind[k]), len(byKind[k]))
		}
	}
	for _, p := range h.fleet.Procs() {
		if st := p.Stats(); len(st.Recoveries) > 0 && p.Kind() != "group" && p.Kind() != "sink" {
			fmt.Fprintf(h.out, "%s: restart → ready %s (%d restarts)\n", p.Name(), p50max(st.Recoveries), len(st.Recoveries))
		}
	}
	if h.lags > 0 {
		fmt.Fprintf(h.out, "Session Inits refused consent_required for a consent the API had accepted (then opened): %d\n", h.lags)
	}
	for why, n := range h.failures {
		fmt.Fprintf(h.out, "sessions given up by the client: %d × %s\n", n, why)
	}
	fmt.Fprintln(h.out, "\ninvariants:")
	rep.Print(h.out, 10)
}

// p50max formats the median and the largest of ds.
func p50max(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("p50 %.1fs, max %.1fs", s[len(s)/2].Seconds(), s[len(s)-1].Seconds())
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// writeReport writes report.json into the work dir.
func (h *chaosHarness) writeReport(rep chaos.Report) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	type inv struct {
		Name    string   `json:"name"`
		Checked int      `json:"checked"`
		Broken  []string `json:"broken"`
	}
	out := struct {
		Sessions   []chaos.Session `json:"sessions"`
		Events     []chaosEvent    `json:"events"`
		Failures   map[string]int  `json:"client_failures"`
		Invariants []inv           `json:"invariants"`
	}{Sessions: h.sessions, Events: h.events, Failures: h.failures}
	for _, i := range rep.Invariants {
		out.Invariants = append(out.Invariants, inv{i.Name, i.Checked, i.Broken})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(h.o.dir, "report.json"), b, 0o644)
}

// freePorts returns n distinct free 127.0.0.1 addresses.
func freePorts(n int) ([]string, error) {
	var out []string
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// tcpReady is ready when addr accepts a connection.
func tcpReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}
