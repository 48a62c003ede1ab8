import { DynamicModule, Global, Module } from '@nestjs/common';
import { readQueueOptions } from '../verification-queue/queue-options';
import { WEBHOOK_QUEUE_OPTIONS, WebhookDispatcher } from './webhook.dispatcher';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/**
 * Webhooks: `forRoot(env)` (the API) adds POST/GET/DELETE /api/webhooks;
 * `forWorker(env)` only the dispatcher, so verification workers can emit
 * `verification.batch.completed`. Global: any service may inject
 * {@link WebhookDispatcher} and call `emit`.
 */
@Global()
@Module({})
export class WebhooksModule {
  static forRoot(env: Record<string, string | undefined> = process.env): DynamicModule {
    return WebhooksModule.build(env, true);
  }

  static forWorker(env: Record<string, string | undefined> = process.env): DynamicModule {
    return WebhooksModule.build(env, false);
  }

  private static build(env: Record<string, string | undefined>, http: boolean): DynamicModule {
    const q = readQueueOptions(env);
    return {
      module: WebhooksModule,
      controllers: http ? [WebhooksController] : [],
      providers: [{ provide: WEBHOOK_QUEUE_OPTIONS, useValue: { redisUrl: q.redisUrl, prefix: q.prefix } }, WebhookDispatcher, ...(http ? [WebhooksService] : [])],
      exports: [WebhookDispatcher],
    };
  }
}
