package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/idstream/idstream/internal/chserver"
	"github.com/idstream/idstream/processors/topology"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
	"github.com/idstream/idstream/sinks/webhook"
	"github.com/idstream/idstream/stream"
)

// startWebhookSink runs the webhook sink: its trigger and delivery groups.
func (s *Service) startWebhookSink(topology.Node) error {
	tenants, producer, err := s.shared()
	if err != nil {
		return err
	}
	sink, err := webhook.NewSink(webhook.Config{
		Runtime:    append(s.runtimeOpts("webhook"), stream.WithLogger(s.log.With("sink", "webhook"))),
		Tenants:    tenants,
		Codec:      s.codec,
		Producer:   producer,
		Logger:     s.log.With("sink", "webhook"),
		Schedule:   webhook.Schedule(s.cfg.WebhookRetries), // nil: the default
		Registerer: s.reg,
	})
	if err != nil {
		return err
	}
	s.spawn("sink webhook", sink.Run)
	return nil
}

// startClickHouseSink connects to ClickHouse at --clickhouse-addr (in dev, a server this
// process starts under the data dir), applies the migrations, and runs the sink.
func (s *Service) startClickHouseSink(topology.Node) error {
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
	conn, err := dialClickHouse(s.ctx, addr, s.cfg.Conn, clickHouseWait, s.log)
	if err != nil {
		return fmt.Errorf("clickhouse: %w", err)
	}
	if err := chsink.Migrate(s.ctx, conn); err != nil {
		return fmt.Errorf("clickhouse migrations: %w", err)
	}
	sink, err := chsink.New(conn, s.codec, chsink.WithIDHashKey(secret), chsink.WithLogger(s.log.With("sink", "clickhouse")))
	if err != nil {
		return err
	}
	r, err := stream.NewBatchRunner(sink.Group(), s.runtimeOpts("clickhouse")...)
	if err != nil {
		return err
	}
	s.spawn("sink clickhouse", r.Run)
	s.chAddr = addr
	return nil
}
