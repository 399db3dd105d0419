/** An account as Supabase Auth should know it. */
export interface AuthAccount {
  /** The account id, which becomes the Auth user's id. */
  id: string;
  email: string;
  name: string;
}

/**
 * The Auth users port: makes sure an Auth user exists for an account and answers its id. It is
 * idempotent (a user that already exists for the account is the answer) and throws when Auth
 * cannot be reached or the e-mail belongs to an Auth user Cadence did not create.
 */
export interface AuthUsers {
  ensure(account: AuthAccount): Promise<string>;
  /**
   * Gives an existing Auth user the account's e-mail now, confirmed (the integrator or staff gave
   * it, as onboarding's was). Throws when Auth cannot be reached or refuses (the address taken).
   */
  changeEmail(authUserId: string, email: string): Promise<void>;
}
