// Package chip is the chip processor group: for every nfc capture on schemas.TopicCaptures
// it loads the files read from the eMRTD chip (EF.SOD, DG1, DG2, DG13, DG14, DG15 and the
// active authentication answer) from the blob store, verifies them (ICAO 9303 passive
// authentication, active authentication over the session's server nonce, the national
// identity registry), extracts the MRZ, the Vietnamese DG13 fields and the face image, and
// emits one schemas.ChipVerified to schemas.TopicChip, keyed by session id, with one check
// per sub-check (see the Check* names and the Reason* codes).
//
// The group is stateless. Its output is a function of the capture record, the blob bytes
// and the registry's answer: a replay produces the same event id and occurred_at, and the
// same checks unless the registry answers differently (the session group then replaces
// checks by name).
package chip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/claimcheck"
	"github.com/idstream/idstream/internal/lds"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// GroupName is the consumer group id.
const GroupName = "chip"

// Producer is the envelope producer of every event the group emits.
const Producer = "chip"

// EventIDPrefix prefixes the capture id to form the event id of its ChipVerified.
const EventIDPrefix = "evt_chip_"

// StepNFC is the capture step the group acts on.
const StepNFC = "nfc"

// Blob names of a chip capture (API.md, nfc step); data groups are "dg<N>", N in 1..16.
const (
	BlobSOD         = "sod"
	BlobAASignature = "aa_signature"
)

// FaceBlobName is the file name (last key segment) and BlobRef name of the face image the
// group stores: "<tenant>/<session>/<capture>/chip_face.jpg".
const FaceBlobName = "chip_face.jpg"

// DefaultRegistryTimeout bounds one national identity registry lookup.
const DefaultRegistryTimeout = 10 * time.Second

// Option configures the group.
type Option func(*group)

// WithClock sets the clock used when a capture carries no occurred_at (default time.Now):
// it then dates the event, and is the time at which certificates are checked and MRZ dates
// resolved. Captures with an occurred_at always use it for all three.
func WithClock(now func() time.Time) Option {
	return func(g *group) {
		if now != nil {
			g.now = now
		}
	}
}

// WithRegistryTimeout bounds each registry lookup (default DefaultRegistryTimeout); a lookup
// that takes longer is reported as warn with reason registry_unavailable. Values ≤ 0 leave
// the default.
func WithRegistryTimeout(d time.Duration) Option {
	return func(g *group) {
		if d > 0 {
			g.registryTimeout = d
		}
	}
}

// WithFaceDecodeOptions sets the options of lds.DecodeFaceJPEG, which turns a JPEG2000 DG2
// face into a JPEG (decoder path, temporary directory, timeout, limits).
func WithFaceDecodeOptions(opts ...lds.DecodeOption) Option {
	return func(g *group) { g.decodeOpts = append([]lds.DecodeOption(nil), opts...) }
}

// WithLogger sets the logger (default: discard). The group logs ids, check names and error
// causes, never personal data.
func WithLogger(l *slog.Logger) Option {
	return func(g *group) {
		if l != nil {
			g.log = l
		}
	}
}

// NewGroup declares the chip group. trust holds the CSCA trust anchors (from --csca-dir);
// a nil trust trusts no CSCA, so chip.chain (and with it chip.passive_authentication) fails
// with reason csca_untrusted for every chip. reg is the national identity registry; a nil
// reg reports chip.registry_identity as skipped with reason registry_not_configured.
//
// Its handler, for a record of schemas.TopicCaptures:
//   - emits nothing for a tombstone or a capture of another step than nfc;
//   - emits nothing when a chip file's blob is gone (blob.ErrNotFound: the session was
//     erased);
//   - otherwise emits exactly one ChipVerified, with event id "evt_chip_" + capture id,
//     occurred_at the capture's, producer "chip", keyed by session id. Chip data that does
//     not parse or verify yields failing checks, never an error, so a bad chip read cannot
//     loop through retries.
//
// The checks, in this order, each with Source "chip" and the capture id:
//   - chip.files (fail file_unreadable), only when a file could not be used at all;
//   - chip.passive_authentication (overall; its reason is the first failing sub-check's),
//     chip.signature, chip.chain, chip.data_groups (only when no data group was supplied),
//     and chip.dg<N>_hash for each data group supplied; reasons are the mrtd.Reason* codes,
//     or sod_missing / sod_malformed when there is no usable EF.SOD (the hashes are then
//     skipped). Certificates are checked at the capture's occurred_at;
//   - chip.dg1_mrz (pass when every MRZ check digit holds), chip.dg2_face (the face stored
//     as JPEG under "<tenant>/<session>/<capture>/chip_face.jpg"; warn
//     face_decoder_unavailable when opj_decompress is missing here), chip.dg13_fields. The
//     content of a data group is read only when its hash matched the SOD: otherwise its
//     check is skipped with dg_unverified and nothing of it (MRZ, fields, face) is reported;
//   - chip.active_authentication over the capture's nonce with DG15's key (and DG14's hash
//     for ECDSA): skipped aa_not_supported when the chip has no DG15 and the SOD lists none;
//     fail when DG15 is withheld, does not verify, or the signature is missing or wrong;
//   - chip.registry_identity (see WithRegistryTimeout): pass on match; fail with the
//     registry's outcome as reason (name_mismatch, dob_mismatch, sex_mismatch, revoked,
//     deceased, not_found); warn registry_unavailable (down or past the timeout) or
//     registry_error; skipped without a registry or a verified, usable DG13.
//
// DocumentType is chip_id_card for an IDVNM TD1 with a readable DG13, passport for a TD3,
// id_card for another TD1/TD2 and unknown without a verified DG1.
//
// The handler returns an error (retried, then dead-lettered) only for a record of another
// topic, an undecodable record, a capture without session or capture id, a blob store
// failure other than not-found, too large or invalid key, an encoding failure, or when ctx
// ends while it works. It is safe for concurrent use.
func NewGroup(codec stream.Codec, blobs blob.Store, trust *mrtd.Trust, reg registry.Registry, opts ...Option) stream.Group {
	g := &group{
		codec: codec, blobs: blobs, trust: trust, reg: reg,
		now: time.Now, registryTimeout: DefaultRegistryTimeout,
		log: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(g)
	}
	input := stream.On(schemas.Captures, g.handle).Lazy() // the other steps' captures take no turn
	return stream.Group{
		Name:    GroupName,
		Inputs:  stream.Topics(input),
		Outputs: Spec().Outputs,
		Handler: stream.Handle(GroupName, codec, input),
	}
}

