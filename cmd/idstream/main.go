// Command idstream is the single binary of the service. Its subcommands run the whole
// service in one process (dev), or one piece of it against an external Kafka cluster
// (edge, process <group>, topics).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

const usage = `idstream — self-hosted identity verification over Kafka

Usage:
  idstream dev [flags]              everything in one process on an embedded broker (make run)
  idstream broker [flags]           the embedded Kafka-protocol broker alone, persisted under --data-dir (chaos)
  idstream edge [flags]             the REST edge against KAFKA_BROKERS
  idstream process <group> [flags]  one processor group against KAFKA_BROKERS (session, decision, quality, ocr,
                                    chip, liveness, facematch, fraud, erasure-index, erasure, erasure-blobs)
  idstream consent [flags]          the consent (CMP) API against KAFKA_BROKERS
  idstream registry-sandbox [flags] the sandbox identity registry with its test personas
  idstream sink <name> [flags]      one sink (webhook, clickhouse) against KAFKA_BROKERS
  idstream migrate [flags]          apply the ClickHouse migrations at --clickhouse-addr
  idstream topics [flags]           create or check the topics on KAFKA_BROKERS
  idstream probe URL                exit 0 if URL answers 2xx within 3 s (a container's health check)
  idstream sample-image [--kind K] [--seed N]  write a synthetic document JPEG to stdout (for trying the API)
  idstream eval --corpus DIR [--build N]  run a labelled corpus through the pipeline and print its figures (make eval)
  idstream bench [--flow F] [--concurrency 1,2,4 | --rate R,…]  drive whole sessions through a running service
                                    and print throughput, latencies and CPU per session (make bench-e2e)
  idstream chaos [flags]            run the production shape as separate processes, kill them at random while
                                    sessions of every flow run, and check exactly-once at the end (make chaos)
  idstream chip-pki DIR             write a development CSCA and document signer (bench --flow chip_id_card;
                                    the service trusts it only with --csca-dir DIR/csca)
  idstream topology [--format text|mermaid]  print the pipeline: every component and the topics it reads and writes
  idstream version

Every flag is also an IDSTREAM_* environment variable (--data-dir = IDSTREAM_DATA_DIR).
Run 'idstream <command> -h' for the flags of a command.
`

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ensureSingleThreadedOpenMP()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: logLevel()}))
	var err error
	switch args[0] {
	case "dev":
		err = runDev(ctx, args[1:], stdout, logger)
	case "broker":
		err = runBroker(ctx, args[1:], stdout)
	case "edge":
		err = runEdge(ctx, args[1:], stdout, logger)
	case "process":
		err = runProcess(ctx, args[1:], logger)
	case "consent":
		err = runConsent(ctx, args[1:], stdout, logger)
	case "registry-sandbox":
		err = runRegistrySandbox(ctx, args[1:], stdout, logger)
	case "migrate":
		err = runMigrate(ctx, args[1:], stdout, logger)
	case "sink":
		err = runSink(ctx, args[1:], logger)
	case "probe":
		err = runProbe(ctx, args[1:], stdout)
	case "topics":
		err = runTopics(ctx, args[1:], stdout, logger)
	case "sample-image":
		err = runSampleImage(args[1:], stdout)
	case "eval":
		err = runEval(ctx, args[1:], stdout, stderr, logger)
	case "bench":
		err = runBench(ctx, args[1:], stdout, stderr)
	case "chaos":
		err = runChaos(ctx, args[1:], stdout, stderr)
	case "chip-pki":
		err = runChipPKI(args[1:], stdout)
	case "topology":
		err = runTopology(args[1:], stdout)
	case "version":
		fmt.Fprintln(stdout, version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "idstream: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, errUsage) {
			return 2
		}
		fmt.Fprintf(stderr, "idstream %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// ensureSingleThreadedOpenMP restarts the process with OMP_THREAD_LIMIT=1 when it is unset:
// Tesseract is about 10x faster single-threaded on small machines (PLATFORM.md), and OpenMP
// reads the variable only when the library loads, before main runs. An operator's own value
// is kept.
func ensureSingleThreadedOpenMP() {
	if _, ok := os.LookupEnv("OMP_THREAD_LIMIT"); ok {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	env := append(os.Environ(), "OMP_THREAD_LIMIT=1")
	_ = syscall.Exec(self, os.Args, env) // returns only on failure: then run as we are
}

func logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(os.Getenv("IDSTREAM_LOG_LEVEL"))); err != nil {
		return slog.LevelInfo
	}
	return l
}
