/**
 * The subcommands of `aer1`, one module each. A module exports a
 * `register(program, ctx)` that adds its command with `program.command(...)`
 * (so it inherits the run's output streams and exit override) and stores
 * its exit code in `ctx.exitCode`.
 *
 */
import type { Command } from 'commander';
import type { RunContext } from '../io';
import { registerCoverage } from './coverage';
import { registerConformance } from './conformance';
import { registerGateway } from './gateway';
import { registerGenerate } from './generate';
import { registerLedger } from './ledger';
import { registerLog } from './log';
import { registerSubmit } from './submit';
import { registerVerify } from './verify';
import { registerVerifyPack } from './verify-pack';
import { registerWitness } from './witness';

export type Register = (program: Command, ctx: RunContext) => void;

export const COMMANDS: readonly Register[] = [registerVerify, registerConformance, registerGenerate, registerCoverage, registerLedger, registerSubmit, registerWitness, registerLog, registerVerifyPack, registerGateway];
