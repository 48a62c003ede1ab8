#!/usr/bin/env bash
# `npm test` (after its pretest: prerequisites and build). Two passes, both always run; exits non-zero if
# either failed, so every failing suite is reported:
#   1. unit, medium, e2e, reliability, browser: two suites at a time (each suite has its own databases,
#      Redis prefix and ports);
#   2. reliability-alone: one suite at a time, the reliability suites whose checks need the machine to
#      themselves (latency bounds, races against server-side time limits; ALONE in jest.config.js).
# Arguments are passed to both passes (e.g. a test path pattern).
set -u
cd "$(dirname "$0")/.."
status=0
# Narrowed by arguments, a pass may hold no suite: that is not a failure then.
narrowed=(); [ $# -gt 0 ] && narrowed=(--passWithNoTests)
npx jest --maxWorkers=2 --selectProjects unit medium e2e reliability browser "${narrowed[@]}" "$@" || status=1
npx jest --runInBand --selectProjects reliability-alone "${narrowed[@]}" "$@" || status=1
exit $status
