package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/internal/imagequality"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/chip"
	"github.com/idstream/idstream/processors/decision"
	"github.com/idstream/idstream/processors/erasure"
	"github.com/idstream/idstream/processors/facematch"
	"github.com/idstream/idstream/processors/fraud"
	"github.com/idstream/idstream/processors/liveness"
	"github.com/idstream/idstream/processors/ocr"
	"github.com/idstream/idstream/processors/quality"
	"github.com/idstream/idstream/processors/session"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/stream"
)

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
	def := decision.DefaultPolicy(flows)
	p, err := decision.ParsePolicyOver(b, &def)
	if err != nil {
		return decision.Policy{}, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// stateless makes the start of a stateless group from its declaration: declare it, check
// it against its node, run it.
func stateless(declare func(*Service) (stream.Group, error)) func(*Service, topology.Node) error {
	return func(s *Service, n topology.Node) error {
		g, err := declare(s)
		if err != nil {
			return err
		}
		if err := checkSpec(n, g.Inputs, g.Outputs, ""); err != nil {
			return err
		}
		opts := s.groupOpts(g.Name)
		if slices.Contains(cpuBound, g.Name) {
			opts = append(opts, stream.WithUnordered(s.cores))
		}
		return s.spawnRestarting("group "+g.Name, func() (func(context.Context) error, error) {
			r, err := stream.NewRunner(g, opts...)
			if err != nil {
				return nil, err
			}
			return r.Run, nil
		})
	}
}

// cpuBound are the groups whose every record is seconds or tenths of CPU (decoding, OCR,
// face models): each handles as many records at once as the process has cores, taking the
// next as soon as one is done, in any order (stream.WithUnordered), so that a session's
// capture is not handled at a fraction of a core beside every other that arrived with it,
// nor waits behind another capture of its partition (a session's front and back are read on
// two cores). Their results are filed by the session group under the capture they are about,
// whatever their order. The other groups' records are mostly milliseconds; they take what
// has arrived, in order.
var cpuBound = []string{quality.GroupName, ocr.GroupName, liveness.GroupName}

// stateful makes the start of a stateful group from its declaration.
func stateful(declare func(*Service) (stream.StatefulGroup, error)) func(*Service, topology.Node) error {
	return func(s *Service, n topology.Node) error {
		g, err := declare(s)
		if err != nil {
			return err
		}
		if err := checkSpec(n, g.Inputs, g.Outputs, g.Table); err != nil {
			return err
		}
		opts := s.groupOpts(g.Name)
		return s.spawnRestarting("group "+g.Name, func() (func(context.Context) error, error) {
			r, err := stream.NewStatefulRunner(g, opts...)
			if err != nil {
				return nil, err
			}
			return r.Run, nil
		})
	}
}

// groupOpts are the runtime options of the group named name: a stable transactional id
// when the service has an instance id, and the background's threads for the background groups.
func (s *Service) groupOpts(name string) []stream.Option {
	opts := s.runtimeOpts(name)
	if s.cfg.InstanceID != "" {
		opts = append(opts, stream.WithTransactionalID(name+"-"+s.cfg.InstanceID))
	}
	if slices.Contains(background, name) {
		opts = append(opts, stream.WithBackground(s.background))
	}
	return opts
}

func (s *Service) sessionGroup() (stream.StatefulGroup, error) { return session.NewGroup(s.codec), nil }

// decisionGroup declares the decision group with the policy of --policy.
func (s *Service) decisionGroup() (stream.StatefulGroup, error) {
	p, err := loadPolicy(s.cfg.PolicyFile, s.flows)
	if err != nil {
		return stream.StatefulGroup{}, err
	}
	if s.cfg.TenantsFile != "" { // the dev sandbox has a reviewer
		reg, err := tenant.Load(s.cfg.TenantsFile)
		if err != nil {
			return stream.StatefulGroup{}, fmt.Errorf("tenants: %w", err)
		}
		for _, id := range unreviewedTenants(p, reg) {
			s.log.Warn("decision policy: review rules can send this tenant's sessions to review, and it has no reviewers: they stay processing until one decides them",
				"tenant_id", id, "policy_version", p.Version)
		}
	}
	return decision.NewGroup(s.codec, p, decision.WithMetrics(s.reg)), nil
}

// unreviewedTenants returns the tenants without reviewers whose sessions a review rule of p
// can send to review (a rule of a flow the tenant may open, or of the tenant itself).
func unreviewedTenants(p decision.Policy, reg *tenant.Registry) []string {
	var out []string
	for _, t := range reg.All() {
		if len(t.Reviewers) > 0 {
			continue
		}
		reviewed := len(p.Tenants[t.ID].Review) > 0
		for name, fp := range p.Flows {
			reviewed = reviewed || (len(fp.Review) > 0 && t.AllowsFlow(name))
		}
		if reviewed {
			out = append(out, t.ID)
		}
	}
	return out
}

// qualityGroup declares the quality gate, with a face detector for the selfie's framing.
func (s *Service) qualityGroup() (stream.Group, error) {
	faces, err := s.faceEngine("quality")
	if err != nil {
		return stream.Group{}, err
	}
	gate := imagequality.NewGate(imagequality.DefaultThresholds())
	return quality.NewGroup(s.codec, s.blobs, gate, quality.WithFaceDetector(faces, quality.DefaultSelfieFraming()), quality.WithDecodedImages(s.decoded)), nil
}

func (s *Service) livenessGroup() (stream.Group, error) {
	faces, err := s.faceEngine("liveness")
	if err != nil {
		return stream.Group{}, err
	}
	return liveness.NewGroup(s.codec, s.blobs, faces, liveness.WithDecodedImages(s.decoded), liveness.WithLogger(s.log.With("group", "liveness")))
}

func (s *Service) facematchGroup() (stream.Group, error) {
	faces, err := s.faceEngine("facematch")
	if err != nil {
		return stream.Group{}, err
	}
	return facematch.NewGroup(s.codec, s.blobs, faces, facematch.WithDecodedImages(s.decoded), facematch.WithLogger(s.log.With("group", "facematch")))
}

func (s *Service) erasureIndexGroup() (stream.Group, error) { return erasure.IndexGroup(s.codec), nil }

func (s *Service) erasureGroup() (stream.StatefulGroup, error) { return erasure.Group(s.codec), nil }

func (s *Service) erasureDeleterGroup() (stream.Group, error) {
	return erasure.DeleterGroup(s.codec, s.blobs), nil
}

// faceEngine loads the face models of --models-dir for group, once. Each group gets its own
// engine: an engine runs each network for one image at a time, so one engine shared by the
// quality gate, OCR, liveness, face matching and fraud would queue the gate's real-time
// answers behind the other groups' work. The models are small (about 9 MB together).
func (s *Service) faceEngine(group string) (*face.Engine, error) {
	if e, ok := s.faces[group]; ok {
		return e, nil
	}
	var opts []face.LoadOption
	if s.found != nil {
		opts = append(opts, face.WithFound(s.found))
	}
	e, err := face.Load(face.DefaultModels(s.cfg.ModelsDir), opts...)
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
func (s *Service) ocrGroup() (stream.Group, error) {
	faces, err := s.faceEngine("ocr")
	if err != nil {
		return stream.Group{}, err
	}
	if s.ocrReader == nil {
		// A client per core: the group reads as many captures at once (WithUnordered), and a
		// call waiting for a client would hold its background turn.
		reader, err := docread.New(docread.Config{MRZModelDir: s.cfg.ModelsDir, PoolSize: max(2, s.cores)})
		if err != nil {
			return stream.Group{}, fmt.Errorf("ocr models (make deps fetches them): %w", err)
		}
		s.ocrReader = reader
	}
	return ocr.NewGroup(s.codec, s.blobs, s.ocrReader, faces, ocr.WithDecodedImages(s.decoded), ocr.WithLogger(s.log.With("group", "ocr"))), nil
}

// chipGroup declares the chip group with the CSCA trust anchors and the identity registry.
func (s *Service) chipGroup() (stream.Group, error) {
	trust, err := s.loadTrust()
	if err != nil {
		return stream.Group{}, err
	}
	reg, err := s.registryClient()
	if err != nil {
		return stream.Group{}, err
	}
	return chip.NewGroup(s.codec, s.blobs, trust, reg, chip.WithLogger(s.log.With("group", "chip"))), nil
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
func (s *Service) fraudGroup() (stream.Group, error) {
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
		fraud.WithRegistry(reg), fraud.WithBlobs(s.blobs), fraud.WithDecodedImages(s.decoded), fraud.WithFaces(faces, faceIndex, blocklist),
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
