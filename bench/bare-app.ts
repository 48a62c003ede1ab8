/**
 * The limit of the HTTP stack itself (issue 34): a bare Nest application with
 * one JSON POST route, `POST /api/receipts`, that parses the body (the
 * platform's own JSON parser) and answers 201 `{"ok":true}`. No guards,
 * interceptors, filters, helmet or logging: what Nest and the platform cost
 * per request, nothing of ours.
 *
 *   node bare-app.js express|fastify PORT [POSTGRES_URL]
 *
 * With POSTGRES_URL the route also writes each body, durably, before it
 * answers: one INSERT of the body's JSON text into a table of its own, in its
 * own transaction (autocommit, the server's synchronous_commit) on a pool of
 * 10 connections (TypeORM's default for the service): the cheapest durable
 * single write through the same stack, the floor of what a PostgreSQL write
 * costs on this machine.
 *
 * Prints `listening` once it accepts connections.
 */
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Pool } from 'pg';

/** Set when a POSTGRES_URL is given: each body is inserted before the answer. */
let pool: Pool | null = null;

@Controller()
class BareController {
  /** 201 `{"ok":true}` once the JSON body is parsed (and, with a pool, inserted and committed). */
  @Post('api/receipts')
  @HttpCode(201)
  async create(@Body() body: unknown): Promise<{ ok: boolean }> {
    if (pool) await pool.query('INSERT INTO bare_writes (data) VALUES ($1)', [JSON.stringify(body)]);
    return { ok: typeof body === 'object' && body !== null };
  }

  /** 200 `{"status":"ok"}`: the bench waits for it. */
  @Get('health')
  health(): { status: string } {
    return { status: 'ok' };
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

async function main(): Promise<void> {
  const [platform, port, postgresUrl] = process.argv.slice(2);
  if (platform !== 'express' && platform !== 'fastify') throw new Error('usage: bare-app.js express|fastify PORT [POSTGRES_URL]');
  if (postgresUrl) {
    pool = new Pool({ connectionString: postgresUrl, max: 10 });
    await pool.query('CREATE TABLE IF NOT EXISTS bare_writes (n BIGSERIAL PRIMARY KEY, data TEXT NOT NULL)');
  }
  const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
  const app = await NestFactory.create(BareModule, adapter, { logger: ['error'] });
  await app.listen(Number(port), '127.0.0.1');
  process.stdout.write('listening\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`bare-app: cannot start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
