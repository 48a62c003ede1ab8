#!/usr/bin/env bash
# The README's first command, `npm ci && npm start`, serves with no setup: starts what `npm start` runs
# after its build (node dist/src/main.js) with no configuration at all (an empty environment but PATH and
# HOME, so the embedded default: SQLite in ./data/) in an empty temp folder, on a free port, and waits for
# GET /health to answer 200 and for ./data/ledger.sqlite to exist. Then stops it (SIGTERM, SIGKILL after
# 10 s) and removes the folder. Exit 0 when it served within START_TIMEOUT_S (default 90) seconds; exit 1
# otherwise, with the server's output. Run by .ci/run after the build.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
main="$repo/dist/src/main.js"
[ -f "$main" ] || { echo "check-start: $main is missing: run npm run build first" >&2; exit 1; }
timeout_s=${START_TIMEOUT_S:-90}

dir=$(mktemp -d)
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
(cd "$dir" && exec env -i PATH="$PATH" HOME="${HOME:-/root}" PORT="$port" node "$main") >"$dir/server.log" 2>&1 &
pid=$!

stop() {
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop
  rm -rf "$dir"
}
trap cleanup EXIT

started=$(date +%s)
while :; do
  code=$(curl -s -o "$dir/health.json" -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/health" || true)
  if [ "$code" = 200 ] && [ -f "$dir/data/ledger.sqlite" ]; then
    echo "check-start: node dist/src/main.js served GET /health 200 on the embedded default (./data/ledger.sqlite) after $(($(date +%s) - started)) s: $(cat "$dir/health.json")"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" && rc=0 || rc=$?
    echo "check-start: node dist/src/main.js exited ($rc) before GET /health answered 200; its output:" >&2
    cat "$dir/server.log" >&2
    exit 1
  fi
  if [ $(($(date +%s) - started)) -ge "$timeout_s" ]; then
    echo "check-start: GET /health did not answer 200 within ${timeout_s} s (last: ${code:-no answer}); the server's output:" >&2
    cat "$dir/server.log" >&2
    exit 1
  fi
  sleep 0.5
done
