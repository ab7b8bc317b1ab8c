#!/usr/bin/env bash
# Start a local Prefect server and a process worker, and register provider-eval's deployments.
# Ctrl-C stops both. Settings: PREFECT_PORT (default 4200), PREFECT_HOME (default ~/.prefect).
set -euo pipefail
cd "$(dirname "$0")/.."
export PROVIDER_EVAL_HOME="$PWD"
BIN="$PWD/.venv/bin"
PORT="${PREFECT_PORT:-4200}"
export PREFECT_API_URL="http://127.0.0.1:${PORT}/api"
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1

"$BIN/prefect" server start --host 127.0.0.1 --port "$PORT" &
server=$!
trap 'kill $server ${worker:-} 2>/dev/null; wait' EXIT INT TERM
healthy() { "$BIN/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$PREFECT_API_URL/health" 2>/dev/null; }
for _ in $(seq 1 120); do healthy && break; sleep 1; done
healthy || { echo "Prefect server did not start on port $PORT" >&2; exit 1; }

"$BIN/prefect" work-pool create provider-eval --type process --overwrite >/dev/null
"$BIN/prefect" --no-prompt deploy --all --prefect-file deployments/prefect.yaml
"$BIN/prefect" worker start --pool provider-eval &
worker=$!
echo "Prefect UI: http://127.0.0.1:${PORT}  —  refresh-pricing runs every 6 hours (UTC)."
echo "Run one now: PREFECT_API_URL=$PREFECT_API_URL $BIN/prefect deployment run refresh-pricing/refresh-pricing"
wait
