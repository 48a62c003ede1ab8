import { Module } from '@nestjs/common';
import { OutcomesRepository } from './outcomes.repository';

/** The `outcomes` table's repository. Provided and exported here (its owner); a module that reads it imports this module. */
@Module({ providers: [OutcomesRepository], exports: [OutcomesRepository] })
export class OutcomesRepositoryModule {}
