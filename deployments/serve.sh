#!/usr/bin/env bash
# Start a local Prefect server and a process worker, and register provider-eval's deployments.
# Ctrl-C stops both. Prefect's state (SQLite database, settings) lives under this checkout
# (.prefect/), never in ~/.prefect, so it cannot mix with another Prefect on the machine.
# Settings: PREFECT_PORT (default 4200); PROVIDER_EVAL_PREFECT_HOME (default ./.prefect);
# PROVIDER_EVAL_SHARED_API_URL=http://host:4200/api uses that server instead of starting one
# (docs/production.md); PROVIDER_EVAL_WAREHOUSE moves the published warehouse.
set -euo pipefail
cd "$(dirname "$0")/.."
export PROVIDER_EVAL_HOME="$PWD"
BIN="$PWD/.venv/bin"
PORT="${PREFECT_PORT:-4200}"
export PREFECT_HOME="${PROVIDER_EVAL_PREFECT_HOME:-$PWD/.prefect}"
mkdir -p "$PREFECT_HOME"
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1
# Absolute, so a run's working directory never decides where the warehouse is.
export PROVIDER_EVAL_WAREHOUSE="${PROVIDER_EVAL_WAREHOUSE:-$PWD/warehouse/provider_eval.duckdb}"

server=
if [ -n "${PROVIDER_EVAL_SHARED_API_URL:-}" ]; then
  export PREFECT_API_URL="$PROVIDER_EVAL_SHARED_API_URL"
else
  export PREFECT_API_URL="http://127.0.0.1:${PORT}/api"
  "$BIN/prefect" server start --host 127.0.0.1 --port "$PORT" &
  server=$!
fi
trap 'kill ${server:-} ${worker:-} 2>/dev/null; wait' EXIT INT TERM
healthy() { "$BIN/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$PREFECT_API_URL/health" 2>/dev/null; }
for _ in $(seq 1 120); do healthy && break; sleep 1; done
healthy || { echo "Prefect server not reachable at $PREFECT_API_URL" >&2; exit 1; }

"$BIN/prefect" work-pool create provider-eval --type process --overwrite >/dev/null
"$BIN/prefect" --no-prompt deploy --all --prefect-file deployments/prefect.yaml
"$BIN/prefect" worker start --pool provider-eval &
worker=$!
echo "Prefect UI: ${PREFECT_API_URL%/api}  —  refresh-pricing runs every 6 hours (UTC); state in $PREFECT_HOME."
echo "Run one now: PREFECT_API_URL=$PREFECT_API_URL $BIN/prefect deployment run refresh-pricing/refresh-pricing"
wait
