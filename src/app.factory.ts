import { INestApplication } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger, PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import { AppModule } from './app.module';
import { ApiKeysService } from './auth/api-keys.service';
import { ErrorFilter } from './common/error.filter';
import { frameworkErrors, hardenServer, rejectRepeatedQuery, securityHeaderHook } from './common/http-hardening';
import { deferBodies, ReadBodyInterceptor } from './common/raw-body';
import { requestLogHook } from './common/request-log';
import { addSchemas, operationIdFactory } from './common/openapi';
import { API_SCHEMAS } from './common/api-schemas';
import { AppConfig, trustProxy, validateConfig } from './config/configuration';
import { checkLogKeyConfig } from './log/log-key';
import { LedgerMetrics } from './metrics/ledger-metrics';
import { httpMetrics } from './metrics/http-metrics';
import { dashboardAuth } from './verification-queue/queue-dashboard';

/**
 * Fastify's options: the proxies to trust (TRUST_PROXY), routes matched as
 * Express matched them (any case, with or without a trailing slash, path
 * parameters of any length), no logger of its own (requests are logged by
 * pino-http over the one logger, src/common/request-log.ts) and no body limit of its own
 * (bodies are read after the guards, src/common/raw-body.ts).
 */
function fastifyAdapter(trust: boolean | number | string[]): FastifyAdapter {
  return new FastifyAdapter({
    trustProxy: trust,
    logger: false,
    keepAliveTimeout: 5_000, // Node's default, as the Express server had
    frameworkErrors: frameworkErrors(),
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 65_535 },
  });
}

/**
 * Build the application exactly as `npm start` runs it: raw bodies (kept
 * byte for byte, limited to BODY_LIMIT_BYTES, 413 beyond without reading the
 * rest, read only after the guards: 401/403 come from the headers), one
 * error filter, security headers, repeated query parameters refused,
 * header/request timeouts, OpenAPI at /docs. Initialized (`init()` was
 * called; calling it again does nothing).
 */
export async function createApp(env: Record<string, string | undefined> = process.env): Promise<INestApplication> {
  const cfg = validateConfig(env); // fail before Nest starts, with one readable line, on a bad environment
  checkLogKeyConfig({ keyFile: cfg.LEDGER_SIGNING_KEY_FILE, origin: cfg.LEDGER_ORIGIN, databaseUrl: cfg.DATABASE_URL });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register(env), fastifyAdapter(trustProxy(cfg.TRUST_PROXY)), { bodyParser: false, bufferLogs: true, abortOnError: false });
  app.useLogger(app.get(Logger));
  const config = app.get(ConfigService<AppConfig, true>);
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalInterceptors(new ReadBodyInterceptor(config.get('BODY_LIMIT_BYTES', { infer: true })));
  const fastify = app.getHttpAdapter().getInstance();
  deferBodies(fastify);
  // Nest's named wildcards (`tile/*path`, path-to-regexp 8, as the OpenAPI document names them) are find-my-way's `*`.
  fastify.addHook('onRoute', (route) => {
    route.url = route.url.replace(/\/\*[A-Za-z_$][\w$]*$/, '/*');
  });
  // Hooks run in this order for every request, unknown routes included.
  const metrics = app.get(LedgerMetrics);
  if (metrics.enabled) httpMetrics(fastify, metrics); // first: it sees every answer, refusals included
  const requestLog = requestLogHook(app.get(PARAMS_PROVIDER_TOKEN));
  if (requestLog) fastify.addHook('onRequest', requestLog);
  fastify.addHook('onRequest', securityHeaderHook());
  fastify.addHook('onRequest', rejectRepeatedQuery());
  if (cfg.REDIS_URL) fastify.addHook('onRequest', dashboardAuth(app.get(ApiKeysService))); // Bull Board at /queues
  hardenServer(app.getHttpServer());
  const doc = new DocumentBuilder()
    .setTitle('AER-1 audit ledger')
    .setDescription('Execution receipts, hash-chained timelines, endpoint commitments, workflow receipts, expected-action plans and coverage reports (draft-zambo-aer1-07). Reads are public; writes need an API key.')
    .setVersion('0.1.0')
    // Opaque keys (`aer1_...`), not JWTs: no bearerFormat.
    .addSecurity('bearer', { type: 'http', scheme: 'bearer', description: 'An API key `aer1_...` (opaque), as `Authorization: Bearer <key>`.' })
    .build();
  SwaggerModule.setup('docs', app, () => addSchemas(SwaggerModule.createDocument(app, doc, { operationIdFactory }), ...API_SCHEMAS));
  app.enableShutdownHooks();
  // Fastify routes requests only once its plugins and routes have loaded (ready): the app is initialized here, so
  // that its HTTP server answers as soon as it listens, whoever starts it (app.listen(), or the server itself).
  await app.init();
  await fastify.ready();
  return app;
}
