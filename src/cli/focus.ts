#!/usr/bin/env -S node --max-semi-space-size=64
import { CommanderError } from 'commander';
import { ConfigError } from '../config/config.js';
import { AdminInputError } from '../features/auth/auth.service.js';
import { buildProgram } from './cli.program.js';
import { UsageError, commandPath, helpHint } from './cli.parsing.js';

/** A mistake in what was typed names the command and its help (the parser's own words already do). */
function describeError(error: unknown, path: string): { message: string; known: boolean } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError || error instanceof AdminInputError) {
    const hint = helpHint(path);
    return { message: message.endsWith(hint) ? message : `${message} ${hint}`, known: true };
  }
  if (error instanceof ConfigError) return { message, known: true };
  return { message: `failed: ${message}`, known: false };
}

const args = process.argv.slice(2);
const program = buildProgram().exitOverride();
program.parseAsync(args, { from: 'user' }).catch((error: unknown) => {
  // --help and --version end the parse by "exiting" 0 after printing to stdout.
  if (error instanceof CommanderError && error.exitCode === 0) return;
  const { message, known } = describeError(error, commandPath(program, args));
  // One line, whatever the error text holds: scripts read the first line of stderr.
  process.stderr.write(`focus: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exitCode = known ? 2 : 1;
});
