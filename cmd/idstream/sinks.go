package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idstream/idstream/internal/chserver"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
	"github.com/idstream/idstream/sinks/webhook"
	"github.com/idstream/idstream/stream"
)

// allSinks is every sink this binary can run.
var allSinks = []string{"webhook", "clickhouse"}

// startSink starts one sink by name.
func (s *Service) startSink(name string) error {
	switch name {
	case "webhook":
		sink, err := webhook.NewSink(webhook.Config{
			Brokers:  s.brokers,
			Tenants:  s.tenants,
			Codec:    s.codec,
			Producer: s.producer,
			Logger:   s.log.With("sink", "webhook"),
			Metrics:  s.metrics,
			KgoOpts:  s.kgoOpts,
		})
		if err != nil {
			return fmt.Errorf("webhook sink: %w", err)
		}
		s.spawn("sink webhook", sink.Run)
	case "clickhouse":
		if err := s.startClickHouseSink(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown sink %q (known: %s)", name, strings.Join(allSinks, ", "))
	}
	return nil
}

// startClickHouseSink connects to ClickHouse at --clickhouse-addr (in dev, a server this
// process starts under the data dir), applies the migrations, and runs the sink.
func (s *Service) startClickHouseSink() error {
	secret, err := s.tokenSecret()
	if err != nil {
		return err
	}
	addr := s.cfg.ClickHouseAddr
	if s.cfg.StartClickHouse {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("--clickhouse-addr: %w", err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return fmt.Errorf("--clickhouse-addr: %w", err)
		}
		if s.clickhouse, err = chserver.Start(s.ctx, chserver.WithDataDir(filepath.Join(s.cfg.DataDir, "clickhouse")), chserver.WithTCPPort(p)); err != nil {
			return fmt.Errorf("clickhouse server: %w", err)
		}
		addr = s.clickhouse.Addr()
	}
	conn, err := chsink.Dial(s.ctx, addr)
	if err != nil {
		return fmt.Errorf("clickhouse: %w", err)
	}
	if err := chsink.Migrate(s.ctx, conn); err != nil {
		return fmt.Errorf("clickhouse migrations: %w", err)
	}
	sink, err := chsink.New(conn, s.codec, chsink.WithIDHashKey(secret), chsink.WithLogger(s.log.With("sink", "clickhouse")))
	if err != nil {
		return fmt.Errorf("clickhouse sink: %w", err)
	}
	r, err := stream.NewBatchRunner(sink.Group(), s.runtimeOpts("clickhouse")...)
	if err != nil {
		return fmt.Errorf("clickhouse sink: %w", err)
	}
	s.spawn("sink clickhouse", r.Run)
	s.chAddr = addr
	return nil
}
