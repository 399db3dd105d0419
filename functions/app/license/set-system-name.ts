import { Failure } from "../errors.ts";
import { LicenseKey } from "../license-key.ts";
import { SystemName, type SystemNameResponse } from "./schemas.ts";
import * as store from "./store.ts";

/**
 * The contract's system-name write on a parsed body. When several checks fail, the first in its own list wins:
 * `invalid_name` (400), then `unknown_license` (404: a key not of the license-key shape is unknown
 * without asking the database), then `name_taken` (409). Re-sending the current name answers 200
 * and writes nothing. `write` sets the name in the database (`store.setSystemNames`, batched).
 *
 * @example
 * const answer = await setSystemName(async (ask) => (await store.setSystemNames(deps.writes, [ask]))[0], key, body);
 */
export async function setSystemName(
  write: (ask: store.NameAsk) => Promise<store.SetSystemNameOutcome>,
  key: string,
  body: Record<string, unknown>,
): Promise<SystemNameResponse> {
  const name = SystemName.safeParse(body.systemName);
  if (!name.success) throw new Failure("invalid_name");
  if (!LicenseKey.safeParse(key).success) throw new Failure("unknown_license");
  const outcome = await write({ key, name: name.data });
  if (outcome === "unknown_license") throw new Failure("unknown_license");
  if (outcome === "taken") throw new Failure("name_taken");
  return { systemName: name.data, systemNameStatus: "ok" };
}
