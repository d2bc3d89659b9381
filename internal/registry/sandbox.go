package registry

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultSlowDelay is how long the slow persona's lookups wait without WithSlowDelay: longer
// than the Client's DefaultTimeout.
const DefaultSlowDelay = 5 * time.Second

// MaxRequestBytes is the largest request body the sandbox accepts (larger: 413).
const MaxRequestBytes = 64 << 10

// Sandbox is a deterministic development registry. It serves the registry JSON API (API.md)
// as an http.Handler and, through Registry, the same answers in process. Answers depend only
// on the query and the persona table (Personas); reference ids are random and checked_at
// comes from the sandbox's clock. Sandbox is safe for concurrent use.
type Sandbox struct {
	token     string
	slowDelay time.Duration
	now       func() time.Time
	logger    *slog.Logger
	people    map[string]sandboxPerson
}

var _ http.Handler = (*Sandbox)(nil)

// SandboxOption configures a Sandbox.
type SandboxOption func(*Sandbox)

// WithSandboxToken makes the sandbox's HTTP API require "Authorization: Bearer <token>"
// (401 otherwise). Without it, or with an empty token, requests need no token.
func WithSandboxToken(token string) SandboxOption {
	return func(s *Sandbox) { s.token = token }
}

// WithSlowDelay sets how long the slow persona's lookups wait (default DefaultSlowDelay).
// Values below 0 leave the default.
func WithSlowDelay(d time.Duration) SandboxOption {
	return func(s *Sandbox) {
		if d >= 0 {
			s.slowDelay = d
		}
	}
}

// WithSandboxClock sets the clock of the checked_at times (default time.Now). A nil clock
// leaves the default.
func WithSandboxClock(now func() time.Time) SandboxOption {
	return func(s *Sandbox) {
		if now != nil {
			s.now = now
		}
	}
}

// WithSandboxLogger logs each HTTP lookup (lookup, outcome, status; never personal data).
// Default: no logging.
func WithSandboxLogger(l *slog.Logger) SandboxOption {
	return func(s *Sandbox) {
		if l != nil {
			s.logger = l
		}
	}
}

// NewSandbox returns a sandbox registry holding the personas of Personas.
func NewSandbox(opts ...SandboxOption) *Sandbox {
	s := &Sandbox{
		slowDelay: DefaultSlowDelay,
		now:       time.Now,
		logger:    slog.New(slog.DiscardHandler),
		people:    make(map[string]sandboxPerson),
	}
	for _, p := range sandboxPeople() {
		s.people[p.persona.IDNumber] = p
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Registry returns an in-process Registry with the sandbox's answers, without HTTP: the
// unavailable persona yields an *Error wrapping ErrUnavailable, the slow persona waits the
// slow delay (or until ctx is done: ErrUnavailable on a deadline, the cancellation otherwise).
func (s *Sandbox) Registry() Registry { return sandboxRegistry{s} }

// Serve listens on addr (e.g. "127.0.0.1:0") and serves the sandbox's HTTP API until ctx is
// done, then shuts the server down (in-flight slow lookups are cut short). It returns the
// bound address once listening, or the listen error.
func (s *Sandbox) Serve(ctx context.Context, addr string) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("registry sandbox: listen: %w", err)
	}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      s.slowDelay + 10*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("registry sandbox stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			_ = srv.Close()
		}
	}()
	return ln.Addr().String(), nil
}

// lookupForPath returns the lookup served at an API path.
func lookupForPath(path string) (Lookup, bool) {
	for _, l := range Lookups() {
		if l.path() == path {
			return l, true
		}
	}
	return "", false
}

// personaPath lists the personas over HTTP (a sandbox extension, not part of the registry API).
const personaPath = "/v1/sandbox/personas"

