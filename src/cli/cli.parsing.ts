import { Command, type HelpContext } from 'commander';
import { AdminInputError } from '../features/auth/auth.service.js';

/** A command line that names no command, an unknown one, or the wrong arguments. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `users add`, or '' for the program itself. */
function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent != null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

export const helpHint = (path: string) => `(focus ${path === '' ? '' : `${path} `}--help)`;

/** The command a command line names (`users add`), as far as its leading words name commands. */
export function commandPath(program: Command, args: readonly string[]): string {
  const names: string[] = [];
  let command: Command = program;
  for (const arg of args) {
    const next = command.commands.find((c) => c.name() === arg);
    if (next === undefined) break;
    names.push(arg);
    command = next;
  }
  return names.join(' ');
}

/** The first quoted word of commander's own message: the option or command it is about. */
const quoted = (message: string) => /'([^']*)'/.exec(message)?.[1] ?? '';

/** The option's long flag from its declaration (`--org <id>` → `--org`). */
const flag = (declaration: string) => declaration.split(/[\s,]+/).find((f) => f.startsWith('--')) ?? declaration;

/**
 * commander with messages of our own: its parser finds the mistake, this class words it,
 * one line that names the command and where its help is. Used for every subcommand too.
 */
export class FocusCommand extends Command {
  override createCommand(name?: string): Command {
    return new FocusCommand(name);
  }

  override error(message: string, options: { code?: string } = {}): never {
    const path = pathOf(this);
    const where = path === '' ? '' : ` for "${path}"`;
    let text: string;
    switch (options.code ?? '') {
      case 'commander.unknownCommand':
        text = `unknown command "${[path, quoted(message)].filter((p) => p !== '').join(' ')}"`;
        break;
      case 'commander.unknownOption':
        text = `unknown option ${quoted(message)}${where}`;
        break;
      case 'commander.missingArgument':
        text = `"${path}" needs <${quoted(message)}>`;
        break;
      case 'commander.optionMissingArgument':
        text = `${flag(quoted(message))} needs a value`;
        break;
      case 'commander.missingMandatoryOptionValue': {
        // commander checks options before arguments: a missing argument is the first thing to say.
        const missing = this.registeredArguments.slice(this.args.length).find((argument) => argument.required);
        text = missing === undefined ? `"${path}" needs ${quoted(message)}` : `"${path}" needs <${missing.name()}>`;
        break;
      }
      case 'commander.excessArguments': {
        const extra = this.args.slice(this.registeredArguments.length);
        text = `unexpected argument${extra.length === 1 ? '' : 's'} ${extra.map((a) => JSON.stringify(a)).join(' ')}${where}`;
        break;
      }
      default:
        text = message.replace(/^error: /, '');
    }
    throw new UsageError(`${text} ${helpHint(path)}`);
  }

  /** commander shows help on stderr when a group is called without a command; one line instead. */
  override help(context?: HelpContext): never;
  override help(cb: (str: string) => string): never;
  override help(context?: HelpContext | ((str: string) => string)): never {
    if (typeof context === 'object' && context.error === true) {
      const path = pathOf(this);
      const names = this.commands.map((c) => c.name()).join(', ');
      throw new UsageError(`missing command${path === '' ? '' : ` after "${path}"`}: one of ${names} ${helpHint(path)}`);
    }
    return typeof context === 'function' ? super.help(context) : super.help(context);
  }
}

/** A positive integer from its decimal text; anything else is reported as typed. */
export const positiveInteger =
  (what: string) =>
  (raw: string): number => {
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new AdminInputError(`${what} must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}: ${raw}`);
    }
    return value;
  };

/** An option that may be given several times, each value parsed on its own. */
export const repeatable =
  <T>(parse: (raw: string) => T) =>
  (raw: string, previous: T[] | undefined): T[] => [...(previous ?? []), parse(raw)];

/** An option that may be given once: a second value is a mistake, not a silent override. */
export const single =
  (name: string) =>
  (raw: string, previous: string | undefined): string => {
    if (previous !== undefined) throw new UsageError(`${name} given twice`);
    return raw;
  };
