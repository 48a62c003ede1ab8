import { Module } from '@nestjs/common';
import { OutcomesController } from './outcomes.controller';
import { OutcomesProjection } from './outcomes.projection';
import { OutcomesService } from './outcomes.service';

/** Outcome reports (issue 18): the owning system confirms (or not) what a recorded call claims. */
@Module({
  controllers: [OutcomesController],
  providers: [OutcomesService, OutcomesProjection],
  exports: [OutcomesService],
})
export class OutcomesModule {}
