package consent

import (
	"context"
	"errors"
)

// ErrNotReady is returned by Checker.Granted while the index is still catching up with the
// topic: "not granted" could then be wrong.
var ErrNotReady = errors.New("consent index not ready")

// Checker answers whether a tracking id's latest record for a purpose is a grant, from an
// Index. It implements the edge's ConsentChecker. Safe for concurrent use.
type Checker struct {
	index *Index
}

// NewChecker returns a Checker over index (which a Follower must fill).
func NewChecker(index *Index) *Checker { return &Checker{index: index} }

// Granted reports whether the latest record of purpose for trackingID in tenantID is
// granted: false when there is none, or when it is denied or withdrawn. It returns
// ErrNotReady before the index has caught up.
func (c *Checker) Granted(_ context.Context, tenantID, trackingID, purpose string) (bool, error) {
	if !c.index.Ready() {
		return false, ErrNotReady
	}
	r, ok := c.index.Latest(tenantID, trackingID, purpose)
	return ok && r.Status == StatusGranted, nil
}
