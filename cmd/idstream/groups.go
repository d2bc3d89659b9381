package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/internal/imagequality"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/processors/chip"
	"github.com/idstream/idstream/processors/decision"
	"github.com/idstream/idstream/processors/erasure"
	"github.com/idstream/idstream/processors/facematch"
	"github.com/idstream/idstream/processors/fraud"
	"github.com/idstream/idstream/processors/liveness"
	"github.com/idstream/idstream/processors/ocr"
	"github.com/idstream/idstream/processors/quality"
	"github.com/idstream/idstream/processors/session"
	"github.com/idstream/idstream/stream"
)

// allGroups is every processor group this binary can run, in start order.
var allGroups = []string{"session", "decision", "quality", "ocr", "chip", "liveness", "facematch", "fraud", erasure.IndexGroupName, erasure.GroupName, erasure.DeleterGroupName}

// loadFlows reads the flows of --flows, or returns the default flows when none is given.
func loadFlows(path string) (flow.Set, error) {
	if path == "" {
		return flow.Default(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return flow.Set{}, fmt.Errorf("flows: %w", err)
	}
	set, err := flow.Parse(b)
	if err != nil {
		return flow.Set{}, fmt.Errorf("flows %s: %w", path, err)
	}
	return set, nil
}

// loadPolicy reads the decision policy of --policy, or returns the default policy for flows.
func loadPolicy(path string, flows flow.Set) (decision.Policy, error) {
	if path == "" {
		return decision.DefaultPolicy(flows), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return decision.Policy{}, fmt.Errorf("policy: %w", err)
	}
	p, err := decision.ParsePolicy(b)
	if err != nil {
		return decision.Policy{}, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// startGroup declares the processor group named name, checks it against its node in the
// pipeline's topology and starts it.
func (s *Service) startGroup(name string, blobs blob.Store, flows flow.Set) error {
	opts := s.runtimeOpts(name)
	if s.cfg.InstanceID != "" {
		opts = append(opts, stream.WithTransactionalID(name+"-"+s.cfg.InstanceID))
	}
	var (
		g        stream.Group         // a stateless group, or
		stateful stream.StatefulGroup // a stateful one
		err      error
	)
	switch name {
	case "session":
		stateful = session.NewGroup(s.codec)
	case "decision":
		var p decision.Policy
		if p, err = loadPolicy(s.cfg.PolicyFile, flows); err == nil {
			stateful = decision.NewGroup(s.codec, p)
		}
	case "quality":
		var faces *face.Engine
		if faces, err = s.faceEngine(name); err == nil {
			gate := imagequality.NewGate(imagequality.DefaultThresholds())
			g = quality.NewGroup(s.codec, blobs, gate, quality.WithFaceDetector(faces, quality.DefaultSelfieFraming()))
		}
	case "ocr":
		g, err = s.ocrGroup(blobs)
	case "chip":
		g, err = s.chipGroup(blobs)
	case "liveness", "facematch":
		var faces *face.Engine
		if faces, err = s.faceEngine(name); err != nil {
			break
		}
		if name == "liveness" {
			g, err = liveness.NewGroup(s.codec, blobs, faces, liveness.WithLogger(s.log.With("group", name)))
		} else {
			g, err = facematch.NewGroup(s.codec, blobs, faces, facematch.WithLogger(s.log.With("group", name)))
		}
	case "fraud":
		g, err = s.fraudGroup(blobs)
	case erasure.IndexGroupName:
		g = erasure.IndexGroup(s.codec)
	case erasure.GroupName:
		stateful = erasure.Group(s.codec)
	case erasure.DeleterGroupName:
		g = erasure.DeleterGroup(s.codec, blobs)
	default:
		return fmt.Errorf("unknown group %q (known: %s)", name, strings.Join(allGroups, ", "))
	}
	if err != nil {
		return fmt.Errorf("%s group: %w", name, err)
	}
	var run func(context.Context) error
	if stateful.Handler != nil {
		err = checkSpec(name, stateful.Inputs, stateful.Outputs, stateful.Table)
		if err == nil {
			var r *stream.StatefulRunner
			r, err = stream.NewStatefulRunner(stateful, opts...)
			run = func(ctx context.Context) error { return r.Run(ctx) }
		}
	} else {
		err = checkSpec(name, g.Inputs, g.Outputs, "")
		if err == nil {
			var r *stream.Runner
			r, err = stream.NewRunner(g, opts...)
			run = func(ctx context.Context) error { return r.Run(ctx) }
		}
	}
	if err != nil {
		return fmt.Errorf("%s group: %w", name, err)
	}
	s.spawn("group "+name, run)
	return nil
}

// faceEngine loads the face models of --models-dir for group, once. Each group gets its own
// engine: an engine runs each network for one image at a time, so one engine shared by the
// quality gate, OCR, liveness, face matching and fraud would queue the gate's real-time
// answers behind the other groups' work. The models are small (about 9 MB together).
func (s *Service) faceEngine(group string) (*face.Engine, error) {
	if e, ok := s.faces[group]; ok {
		return e, nil
	}
	e, err := face.Load(face.DefaultModels(s.cfg.ModelsDir))
	if err != nil {
		return nil, fmt.Errorf("face models (make deps fetches them): %w", err)
	}
	if s.faces == nil {
		s.faces = make(map[string]*face.Engine)
	}
	s.faces[group] = e
	return e, nil
}

// ocrGroup declares the ocr group: Tesseract clients reading with the MRZ model of
// --models-dir, and the face engine cropping the document's photo.
func (s *Service) ocrGroup(blobs blob.Store) (stream.Group, error) {
	faces, err := s.faceEngine("ocr")
	if err != nil {
		return stream.Group{}, err
	}
	if s.ocrReader == nil {
		reader, err := docread.New(docread.Config{MRZModelDir: s.cfg.ModelsDir, PoolSize: 2})
		if err != nil {
			return stream.Group{}, fmt.Errorf("ocr models (make deps fetches them): %w", err)
		}
		s.ocrReader = reader
	}
	return ocr.NewGroup(s.codec, blobs, s.ocrReader, faces, ocr.WithLogger(s.log.With("group", "ocr"))), nil
}

// chipGroup declares the chip group with the CSCA trust anchors and the identity registry.
func (s *Service) chipGroup(blobs blob.Store) (stream.Group, error) {
	trust, err := s.loadTrust()
	if err != nil {
		return stream.Group{}, err
	}
	reg, err := s.registryClient()
	if err != nil {
		return stream.Group{}, err
	}
	return chip.NewGroup(s.codec, blobs, trust, reg, chip.WithLogger(s.log.With("group", "chip"))), nil
}

// registryClient is the client of the identity registry API (dev: the sandbox), or nil when
// none is configured: the registry checks are then skipped.
func (s *Service) registryClient() (registry.Registry, error) {
	if s.registryURL == "" {
		return nil, nil
	}
	client, err := registry.NewClient(s.registryURL, registry.WithBearerToken(s.cfg.IdentityToken), registry.WithLogger(s.log.With("component", "registry")))
	if err != nil {
		return nil, fmt.Errorf("identity registry: %w", err)
	}
	return client, nil
}

// fraudGroup declares the fraud group and starts the views it looks up (fraud.Spec's
// lookups): the blocklist (id numbers and faces), the capture index and the face index, each
// a view of a compacted topic.
func (s *Service) fraudGroup(blobs blob.Store) (stream.Group, error) {
	key, err := s.tokenSecret()
	if err != nil {
		return stream.Group{}, err
	}
	reg, err := s.registryClient()
	if err != nil {
		return stream.Group{}, err
	}
	blocklist, err := fraud.NewBlocklist(s.codec, s.runtimeOpts("fraud-blocklist")...)
	if err != nil {
		return stream.Group{}, err
	}
	s.spawn("fraud blocklist", blocklist.Run)
	sightings, err := fraud.NewCaptureIndex(s.codec, s.runtimeOpts("fraud-captures")...)
	if err != nil {
		return stream.Group{}, err
	}
	s.spawn("fraud capture index", sightings.Run)
	faces, err := s.faceEngine("fraud")
	if err != nil {
		return stream.Group{}, err
	}
	faceIndex, err := fraud.NewFaceIndex(s.codec, s.runtimeOpts("fraud-faces")...)
	if err != nil {
		return stream.Group{}, err
	}
	s.spawn("fraud face index", faceIndex.Run)
	return fraud.NewGroup(s.codec, key, blocklist, sightings,
		fraud.WithRegistry(reg), fraud.WithBlobs(blobs), fraud.WithFaces(faces, faceIndex, blocklist),
		fraud.WithLogger(s.log.With("group", "fraud")))
}

// loadTrust reads the CSCA trust anchors of --csca-dir. Without one, every chip's chain
// check fails with csca_untrusted: nothing is trusted by default.
func (s *Service) loadTrust() (*mrtd.Trust, error) {
	if s.cfg.CSCADir == "" {
		s.log.Warn("no --csca-dir: chip passive authentication will fail with csca_untrusted")
		return nil, nil
	}
	trust, err := mrtd.LoadTrust(s.cfg.CSCADir)
	if errors.Is(err, mrtd.ErrNoAnchors) {
		s.log.Warn("--csca-dir holds no certificate: chip passive authentication will fail with csca_untrusted")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("csca dir: %w", err)
	}
	return trust, nil
}

// groupsFor validates a list of group names.
func groupsFor(names []string) ([]string, error) {
	for _, n := range names {
		if !slices.Contains(allGroups, n) {
			return nil, fmt.Errorf("unknown group %q (known: %s)", n, strings.Join(allGroups, ", "))
		}
	}
	return names, nil
}
