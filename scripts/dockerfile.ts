/**
 * The command of a Dockerfile instruction in JSON (exec) form, e.g. `CMD [...]` or
 * `HEALTHCHECK … CMD [...]`: what Docker runs, read the way the packed-install check starts
 * it and the launch-flags test checks it.
 */
export function dockerfileCommand(dockerfile: string, instruction: RegExp): string[] {
  const joined = dockerfile.replace(/\\\n\s*/g, ' ');
  const line = joined.split('\n').find((l) => instruction.test(l));
  const json = line === undefined ? undefined : /CMD\s+(\[.*\])\s*$/.exec(line)?.[1];
  if (json === undefined) throw new Error(`Dockerfile has no ${String(instruction)} in JSON form`);
  return JSON.parse(json) as string[];
}
