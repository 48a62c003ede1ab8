/**
 * Set up for the tiers that start databases, servers and processes (medium,
 * e2e, reliability, browser; jest.config.js): 30 s per test and hook before
 * jest calls it hung. A start-up takes seconds on a loaded 2-core machine and
 * jest's default is 5 s; `testTimeout` in a project's config is not honoured
 * (jest reads it from the global config only), so each tier sets it here.
 */
jest.setTimeout(30_000);