type group struct {
	codec           stream.Codec
	blobs           blob.Store
	trust           *mrtd.Trust
	reg             registry.Registry
	now             func() time.Time
	registryTimeout time.Duration
	decodeOpts      []lds.DecodeOption
	log             *slog.Logger
}

func (g *group) handle(ctx context.Context, rec *stream.Record, c *schemas.CaptureSubmitted) ([]stream.Output, error) {
	if c.Step != StepNFC {
		return nil, nil
	}
	if c.Envelope.SessionID == "" || c.CaptureID == "" {
		return nil, fmt.Errorf("capture at offset %d has no session or capture id", rec.Offset)
	}
	if err := stream.Compute(ctx); err != nil { // a chip to verify: the background's turn
		return nil, err
	}
	ev, err := g.verify(ctx, c)
	if err != nil || ev == nil {
		return nil, err
	}
	out, err := stream.Emit(g.codec, schemas.Chip, []byte(c.Envelope.SessionID), ev)
	if err != nil {
		return nil, fmt.Errorf("result of capture %s: %w", c.CaptureID, err)
	}
	return []stream.Output{out}, nil
}

// verify loads the capture's files and verifies them; nil, nil when a file is gone.
func (g *group) verify(ctx context.Context, c *schemas.CaptureSubmitted) (*schemas.ChipVerified, error) {
	at := c.Envelope.OccurredAt
	if at.IsZero() {
		at = g.now().UTC().Truncate(time.Millisecond)
	}
	files, gone, err := g.load(ctx, c)
	if err != nil || gone {
		return nil, err
	}
	v := &verifier{
		g: g, capture: c, at: at, files: files,
		faceKey: c.Envelope.TenantID + "/" + c.Envelope.SessionID + "/" + c.CaptureID + "/" + FaceBlobName,
	}
	res, err := v.run(ctx)
	if errors.Is(err, errErased) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	captureID := c.CaptureID
	for i := range res.Checks {
		res.Checks[i].Source = Producer
		res.Checks[i].CaptureID = &captureID
	}
	res.Envelope = schemas.Envelope{
		EventID:    EventIDPrefix + c.CaptureID,
		SessionID:  c.Envelope.SessionID,
		TenantID:   c.Envelope.TenantID,
		OccurredAt: at,
		Producer:   Producer,
	}
	res.CaptureID = c.CaptureID
	return res, nil
}

// chipFiles are the files of one chip read.
type chipFiles struct {
	sod         []byte
	hasSOD      bool
	dgs         map[int][]byte
	aaSignature []byte
	// unreadable names the files that could not be used (too large for the store, a bad
	// reference, bytes that do not match their recorded SHA-256).
	unreadable []string
}

// load reads the capture's chip files. gone is true when one of them is not found.
func (g *group) load(ctx context.Context, c *schemas.CaptureSubmitted) (files chipFiles, gone bool, err error) {
	files.dgs = map[int][]byte{}
	seen := map[string]bool{}
	for _, ref := range c.Blobs {
		n, isDG := dataGroupOf(ref.Name)
		if (!isDG && ref.Name != BlobSOD && ref.Name != BlobAASignature) || seen[ref.Name] {
			continue
		}
		seen[ref.Name] = true
		data, err := claimcheck.Bytes(ctx, g.blobs, ref.URI, ref.SHA256)
		switch {
		case errors.Is(err, claimcheck.ErrGone):
			return chipFiles{}, true, nil
		case errors.Is(err, claimcheck.ErrUnusable):
			files.unreadable = append(files.unreadable, ref.Name)
			continue
		case err != nil:
			return chipFiles{}, false, fmt.Errorf("load %s of capture %s: %w", ref.Name, c.CaptureID, err)
		}
		switch {
		case isDG:
			files.dgs[n] = data
		case ref.Name == BlobSOD:
			files.sod, files.hasSOD = data, true
		default:
			files.aaSignature = data
		}
	}
	return files, false, nil
}

// dataGroupOf returns N for a blob named "dg<N>" with N in 1..16.
func dataGroupOf(name string) (int, bool) {
	if len(name) < 3 || len(name) > 4 || name[:2] != "dg" {
		return 0, false
	}
	n := 0
	for _, ch := range name[2:] {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + int(ch-'0')
	}
	if name[2] == '0' || n < 1 || n > 16 {
		return 0, false
	}
	return n, true
}

// Spec is the chip group: nfc captures in, chip verifications out.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Group,
		Inputs:  []string{schemas.TopicCaptures},
		Outputs: []string{schemas.TopicChip},
	}
}
