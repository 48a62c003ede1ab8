import { applyDecorators, UseGuards } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';

/** Rate limit for the verify endpoints (S13): past VERIFY_RATE_LIMIT per minute per client, 429 with Retry-After. */
export const VerifyRateLimit = (): MethodDecorator & ClassDecorator => applyDecorators(UseGuards(ThrottlerGuard));
