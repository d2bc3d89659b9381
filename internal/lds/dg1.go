package lds

import (
	"fmt"

	"github.com/idstream/idstream/internal/mrz"
)

// tagMRZData is the MRZ data element inside DG1.
const tagMRZData = 0x5F1F

// ParseDG1 reads EF.DG1 (tag 0x61 wrapping the MRZ data element 0x5F1F) and parses the MRZ
// it holds, whose length gives its format: 90 characters TD1, 72 TD2, 88 TD3. Failed check
// digits are reported in the result (Valid false), not as an error; an error wraps
// ErrMalformed.
func ParseDG1(b []byte) (*mrz.MRZ, error) {
	dg, err := openFile(b, TagDG1, "DG1")
	if err != nil {
		return nil, err
	}
	cs, err := children(dg, "DG1")
	if err != nil {
		return nil, err
	}
	data, err := find(cs, tagMRZData, "DG1")
	if err != nil {
		return nil, err
	}
	s := string(data.Value)
	var lines []string
	switch len(s) {
	case 90:
		lines = []string{s[0:30], s[30:60], s[60:90]}
	case 72:
		lines = []string{s[0:36], s[36:72]}
	case 88:
		lines = []string{s[0:44], s[44:88]}
	default:
		return nil, fmt.Errorf("%w: DG1 MRZ of %d characters, want 90 (TD1), 72 (TD2) or 88 (TD3)", ErrMalformed, len(s))
	}
	m, err := mrz.Parse(lines)
	if err != nil {
		return nil, fmt.Errorf("%w: DG1: %w", ErrMalformed, err)
	}
	return m, nil
}
