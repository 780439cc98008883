import autocannon from 'autocannon';

/** One autocannon run as a promise, its error always an Error (the bench's one way to send load). */
export function runCannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (error, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)));
  });
}
