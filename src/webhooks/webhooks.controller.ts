import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Principal } from '../auth/api-keys.service';
import { Caller } from '../auth/caller.decorator';
import { Roles } from '../auth/roles.guard';
import { JsonBody } from '../common/json-body.decorator';
import { ApiAnswer, ApiCreated, ApiErrors, ApiJsonBody, arrayOf, ref, WRITE_ERRORS } from '../common/openapi';
import { RawJson } from '../common/raw-json';
import { PublicUrls } from '../common/urls';
import { WebhooksService } from './webhooks.service';

/** Webhook subscriptions for compliance teams (deliveries: webhook.dispatcher.ts). */
@ApiTags('webhooks')
@ApiBearerAuth()
@Controller('api/webhooks')
@Roles('compliance')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly urls: PublicUrls,
  ) {}

  /**
   * Body `{"url", "events": [...]}`: subscribe `url` to `coverage.report.issued`,
   * `verification.batch.completed` and/or `ledger.checkpoint.witness_lag`.
   * 201 with the subscription and its signing secret (`whsec_...`, shown only
   * here); `Location`: its URL. Errors: see {@link WebhooksService.create}.
   */
  @Post()
  @ApiOperation({ operationId: 'createWebhook', summary: 'Subscribe a URL to ledger events, signed by Standard Webhooks (compliance)' })
  @ApiJsonBody('CreateWebhook')
  @ApiCreated('WebhookCreated', 'subscribed; the signing secret is shown only in this answer')
  @ApiErrors([...WRITE_ERRORS, 409], { 400: '`invalid_body`.', 409: '`webhook_limit_key` (WEBHOOK_MAX_PER_KEY), `webhook_limit_owner` (WEBHOOK_MAX_PER_OWNER).', 422: '`invalid_webhook_url`, `url_has_userinfo`, `unknown_webhook_event`, `webhook_address_refused`.' })
  async create(@JsonBody() body: RawJson, @Caller() caller: Principal, @Res({ passthrough: true }) res: FastifyReply) {
    const w = await this.webhooks.create(body.value, caller);
    res.status(201).header('Location', this.urls.path(`/api/webhooks/${w.id}`));
    return w;
  }

  /** The caller's subscriptions (its owner's; all for an admin), oldest first, without secrets. */
  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: 'List your webhook subscriptions (compliance)' })
  @ApiAnswer(200, arrayOf(ref('Webhook')), 'the subscriptions this key may manage, oldest first')
  @ApiErrors([401, 403])
  list(@Caller() caller: Principal) {
    return this.webhooks.list(caller);
  }

  /** Delete a subscription; nothing more is delivered to it. 404 `not_found`, 403 `not_owner`. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWebhook', summary: 'Delete a webhook subscription (its owner)' })
  @ApiResponse({ status: 204, description: 'deleted' })
  @ApiErrors([401, 403, 404])
  async delete(@Param('id') id: string, @Caller() caller: Principal): Promise<void> {
    await this.webhooks.delete(id, caller);
  }
}
