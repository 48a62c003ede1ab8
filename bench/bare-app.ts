/**
 * The limit of the HTTP stack itself (issue 34): a bare Nest application with
 * one JSON POST route, `POST /api/receipts`, that parses the body (the
 * platform's own JSON parser) and answers 201 `{"ok":true}`. No guards,
 * interceptors, filters, helmet or logging: what Nest and the platform cost
 * per request, nothing of ours.
 *
 *   node bare-app.js express|fastify PORT
 *
 * Prints `listening` once it accepts connections.
 */
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

@Controller()
class BareController {
  /** 201 `{"ok":true}` once the JSON body is parsed (a body that is not an object is answered the same). */
  @Post('api/receipts')
  @HttpCode(201)
  create(@Body() body: unknown): { ok: boolean } {
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
  const [platform, port] = process.argv.slice(2);
  if (platform !== 'express' && platform !== 'fastify') throw new Error('usage: bare-app.js express|fastify PORT');
  const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
  const app = await NestFactory.create(BareModule, adapter, { logger: ['error'] });
  await app.listen(Number(port), '127.0.0.1');
  process.stdout.write('listening\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`bare-app: cannot start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
