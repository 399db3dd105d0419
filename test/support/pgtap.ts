import { copyFileSync, existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { postgresBinaries } from "../../functions/app/db/postgres-binaries.ts";

/** Where Debian's postgresql-15-pgtap puts pgTAP's extension files (.ci/run unpacks them there, without the server). */
const DEBIAN_EXTENSIONS = "/usr/share/postgresql/15/extension";

/**
 * Makes pgTAP installable on the test clusters: its control and SQL files copied from Debian's
 * package into the extension directory of the server npm installed (native/share/postgresql/
 * extension, beside the contrib modules the package ships), where `create extension pgtap` looks.
 * The npm package carries no pgTAP; its files are plain SQL, the same for any build of 15. A
 * missing package is left to the pgTAP suite, which names the install line.
 */
export async function installPgtap(): Promise<void> {
  if (!existsSync(DEBIAN_EXTENSIONS)) return;
  const { postgres } = await postgresBinaries();
  const extensions = join(dirname(dirname(postgres)), "share", "postgresql", "extension");
  for (const file of readdirSync(DEBIAN_EXTENSIONS).filter((name) => name.startsWith("pgtap"))) {
    if (!existsSync(join(extensions, file))) copyFileSync(join(DEBIAN_EXTENSIONS, file), join(extensions, file));
  }
}
