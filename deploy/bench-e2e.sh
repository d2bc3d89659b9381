#!/usr/bin/env bash
# bench-e2e: `idstream bench` against an `idstream dev` this script starts on its own data
# dir and ports (so a running `make run` is left alone) and stops afterwards. The bench runs
# as a separate process on the same machine, over HTTP, as integrators' backends do.
#   BENCH_DIR       data dir of the dev service, the corpus and the report (.data/bench-e2e)
#   BENCH_FLOW      id_card, chip_id_card, passport or vehicle_registration (id_card);
#                   chip_id_card signs each session's chip with a development PKI made under
#                   BENCH_DIR/chip-pki, which the dev service started here trusts
#   BENCH_SESSIONS  sessions per load level (20)
#   BENCH_LEVELS    sessions in flight per level, comma-separated (1,2,4); the first level
#                   at 1 gives the compute limit
#   BENCH_RATES     arrival rates per second instead of BENCH_LEVELS (open loop), optional
set -euo pipefail
BIN=${BIN:-bin/idstream}
DIR=${BENCH_DIR:-.data/bench-e2e}
FLOW=${BENCH_FLOW:-id_card}
SESSIONS=${BENCH_SESSIONS:-20}
LEVELS=${BENCH_LEVELS:-1,2,4}
EDGE=127.0.0.1:18080

if curl -fsS "http://$EDGE/readyz" > /dev/null 2>&1; then
  echo "something already answers on $EDGE: stop it first (a bench of it would measure it)"; exit 1
fi
mkdir -p "$DIR"
rm -rf "$DIR/dev"
CHIP=()
TRUST=()
if [ "$FLOW" = chip_id_card ]; then
  "$BIN" chip-pki "$DIR/chip-pki"
  CHIP=(--chip-pki "$DIR/chip-pki")
  TRUST=(--csca-dir "$DIR/chip-pki/csca")
fi
"$BIN" dev --data-dir "$DIR/dev" --edge-addr "$EDGE" --consent-addr 127.0.0.1:18081 \
  --kafka-addr 127.0.0.1:19092 --registry-addr 127.0.0.1:18082 --clickhouse-addr 127.0.0.1:19000 \
  --metrics-addr 127.0.0.1:19464 \
  ${TRUST[@]+"${TRUST[@]}"} > "$DIR/dev.log" 2>&1 &
DEV=$!
trap 'kill $DEV 2>/dev/null; wait $DEV 2>/dev/null || true' EXIT
ready=""
for _ in $(seq 1 240); do
  curl -fsS "http://$EDGE/readyz" > /dev/null 2>&1 && { ready=1; break; }
  kill -0 $DEV 2>/dev/null || { echo "idstream dev stopped; its log:"; tail -n 30 "$DIR/dev.log"; exit 1; }
  sleep 0.5
done
[ -n "$ready" ] || { echo "idstream dev was not ready within 120 s; its log:"; tail -n 30 "$DIR/dev.log"; exit 1; }
BUILD=()
[ -f "$DIR/corpus/corpus.json" ] || BUILD=(--build 2 --seed 4242)
LOAD=(--concurrency "$LEVELS")
[ -z "${BENCH_RATES:-}" ] || LOAD=(--rate "$BENCH_RATES")
"$BIN" bench --url "http://$EDGE" --metrics http://127.0.0.1:19464/metrics --data-dir "$DIR/dev" --corpus "$DIR/corpus" "${BUILD[@]}" \
  --flow "$FLOW" ${CHIP[@]+"${CHIP[@]}"} --sessions "$SESSIONS" "${LOAD[@]}" --out "$DIR/report"
