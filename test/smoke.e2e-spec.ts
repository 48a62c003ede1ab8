import 'reflect-metadata';
import { Controller, Get, INestApplication, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';

// Foundation smoke: the framework stack (Nest 11 + express 5 + terminus,
// typeorm 1.x + better-sqlite3) loads and works under jest's CommonJS runtime.
// Self-contained on purpose (independent of AppModule / src/health, which the
// app's own e2e tests cover).
@Controller('health')
class SmokeHealthController {
  constructor(private readonly health: HealthCheckService) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }
}

@Module({ imports: [TerminusModule], controllers: [SmokeHealthController] })
class SmokeModule {}

describe('smoke: stack loads', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [SmokeModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('GET /health -> 200', async () => {
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body.status).toBe('ok');
  });

  it('typeorm 1.x + better-sqlite3 :memory: runs select 1', async () => {
    const ds = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await ds.initialize();
    try {
      const rows = await ds.query<Array<{ x: number }>>('select 1 as x');
      expect(rows).toEqual([{ x: 1 }]);
    } finally {
      await ds.destroy();
    }
  });
});
