import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me } from './api.js';

/** Who is signed in (null: nobody), and a way to ask the server again after signing in or out. */
export interface Signed {
  me: Me | null;
  refresh: () => Promise<Me | null>;
}

export const SignedContext = createContext<Signed>({ me: null, refresh: () => Promise.resolve(null) });

export const useSigned = (): Signed => useContext(SignedContext);

/** The signed-in person; pages that need one are only rendered when there is one. */
export function useMe(): Me {
  const { me } = useSigned();
  if (me === null) throw new Error('rendered without a signed-in person');
  return me;
}
