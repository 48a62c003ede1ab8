#!/usr/bin/env bash
# What `npm test` needs besides node_modules, made ready or refused at once (run by `npm test`'s pretest
# step and by .ci/run): the local PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379), started when
# they are down, and Debian's chromium for the page tests, installed with apt-get when it is missing and
# we are root. Exit 0 when all three are ready; otherwise exit 1 with one line saying what is missing and
# how to provide it, before any test runs.
#   CHROMIUM_PATH   the browser the page tests use (default /usr/bin/chromium; nothing is installed for
#                   another path)
#   SKIP_BROWSER_TESTS=1   the page tests are skipped (test/browser/chromium.ts): no browser is needed
set -euo pipefail

log() { printf '==> %s\n' "$*"; }
fail() {
  printf 'test prerequisites: %s\n' "$*" >&2
  exit 1
}
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 not found: $2"; }

# --- services -----------------------------------------------------------------------------------------
need pg_isready "install PostgreSQL (apt-get install -y postgresql) and run it on 127.0.0.1:5432 with trust auth"
need redis-cli "install Redis (apt-get install -y redis-server) and run it on 127.0.0.1:6379"

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  log "PostgreSQL is down: starting it"
  need pg_ctlcluster "PostgreSQL is not answering on 127.0.0.1:5432: start it"
  cluster=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$cluster" ] || fail "PostgreSQL is not answering on 127.0.0.1:5432 and /etc/postgresql has no cluster: start it"
  pg_ctlcluster --skip-systemctl-redirect "$cluster" main start || fail "pg_ctlcluster $cluster main start failed (see above): start PostgreSQL on 127.0.0.1:5432"
fi

if [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null || true)" != "PONG" ]; then
  log "Redis is down: starting it"
  need redis-server "Redis is not answering on 127.0.0.1:6379: start it"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null ||
    fail "redis-server did not start (see above): start Redis on 127.0.0.1:6379"
fi

for i in $(seq 1 60); do
  if pg_isready -q -h 127.0.0.1 -p 5432 && [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null || true)" = "PONG" ]; then
    break
  fi
  [ "$i" -lt 60 ] || fail "PostgreSQL (127.0.0.1:5432) or Redis (127.0.0.1:6379) did not answer within 60 s of starting"
  sleep 1
done
log "PostgreSQL and Redis are up"

# --- browser for the page tests (Debian's chromium; playwright-core drives it) -------------------------
if [ "${SKIP_BROWSER_TESTS:-}" = "1" ]; then
  log "SKIP_BROWSER_TESTS=1: the page tests are skipped, no browser needed"
  exit 0
fi
chromium_path=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ ! -x "$chromium_path" ]; then
  [ "$chromium_path" = /usr/bin/chromium ] || fail "CHROMIUM_PATH=$chromium_path is not an executable file"
  [ "$(id -u)" = 0 ] || fail "/usr/bin/chromium is missing and only root can install it: run 'sudo apt-get install -y chromium' once (or set CHROMIUM_PATH to a Chromium binary)"
  need apt-get "/usr/bin/chromium is missing: install Debian's chromium package"
  log "/usr/bin/chromium is missing: installing Debian's chromium (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed (see above): install chromium (apt-get install -y chromium) when the package mirror answers"
  apt-get install -y -qq chromium >/dev/null || fail "apt-get install chromium failed (see above)"
  [ -x /usr/bin/chromium ] || fail "apt-get installed chromium but /usr/bin/chromium is still missing"
fi
log "$("$chromium_path" --version 2>/dev/null || echo "chromium at $chromium_path")"
