/**
 * Work a request waits on outside the process (a DNS lookup) without holding the slot a
 * concurrency gate gave it: the gate registers, per request, how to step aside and come
 * back in line; where no gate runs the work simply runs.
 */
export type StepAside = <T>(work: () => Promise<T>) => Promise<T>;

const asides = new WeakMap<object, StepAside>();

/** For the gate: how `request` steps aside while it holds a slot. */
export const setStepAside = (request: object, aside: StepAside): void => {
  asides.set(request, aside);
};

/** Runs `work` with the request's gate slot given back meanwhile, and waits for a slot again after it. */
export const outsideGate = <T>(request: object, work: () => Promise<T>): Promise<T> => (asides.get(request) ?? ((w) => w()))(work);
