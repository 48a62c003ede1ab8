import { DynamicModule, Global, Module } from '@nestjs/common';
import { WebhookDispatcher } from './webhook.dispatcher';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';
import { WebhooksRepository } from './webhooks.repository';

/**
 * Webhooks: `forRoot(env)` (the API) adds POST/GET/DELETE /api/webhooks;
 * `forWorker(env)` only the dispatcher, so verification workers can record
 * `verification.batch.completed` (both deliver: webhook.dispatcher.ts). Global: any service may inject
 * {@link WebhookDispatcher} and call `emit`.
 */
@Global()
@Module({})
export class WebhooksModule {
  // `env` is kept for the callers' shape; the dispatcher reads its settings from ConfigService.
  static forRoot(_env: Record<string, string | undefined> = process.env): DynamicModule {
    return WebhooksModule.build(true);
  }

  static forWorker(_env: Record<string, string | undefined> = process.env): DynamicModule {
    return WebhooksModule.build(false);
  }

  private static build(http: boolean): DynamicModule {
    return {
      module: WebhooksModule,
      controllers: http ? [WebhooksController] : [],
      providers: [WebhookDispatcher, WebhooksRepository, ...(http ? [WebhooksService] : [])],
      exports: [WebhookDispatcher],
    };
  }
}
