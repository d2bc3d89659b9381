package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// webhookReceiver is the integrator's end of the session-completed webhook in `idstream
// bench`: it notes when each session's webhook first arrived and acknowledges it (200). It
// does not check signatures: the bench measures when, the webhook sink's tests what. Safe
// for concurrent use.
type webhookReceiver struct {
	url string
	srv *http.Server

	mu      sync.Mutex
	got     map[string]time.Time     // session id → first delivery
	waiting map[string]chan struct{} // closed when the session's webhook arrives
}

// startWebhookReceiver listens on addr ("127.0.0.1:0": a free port) and serves until Close.
func startWebhookReceiver(addr string) (*webhookReceiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	w := &webhookReceiver{url: "http://" + ln.Addr().String() + "/hook", got: map[string]time.Time{}, waiting: map[string]chan struct{}{}}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = w.srv.Serve(ln) }()
	return w, nil
}

// ServeHTTP takes one delivery: {"type": ..., "data": {"session_id": ...}}.
func (w *webhookReceiver) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	now := time.Now()
	var body struct {
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	b, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, 1<<20))
	if err != nil || r.Method != http.MethodPost || json.Unmarshal(b, &body) != nil || body.Data.SessionID == "" {
		http.Error(rw, "not a session webhook", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	if _, seen := w.got[body.Data.SessionID]; !seen {
		w.got[body.Data.SessionID] = now
		if ch, ok := w.waiting[body.Data.SessionID]; ok {
			close(ch)
			delete(w.waiting, body.Data.SessionID)
		}
	}
	w.mu.Unlock()
	rw.WriteHeader(http.StatusOK)
}

// wait returns when sessionID's webhook first arrived, waiting for it until deadline.
func (w *webhookReceiver) wait(ctx context.Context, sessionID string, deadline time.Time) (time.Time, error) {
	w.mu.Lock()
	if t, ok := w.got[sessionID]; ok {
		w.mu.Unlock()
		return t, nil
	}
	ch, ok := w.waiting[sessionID]
	if !ok {
		ch = make(chan struct{})
		w.waiting[sessionID] = ch
	}
	w.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-ch:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.got[sessionID], nil
	case <-timer.C:
		return time.Time{}, errors.New("no webhook before the session's deadline")
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// Close stops the receiver.
func (w *webhookReceiver) Close() { _ = w.srv.Close() }
