package problem

import (
	"fmt"
	"log/slog"

	"github.com/gofiber/fiber/v2"
)

// Handler turns every error and panic of a fiber application into a problem document. Use
// Middleware as the application's first handler and HandleError as its
// fiber.Config.ErrorHandler (fiber calls it for errors raised before routing, such as a
// body over the limit). Safe for concurrent use.
type Handler struct {
	log       *slog.Logger
	component string
	challenge string
}

// Option configures a Handler.
type Option func(*Handler)

// WithLogger logs unknown errors and panics to l (default: discard). Only the request id,
// method, route, error text and panic type are logged; handlers must wrap errors with ids
// and operation names only, never PII.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) {
		if l != nil {
			h.log = l
		}
	}
}

// WithComponent prefixes log messages with name (e.g. "edge", "consent"; default "http").
func WithComponent(name string) Option { return func(h *Handler) { h.component = name } }

// WithAuthChallenge sets the WWW-Authenticate header of every 401 answer (e.g.
// `Bearer realm="idstream"`); default none.
func WithAuthChallenge(v string) Option { return func(h *Handler) { h.challenge = v } }

// NewHandler returns a Handler.
func NewHandler(opts ...Option) *Handler {
	h := &Handler{log: slog.New(slog.DiscardHandler), component: "http"}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	return h
}

// Middleware sets the request id, runs the rest of the chain and answers any error it
// returns, or any panic, with a problem document (a panic is 500 internal). It returns nil
// once the problem is written.
func (h *Handler) Middleware(c *fiber.Ctx) (err error) {
	RequestID(c)
	defer func() {
		if r := recover(); r != nil {
			h.log.Error(h.component+": panic in handler", "request_id", RequestID(c), "route", c.Route().Path, "panic_type", fmt.Sprintf("%T", r))
			err = h.HandleError(c, Internal())
		}
	}()
	if err := c.Next(); err != nil {
		return h.HandleError(c, err)
	}
	return nil
}

// HandleError answers err as a problem document (see From). An unknown error is logged,
// never returned to the client. It always returns nil.
func (h *Handler) HandleError(c *fiber.Ctx, err error) error {
	p, known := From(err)
	if !known {
		h.log.Error(h.component+": request failed", "request_id", RequestID(c), "method", c.Method(), "route", c.Route().Path, "err", err)
	}
	if werr := write(c, p, h.challenge); werr != nil {
		h.log.Error(h.component+": write problem", "request_id", RequestID(c), "err", werr)
	}
	return nil
}
