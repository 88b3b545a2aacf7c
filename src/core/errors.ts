/** Where a piece of bad input lives, so a message can point a person (or the Problems panel) at it. */
export interface InputLocation {
  file: string;
  line?: number; // 1-based
  column?: number; // 1-based
  field?: string; // dotted path, e.g. "evaluation.k"
}

/** Base class: every error we raise on purpose, as opposed to bugs. */
export class WhaleError extends Error {
  constructor(
    message: string,
    readonly code: string = 'whale',
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Bad input from a user's file: the message always names file, line and field where known. */
export class InputError extends WhaleError {
  constructor(
    readonly location: InputLocation,
    readonly detail: string,
    readonly more: InputError[] = [],
  ) {
    super(formatLocated(location, detail) + more.map((m) => '\n' + m.message).join(''), 'input');
  }

  /** Several problems in one file become one error that lists them all. */
  static combine(errors: InputError[]): InputError {
    if (errors.length === 0) throw new Error('InputError.combine needs at least one error');
    const [first, ...rest] = errors;
    return new InputError(first.location, first.detail, rest);
  }

  get all(): InputError[] {
    return [this, ...this.more];
  }
}

export function formatLocated(loc: InputLocation, detail: string): string {
  let where = loc.file;
  if (loc.line !== undefined) where += `:${loc.line}`;
  if (loc.line !== undefined && loc.column !== undefined) where += `:${loc.column}`;
  const field = loc.field ? ` ${loc.field}:` : '';
  return `${where}:${field} ${detail}`;
}

/** Which piece of infrastructure failed: the policy backend, a tool service, the domain's verifier, or our runtime. */
export type InfraSource = 'backend' | 'tool' | 'verifier' | 'runtime';

/**
 * A failure of infrastructure, not of the harness or the model: a backend that did not answer, a
 * tool service that is down, a verifier that crashed or hung. A rollout it touches ends with
 * termination 'infra_error': never scored, never cached, never trained on; the unit is retried or
 * fails loudly. Domain tools throw it when their service cannot be reached.
 */
export class InfraError extends WhaleError {
  constructor(
    readonly source: InfraSource,
    message: string,
  ) {
    super(message, 'infra');
  }
}
