// A parser met text it cannot read: names the format, the 1-based line and one reason, never a stack trace.
export class ParseError extends Error {
  override readonly name = 'ParseError';
  constructor(
    readonly kind: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${kind}: line ${line}: ${reason}`);
  }
}

// Bad input from the user (CLI flags, protocol files, manifests): one line naming file/field and what to do.
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