// ServeHTTP implements the registry API (API.md).
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	l, isLookup := lookupForPath(r.URL.Path)
	if !isLookup && r.URL.Path != personaPath {
		writeProblem(w, http.StatusNotFound, codeNotFound, "no such endpoint")
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="registry"`)
		writeProblem(w, http.StatusUnauthorized, codeUnauthorized, "missing or invalid bearer token")
		return
	}
	if !isLookup {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeProblem(w, http.StatusMethodNotAllowed, codeMethod, "use GET")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"personas": personasJSON()})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeProblem(w, http.StatusMethodNotAllowed, codeMethod, "use POST")
		return
	}
	status, outcome := s.serveLookup(w, r, l)
	s.logger.Info("registry sandbox lookup", "lookup", string(l), "status", status, "outcome", outcome)
}

// serveLookup answers one lookup and returns the status and outcome for the log.
func (s *Sandbox) serveLookup(w http.ResponseWriter, r *http.Request, l Lookup) (int, string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeProblem(w, http.StatusRequestEntityTooLarge, codeTooLarge,
				fmt.Sprintf("request body exceeds %d bytes", MaxRequestBytes))
			return http.StatusRequestEntityTooLarge, ""
		}
		writeProblem(w, http.StatusBadRequest, codeInvalidRequest, "could not read the request body")
		return http.StatusBadRequest, ""
	}
	var req checkRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil || dec.More() {
		writeProblem(w, http.StatusBadRequest, codeInvalidRequest, "body must be one JSON object (API.md)")
		return http.StatusBadRequest, ""
	}
	resp, err := s.evaluate(r.Context(), l, req.query())
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, resp)
		return http.StatusOK, resp.Outcome
	case errors.Is(err, ErrInvalidQuery):
		writeProblem(w, http.StatusUnprocessableEntity, codeInvalidQuery, err.Error())
		return http.StatusUnprocessableEntity, ""
	default:
		writeProblem(w, http.StatusServiceUnavailable, codeUnavailable, "the registry is unavailable; retry later")
		return http.StatusServiceUnavailable, ""
	}
}

func (s *Sandbox) authorized(r *http.Request) bool {
	if s.token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// evaluate answers one lookup. Errors wrap ErrInvalidQuery, ErrUnavailable or the context's
// cancellation.
func (s *Sandbox) evaluate(ctx context.Context, l Lookup, q Query) (checkResponse, error) {
	if err := q.Validate(); err != nil {
		return checkResponse{}, err
	}
	p, known := s.people[q.IDNumber]
	if known {
		switch p.persona.Behavior {
		case BehaviorUnavailable:
			return checkResponse{}, fmt.Errorf("%w: sandbox persona %q", ErrUnavailable, p.persona.Key)
		case BehaviorSlow:
			if err := sleepContext(ctx, s.slowDelay); err != nil {
				return checkResponse{}, contextError(err)
			}
		}
	}
	resp := checkResponse{
		Lookup:           l,
		MismatchedFields: []string{},
		ReferenceID:      "sbx_" + strings.ToLower(rand.Text()[:16]),
		CheckedAt:        s.now().UTC().Truncate(time.Millisecond),
	}
	if !known || p.absent {
		resp.Outcome = string(IdentityNotFound) // == RecordNotFound
		return resp, nil
	}
	nameDiffers := NormalizeName(q.FullName) != NormalizeName(p.fullName)
	dobDiffers := q.DateOfBirth != p.dateOfBirth
	if l == LookupIdentity {
		sexDiffers := q.Sex != "" && q.Sex != p.sex
		resp.MismatchedFields = mismatched(nameDiffers, dobDiffers, sexDiffers)
		switch {
		case p.status == statusDeceased:
			resp.Outcome = string(IdentityDeceased)
		case p.status == statusRevoked:
			resp.Outcome = string(IdentityRevoked)
		case nameDiffers:
			resp.Outcome = string(IdentityNameMismatch)
		case dobDiffers:
			resp.Outcome = string(IdentityDOBMismatch)
		case sexDiffers:
			resp.Outcome = string(IdentitySexMismatch)
		default:
			resp.Outcome = string(IdentityMatch)
		}
		return resp, nil
	}
	state := p.records[l]
	if state == recordAbsent {
		resp.Outcome = string(RecordNotFound)
		return resp, nil
	}
	resp.MismatchedFields = mismatched(nameDiffers, dobDiffers, false)
	switch {
	case nameDiffers || dobDiffers:
		resp.Outcome = string(RecordMismatch)
	case state == recordInactive:
		resp.Outcome = string(RecordInactive)
	default:
		resp.Outcome = string(RecordFound)
	}
	return resp, nil
}

func mismatched(name, dob, sex bool) []string {
	out := []string{}
	if name {
		out = append(out, FieldFullName)
	}
	if dob {
		out = append(out, FieldDateOfBirth)
	}
	if sex {
		out = append(out, FieldSex)
	}
	return out
}

// personaJSON is a persona as GET /v1/sandbox/personas lists it.
type personaJSON struct {
	Key             string `json:"key"`
	Description     string `json:"description"`
	IDNumber        string `json:"id_number"`
	FullName        string `json:"full_name"`
	DateOfBirth     string `json:"date_of_birth"`
	Sex             string `json:"sex"`
	Behavior        string `json:"behavior"`
	Identity        string `json:"identity,omitempty"`
	Tax             string `json:"tax,omitempty"`
	HealthInsurance string `json:"health_insurance,omitempty"`
	SocialInsurance string `json:"social_insurance,omitempty"`
}

func personasJSON() []personaJSON {
	ps := Personas()
	out := make([]personaJSON, len(ps))
	for i, p := range ps {
		out[i] = personaJSON{
			Key: p.Key, Description: p.Description, IDNumber: p.IDNumber, FullName: p.FullName,
			DateOfBirth: p.DateOfBirth, Sex: p.Sex, Behavior: string(p.Behavior),
			Identity: string(p.Identity), Tax: string(p.Tax),
			HealthInsurance: string(p.HealthInsurance), SocialInsurance: string(p.SocialInsurance),
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, "internal", "could not encode the answer")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

func writeProblem(w http.ResponseWriter, status int, code, detail string) {
	data, _ := json.Marshal(problem{
		Type:   problemTypeBase + code,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Code:   code,
	})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// sandboxRegistry is the in-process Registry of a Sandbox.
type sandboxRegistry struct{ s *Sandbox }

func (r sandboxRegistry) CheckIdentity(ctx context.Context, q Query) (IdentityResult, error) {
	resp, err := r.s.evaluate(ctx, LookupIdentity, q)
	if err != nil {
		return IdentityResult{}, &Error{Lookup: LookupIdentity, Err: err}
	}
	return IdentityResult{
		Outcome:          IdentityOutcome(resp.Outcome),
		MismatchedFields: resp.MismatchedFields,
		ReferenceID:      resp.ReferenceID,
		CheckedAt:        resp.CheckedAt,
	}, nil
}

func (r sandboxRegistry) CheckTax(ctx context.Context, q Query) (RecordResult, error) {
	return r.record(ctx, LookupTax, q)
}

func (r sandboxRegistry) CheckHealthInsurance(ctx context.Context, q Query) (RecordResult, error) {
	return r.record(ctx, LookupHealthInsurance, q)
}

func (r sandboxRegistry) CheckSocialInsurance(ctx context.Context, q Query) (RecordResult, error) {
	return r.record(ctx, LookupSocialInsurance, q)
}

func (r sandboxRegistry) record(ctx context.Context, l Lookup, q Query) (RecordResult, error) {
	resp, err := r.s.evaluate(ctx, l, q)
	if err != nil {
		return RecordResult{}, &Error{Lookup: l, Err: err}
	}
	return RecordResult{
		Lookup:           l,
		Outcome:          RecordOutcome(resp.Outcome),
		MismatchedFields: resp.MismatchedFields,
		ReferenceID:      resp.ReferenceID,
		CheckedAt:        resp.CheckedAt,
	}, nil
}
