import 'reflect-metadata';
import { ConfigService } from '@nestjs/config';
import { createApp } from './app.factory';
import { AppConfig } from './config/configuration';

async function bootstrap(): Promise<void> {
  const app = await createApp();
  const port = app.get(ConfigService<AppConfig, true>).get('PORT', { infer: true });
  await app.listen(port);
  process.stdout.write(`aer1-ledger listening on http://localhost:${port} (OpenAPI at /docs)\n`);
}

bootstrap().catch((e: unknown) => {
  process.stderr.write(`aer1-ledger: cannot start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
