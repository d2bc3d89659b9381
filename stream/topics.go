package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TopicSpec describes a topic EnsureTopics creates. ReplicationFactor 0 means the broker's
// default; Retention 0 means the broker's default and a negative Retention keeps records
// forever (both ignored for compacted topics). MaxCompactionLag (compacted topics; 0: the
// broker's default) bounds how long a record another record of its key (a tombstone, an
// erasure) replaced stays in the log: the topic's segments roll and are compacted within it.
type TopicSpec struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Compacted         bool
	Retention         time.Duration
	MaxCompactionLag  time.Duration
}

// configs returns the topic configuration of s that EnsureTopics sets at creation and
// AlignTopicConfigs on an existing topic.
func (s TopicSpec) configs() map[string]*string {
	configs := map[string]*string{}
	ms := func(d time.Duration) *string { return kadm.StringPtr(strconv.FormatInt(d.Milliseconds(), 10)) }
	if s.Compacted {
		configs["cleanup.policy"] = kadm.StringPtr("compact")
		if s.MaxCompactionLag > 0 {
			configs["max.compaction.lag.ms"] = ms(s.MaxCompactionLag)
			configs["segment.ms"] = ms(s.MaxCompactionLag)
		}
		return configs
	}
	configs["cleanup.policy"] = kadm.StringPtr("delete")
	switch {
	case s.Retention > 0:
		configs["retention.ms"] = ms(s.Retention)
	case s.Retention < 0:
		configs["retention.ms"] = kadm.StringPtr("-1") // kept forever
	}
	return configs
}

// ErrPartitionMismatch is wrapped by EnsureTopics when an existing topic has another
// partition count than its spec (keys would not be co-partitioned).
var ErrPartitionMismatch = errors.New("partition count mismatch")

// EnsureTopics creates the missing topics of specs (cleanup.policy=compact for compacted
// ones, retention.ms for the others) and checks existing ones. It is idempotent. It returns
// an error naming the topic, wrapping ErrPartitionMismatch, when an existing topic has a
// different partition count. Of opts, only the connection's count (WithTLS, WithSASL).
func EnsureTopics(ctx context.Context, brokers []string, specs []TopicSpec, opts ...Option) error {
	if len(brokers) == 0 {
		return fmt.Errorf("ensure topics: %w", errNoBrokers)
	}
	for _, s := range specs {
		if s.Name == "" || s.Partitions < 1 {
			return fmt.Errorf("ensure topics: invalid spec %q: name and partitions >= 1 required", s.Name)
		}
	}
	cfg, err := newConfig(append([]Option{WithBrokers(brokers)}, opts...))
	if err != nil {
		return fmt.Errorf("ensure topics: %w", err)
	}
	cl, err := kgo.NewClient(cfg.baseOpts()...)
	if err != nil {
		return fmt.Errorf("ensure topics: client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, s := range specs {
		if err := ensureTopic(ctx, adm, s); err != nil {
			return err
		}
	}
	return nil
}

func ensureTopic(ctx context.Context, adm *kadm.Client, s TopicSpec) error {
	check := func() (bool, error) {
		tds, err := adm.ListTopics(ctx, s.Name)
		if err != nil {
			return false, fmt.Errorf("ensure topic %s: list: %w", s.Name, err)
		}
		td, ok := tds[s.Name]
		if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			return false, nil
		}
		if td.Err != nil {
			return false, fmt.Errorf("ensure topic %s: describe: %w", s.Name, td.Err)
		}
		if n := int32(len(td.Partitions)); n != s.Partitions {
			return true, fmt.Errorf("ensure topic %s: has %d partitions, want %d: %w", s.Name, n, s.Partitions, ErrPartitionMismatch)
		}
		return true, nil
	}
	exists, err := check()
	if err != nil || exists {
		return err
	}
	configs := s.configs()
	rf := s.ReplicationFactor
	if rf == 0 {
		rf = -1
	}
	resp, err := adm.CreateTopic(ctx, s.Partitions, rf, configs, s.Name)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("ensure topic %s: create: %w", s.Name, err)
	}
	if errors.Is(err, kerr.TopicAlreadyExists) {
		// Created concurrently by someone else: check it matches.
		_, err = check()
		return err
	}
	return nil
}

// AlignTopicConfigs sets, on the topics of specs that exist, the configuration their spec
// gives (retention, compaction lag) where it differs; the cleanup policy of an existing
// topic is left as it is (changing it would lose or keep data the other way round). It
// returns the topics it changed. Of opts, only the connection's count (WithTLS, WithSASL).
// Run it from one place (idstream topics), not from every process: processes that
// disagree would set the configuration back and forth.
func AlignTopicConfigs(ctx context.Context, brokers []string, specs []TopicSpec, opts ...Option) ([]string, error) {
	cfg, err := newConfig(append([]Option{WithBrokers(brokers)}, opts...))
	if err != nil {
		return nil, fmt.Errorf("align topic configs: %w", err)
	}
	cl, err := kgo.NewClient(cfg.baseOpts()...)
	if err != nil {
		return nil, fmt.Errorf("align topic configs: client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	described, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("align topic configs: describe: %w", err)
	}
	current := map[string]map[string]string{}
	for _, rc := range described {
		if errors.Is(rc.Err, kerr.UnknownTopicOrPartition) {
			continue // absent: EnsureTopics creates it with its configuration
		}
		if rc.Err != nil {
			return nil, fmt.Errorf("align topic configs: describe %s: %w", rc.Name, rc.Err)
		}
		kv := map[string]string{}
		for _, c := range rc.Configs {
			kv[c.Key] = c.MaybeValue()
		}
		current[rc.Name] = kv
	}
	var changed []string
	for _, s := range specs {
		have, ok := current[s.Name]
		if !ok {
			continue
		}
		var alter []kadm.AlterConfig
		for k, v := range s.configs() {
			if k != "cleanup.policy" && have[k] != *v {
				alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: v})
			}
		}
		if len(alter) == 0 {
			continue
		}
		resps, err := adm.AlterTopicConfigs(ctx, alter, s.Name)
		if err == nil {
			for _, r := range resps {
				if r.Err != nil {
					err = r.Err
				}
			}
		}
		if err != nil {
			return changed, fmt.Errorf("align topic configs: %s: %w", s.Name, err)
		}
		changed = append(changed, s.Name)
	}
	return changed, nil
}
