import { Module } from '@nestjs/common';
import { OutcomeReads } from './outcome-reads';
import { OutcomesRepository } from './outcomes.repository';

/** The `outcomes` table's repository (for this module) and `OutcomeReads` (the reads other modules make): a module that reads outcomes imports this module. */
@Module({ providers: [OutcomesRepository, OutcomeReads], exports: [OutcomesRepository, OutcomeReads] })
export class OutcomesRepositoryModule {}
