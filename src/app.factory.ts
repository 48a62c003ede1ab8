import { INestApplication } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger, PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import { AppModule } from './app.module';
import { ErrorFilter } from './common/error.filter';
import { hardenServer, rejectRepeatedQuery, securityHeaders } from './common/http-hardening';
import { ReadBodyInterceptor } from './common/raw-body';
import { requestLogging } from './common/request-log';
import { addSchemas, operationIdFactory } from './common/openapi';
import { API_SCHEMAS } from './common/api-schemas';
import { AppConfig, trustProxy, validateConfig } from './config/configuration';
import { checkLogKeyConfig } from './log/log-key';
import { LedgerMetrics } from './metrics/ledger-metrics';
import { httpMetrics } from './metrics/http-metrics';

/**
 * Build the application exactly as `npm start` runs it: raw bodies (kept
 * byte for byte, limited to BODY_LIMIT_BYTES, 413 beyond without reading the
 * rest, read only after the guards: 401/403 come from the headers), one
 * error filter, security headers, repeated query parameters refused,
 * header/request timeouts, OpenAPI at /docs.
 */
export async function createApp(env: Record<string, string | undefined> = process.env): Promise<INestApplication> {
  const cfg = validateConfig(env); // fail before Nest starts, with one readable line, on a bad environment
  checkLogKeyConfig({ keyFile: cfg.LEDGER_SIGNING_KEY_FILE, origin: cfg.LEDGER_ORIGIN, databaseUrl: cfg.DATABASE_URL });
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(env), { bodyParser: false, bufferLogs: true, abortOnError: false });
  app.useLogger(app.get(Logger));
  const config = app.get(ConfigService<AppConfig, true>);
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalInterceptors(new ReadBodyInterceptor(config.get('BODY_LIMIT_BYTES', { infer: true })));
  app.set('trust proxy', trustProxy(config.get('TRUST_PROXY', { infer: true })));
  app.disable('x-powered-by');
  const metrics = app.get(LedgerMetrics);
  if (metrics.enabled) app.use(httpMetrics(metrics)); // first: it sees every answer, refusals included
  const requestLog = requestLogging(app.get(PARAMS_PROVIDER_TOKEN));
  if (requestLog) app.use(requestLog);
  app.use(securityHeaders());
  app.use(rejectRepeatedQuery());
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
  return app;
}
