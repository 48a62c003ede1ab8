import { Controller, Get } from '@nestjs/common';
import { FreeRead } from '../common/rate-limit';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { DatabaseService } from '../database/database.service';

/** `/health`: 200 when the database answers, 503 otherwise. */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly db: DatabaseService,
  ) {}

  @Get()
  @FreeRead()
  @HealthCheck()
  @ApiOperation({ summary: 'Liveness and database reachability' })
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      async () => {
        const i = this.indicator.check('database');
        return (await this.db.ping()) ? i.up({ dialect: this.db.dialect }) : i.down({ dialect: this.db.dialect });
      },
    ]);
  }
}
