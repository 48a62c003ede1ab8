/** Request and answer schemas of webhook subscriptions (shapes of WebhooksService). */
import { arrayOf, nullable, obj, Schema } from '../../common/openapi';
import { WEBHOOK_EVENT_TYPES } from '../webhook.events';

const eventType: Schema = { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] };

const subscription: Record<string, Schema> = {
  id: { type: 'string', format: 'uuid' },
  url: { type: 'string', format: 'uri' },
  events: arrayOf(eventType),
  key_id: { type: 'string', description: 'the key that created it' },
  key_name: { type: 'string' },
  owner: nullable({ type: 'string' }),
  created_at: { type: 'string', format: 'date-time' },
};

export const WEBHOOK_SCHEMAS: Record<string, Schema> = {
  CreateWebhook: {
    type: 'object',
    required: ['url', 'events'],
    additionalProperties: false,
    properties: {
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'an http(s) URL whose host resolves to public addresses only (unless WEBHOOK_ALLOW_PRIVATE=true)' },
      events: { ...arrayOf(eventType), minItems: 1, uniqueItems: true },
    },
  },
  Webhook: obj(subscription, 'A webhook subscription (never its secret).'),
  WebhookCreated: obj({ ...subscription, secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/=]+$', description: 'the Standard Webhooks signing secret, shown only here' } }, 'A new subscription with its signing secret.'),
};
