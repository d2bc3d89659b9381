package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/idstream/idstream/sinks/webhook"
)

// Delivery is one webhook request the Receiver took (whatever it answered).
type Delivery struct {
	WebhookID string
	SessionID string
	Type      string
	SignedOK  bool // the webhook-signature header carries a valid signature of the body
	Answered  int  // the status the receiver answered; 0: it hung until the sender gave up
}

// Receiver is the integrator's webhook endpoint under chaos: it checks every delivery's
// Standard Webhooks signature with the tenant's keys, records it, and answers 200 — or, as
// told by SetFaults, 500 or nothing (it holds the request past the sender's timeout) for a
// share of deliveries, or it is down altogether (Down: the port refuses connections). Safe
// for concurrent use.
type Receiver struct {
	keys [][]byte
	addr string
	hold time.Duration

	mu         sync.Mutex
	ln         net.Listener
	srv        *http.Server
	deliveries []Delivery
	fail, hang float64 // shares of deliveries answered 500 / held
	rnd        *rand.Rand
}

// StartReceiver listens on a free port of 127.0.0.1 and verifies signatures with keys;
// a held delivery is held for hold (more than the webhook sink's timeout).
func StartReceiver(keys [][]byte, hold time.Duration) (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("chaos receiver: %w", err)
	}
	r := &Receiver{keys: keys, addr: ln.Addr().String(), hold: hold, rnd: rand.New(rand.NewPCG(1, 2))}
	r.serveLocked(ln)
	return r, nil
}

// URL is the webhook URL to give the tenant.
func (r *Receiver) URL() string { return "http://" + r.addr + "/hook" }

// SetFaults sets the shares of deliveries answered 500 and held without an answer.
func (r *Receiver) SetFaults(fail, hang float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail, r.hang = fail, hang
}

// Down closes the listener: deliveries are refused until Up.
func (r *Receiver) Down() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		_ = r.srv.Close()
		r.srv, r.ln = nil, nil
	}
}

// Up listens again on the same address. It returns an error when the port was taken
// meanwhile.
func (r *Receiver) Up() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("chaos receiver: up again: %w", err)
	}
	r.serveLocked(ln)
	return nil
}

// Close stops the receiver for good.
func (r *Receiver) Close() { r.Down() }

// Deliveries returns a copy of every delivery taken so far.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

func (r *Receiver) serveLocked(ln net.Listener) {
	r.ln = ln
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	srv := r.srv
	go func() { _ = srv.Serve(ln) }()
}

// ServeHTTP takes one delivery.
func (r *Receiver) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(rw, req.Body, 1<<20))
	if err != nil || req.Method != http.MethodPost {
		http.Error(rw, "not a webhook", http.StatusBadRequest)
		return
	}
	var msg struct {
		Type string `json:"type"`
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &msg)
	d := Delivery{WebhookID: req.Header.Get(webhook.HeaderID), SessionID: msg.Data.SessionID, Type: msg.Type}
	if ts, err := strconv.ParseInt(req.Header.Get(webhook.HeaderTimestamp), 10, 64); err == nil {
		want, err := webhook.Signature(r.keys, d.WebhookID, ts, body)
		d.SignedOK = err == nil && want == req.Header.Get(webhook.HeaderSignature)
	}
	r.mu.Lock()
	x := r.rnd.Float64()
	fail, hang := x < r.fail, x >= r.fail && x < r.fail+r.hang
	switch {
	case fail:
		d.Answered = http.StatusInternalServerError
	case !hang:
		d.Answered = http.StatusOK
	}
	r.deliveries = append(r.deliveries, d)
	r.mu.Unlock()
	if hang {
		select {
		case <-req.Context().Done():
		case <-time.After(r.hold):
		}
		return
	}
	rw.WriteHeader(d.Answered)
}

// errNotReady is returned by readiness checks that got an answer other than 200.
var errNotReady = errors.New("not ready")

// HTTPReady returns a readiness check: GET url answers 200.
func HTTPReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%w: %s: %d", errNotReady, url, res.StatusCode)
		}
		return nil
	}
}
