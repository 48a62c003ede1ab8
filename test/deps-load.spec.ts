// Proves every runtime/test dependency loads under jest's CommonJS runtime
// (i.e. none of them is ESM-only). Cheap; keep it.
const MODULES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
  'fastify',
  '@fastify/static',
  '@bull-board/fastify',
  'accepts',
  'body-parser',
  '@nestjs/config',
  '@nestjs/swagger',
  '@nestjs/typeorm',
  '@nestjs/throttler',
  '@nestjs/terminus',
  '@nestjs/bullmq',
  '@nestjs/testing',
  'nestjs-pino',
  'pino',
  'pino-http',
  'typeorm',
  'better-sqlite3',
  'pg',
  'bullmq',
  'ioredis',
  'class-validator',
  'class-transformer',
  'reflect-metadata',
  'rxjs',
  'commander',
  'cli-progress',
  'fast-check',
  'supertest',
  // nostr-tools 2.19.x: 2.23 and later need @noble/curves 2, which is ESM only (issue 33).
  'nostr-tools',
  'ws',
];

describe('dependencies load under CommonJS (jest)', () => {
  it.each(MODULES)('require(%s)', (name) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(require(name)).toBeDefined();
  });

  it('fast-check runs a property', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fc = require('fast-check') as typeof import('fast-check');
    fc.assert(fc.property(fc.integer(), fc.integer(), (a, b) => a + b === b + a));
  });

  it('commander parses argv', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Command } = require('commander') as typeof import('commander');
    const opts = new Command().option('-n, --num <n>').parse(['node', 'x', '-n', '5']).opts();
    expect(opts.num).toBe('5');
  });
});
