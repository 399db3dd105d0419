import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { LicenseResponse } from "../../functions/app/license/schemas.ts";
import { validateAndNameLicenses } from "../../functions/app/license/store.ts";
import { testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { aloneAndTogether } from "../support/simultaneous.ts";

const database = scopedDatabase();
let db: Database;
let request: ReturnType<typeof testApp>["request"];

beforeAll(async () => {
  db = database.db;
  ({ request } = testApp(db));
});

const json = { "content-type": "application/json" };

async function post(body: unknown, headers: Record<string, string> = json) {
  const response = await request("/api/v2/license", {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const failure = (message: string) => ({ status: 400, body: { message } });

let serial = 0;

/** A new account with `count` active keys linked to it, so each test owns its system names. */
async function newAccount(count = 2) {
  serial += 1;
  const email = `owner${serial}@example.com`;
  const [{ id }] = await db.query<{ id: string }>(
    "insert into public.accounts (email, display_name) values ($1, 'Test') returning id",
    [email],
  );
  const keys = Array.from({ length: count }, (_, i) => `L${String(serial).padStart(3, "0")}-0000-0000-000${i}`);
  for (const key of keys) {
    await db.query("insert into public.license_keys (key, account_id, email) values ($1, $2, $3)", [key, id, email]);
  }
  return { email, keys };
}

async function keyRow(key: string) {
  const [row] = await db.query<{ system_name: string | null; last_validated_at: Date | null }>(
    "select system_name, last_validated_at from public.license_keys where key = $1",
    [key],
  );
  return row;
}

describe("POST /api/v2/license", () => {
  it("answers 200 with the key, the owner's e-mail and systemNameStatus unchanged when systemName is omitted", async () => {
    const answer = await post({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com" });
    expect(answer).toEqual({
      status: 200,
      body: { key: "DEMO-0000-0000-0001", email_address: "demo@example.com", systemNameStatus: "unchanged" },
    });
    expect(LicenseResponse.safeParse(answer.body).success).toBe(true);
  });

  it("answers with the owner's e-mail as stored, whatever the case the kiosk sent", async () => {
    const answer = await post({ license_key: "DEMO-0000-0000-0001", email_address: "  Demo@EXAMPLE.com " });
    expect(answer.status).toBe(200);
    expect(answer.body.email_address).toBe("demo@example.com");
  });

  it("pairs a key with no owner link through its stored e-mail, case-insensitively", async () => {
    const answer = await post({ license_key: "DEMO-0000-0000-0005", email_address: "Legacy@Example.COM" });
    expect(answer).toEqual({
      status: 200,
      body: { key: "DEMO-0000-0000-0005", email_address: "legacy@example.com", systemNameStatus: "unchanged" },
    });
  });

  it("records lastValidatedAt on a successful validation, and not on a failed one", async () => {
    const { email, keys } = await newAccount(2);
    await db.query("update public.license_keys set active = false where key = $1", [keys[1]]);
    expect((await keyRow(keys[0])).last_validated_at).toBeNull();

    expect((await post({ license_key: keys[1], email_address: email })).status).toBe(400);
    expect((await post({ license_key: keys[0], email_address: "other@example.com" })).status).toBe(400);
    expect((await keyRow(keys[1])).last_validated_at).toBeNull();
    expect((await keyRow(keys[0])).last_validated_at).toBeNull();

    expect((await post({ license_key: keys[0], email_address: email })).status).toBe(200);
    expect((await keyRow(keys[0])).last_validated_at).toBeInstanceOf(Date);
  });

  it("answers each of many simultaneous validations as it answers that validation alone", async () => {
    const { email, keys } = await newAccount(3);
    await db.query("update public.license_keys set active = false where key = $1", [keys[2]]);
    const bodies = [
      { license_key: keys[0], email_address: email },
      { license_key: keys[1], email_address: email.toUpperCase() },
      { license_key: keys[1], email_address: email, systemName: "Front desk" },
      { license_key: "DEMO-0000-0000-0005", email_address: "legacy@example.com" },
      { license_key: keys[2], email_address: email },
      { license_key: "ZZZZ-0000-0000-0000", email_address: email },
      { license_key: keys[0], email_address: "other@example.com" },
      { license_key: keys[0], email_address: "nobody@example.com" },
    ];
    const validations = bodies.map((body) => () =>
      request("/api/v2/license", { method: "POST", headers: json, body: JSON.stringify(body) })
    );
    const { alone, together } = await aloneAndTogether(validations, 8);
    expect(alone.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 400, 400, 400, 400]);
    expect(alone.map((answer) => JSON.parse(answer.body).systemNameStatus ?? JSON.parse(answer.body).message)).toEqual([
      "unchanged", "unchanged", "ok", "unchanged",
      "license key is not active", "license key not found", "key does not belong to specified user", "user does not exist",
    ]);
    together.forEach((answers, at) => expect(answers).toEqual(answers.map(() => alone[at])));
    expect((await keyRow(keys[0])).last_validated_at).toBeInstanceOf(Date);
    expect((await keyRow(keys[2])).last_validated_at).toBeNull();
  });

  it("records lastValidatedAt at each of many simultaneous validations of one key", async () => {
    const { email, keys } = await newAccount(1);
    for (let round = 0; round < 3; round++) {
      const [{ before }] = await db.query<{ before: Date }>("select now() as before");
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post({ license_key: keys[0], email_address: email })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
      expect((await keyRow(keys[0])).last_validated_at!.getTime()).toBeGreaterThanOrEqual(before.getTime());
    }
  });

  it("never records a validation for a key deactivated or re-linked while it was being validated", async () => {
    const { email, keys } = await newAccount(2);
    const other = await newAccount(1);
    const editor = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      for (const [key, edit] of [
        [keys[0], "update public.license_keys set active = false where key = $1"],
        [keys[1], `update public.license_keys set account_id = (select id from public.accounts where email = '${other.email}') where key = $1`],
      ]) {
        // The staff edit holds the key's row while the validation starts, and commits once the
        // validation waits for that row.
        let held!: () => void;
        const editing = new Promise<void>((resolve) => (held = resolve));
        let commit!: () => void;
        const committing = new Promise<void>((resolve) => (commit = resolve));
        const edited = editor.begin(async (tx) => {
          await tx.unsafe(edit, [key]);
          held();
          await committing;
        });
        await editing;
        const answer = post({ license_key: key, email_address: email });
        await expect.poll(async () => (await db.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        ))[0].n).toBe(1);
        commit();
        await edited;
        expect((await answer).status).toBe(400);
        expect((await keyRow(key)).last_validated_at).toBeNull();
      }
    } finally {
      await editor.end();
    }
  });

  it("answers 400 content-type must be application/json without or with another content type", async () => {
    const body = { license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com" };
    expect(await post(body, {})).toEqual(failure("content-type must be application/json"));
    expect(await post(body, { "content-type": "text/plain" })).toEqual(failure("content-type must be application/json"));
    expect(await post(body, { "content-type": "application/x-www-form-urlencoded" })).toEqual(
      failure("content-type must be application/json"),
    );
    expect((await post(body, { "content-type": "application/json; charset=utf-8" })).status).toBe(200);
  });

  it("answers 400 request body is required for an empty or blank body", async () => {
    expect(await post("")).toEqual(failure("request body is required"));
    expect(await post("  \n ")).toEqual(failure("request body is required"));
    const noBody = await request("/api/v2/license", { method: "POST", headers: json });
    expect({ status: noBody.status, body: await noBody.json() }).toEqual(failure("request body is required"));
  });

  it("answers 400 invalid JSON body for malformed JSON, bad UTF-8, and JSON that is not an object", async () => {
    for (const body of ['{"license_key": ', "{license_key: 1}", "[]", '"DEMO-0000-0000-0001"', "42", "null", "true"]) {
      expect(await post(body)).toEqual(failure("invalid JSON body"));
    }
    const badUtf8 = await request("/api/v2/license", {
      method: "POST",
      headers: json,
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect({ status: badUtf8.status, body: await badUtf8.json() }).toEqual(failure("invalid JSON body"));
  });

  it("answers 400 license_key is required when it is missing, blank or not a string", async () => {
    for (const license_key of [undefined, "", "   ", 42, null, ["DEMO-0000-0000-0001"]]) {
      expect(await post({ license_key, email_address: "demo@example.com" })).toEqual(failure("license_key is required"));
    }
  });

  it("answers 400 email_address is required when it is missing, blank or not a string", async () => {
    for (const email_address of [undefined, "", "  ", 42, null, { email: "demo@example.com" }]) {
      expect(await post({ license_key: "DEMO-0000-0000-0001", email_address })).toEqual(
        failure("email_address is required"),
      );
    }
  });

  it("answers 400 license key not found for an unknown key, and for one not of the key's shape", async () => {
    for (const license_key of ["ZZZZ-0000-0000-0001", "demo-0000-0000-0001", "DEMO-0000-0000-00011", "DEMO00000000001"]) {
      expect(await post({ license_key, email_address: "demo@example.com" })).toEqual(failure("license key not found"));
    }
  });

  it("answers 400 license key is not active for an inactive key, beside the active one", async () => {
    expect(await post({ license_key: "DEMO-0000-0000-0003", email_address: "demo@example.com" })).toEqual(
      failure("license key is not active"),
    );
    expect((await post({ license_key: "DEMO-0000-0000-0002", email_address: "demo@example.com" })).status).toBe(200);
  });

  it("answers 400 user does not exist for an unknown e-mail, and for one that is no e-mail of at most 254 characters", async () => {
    const tooLong = `${"a".repeat(243)}@example.com`;
    expect(tooLong.length).toBe(255);
    for (const email_address of ["nobody@example.com", "not-an-email", "demo@example", tooLong, "demo\u0000@example.com"]) {
      expect(await post({ license_key: "DEMO-0000-0000-0001", email_address })).toEqual(failure("user does not exist"));
    }
  });

  it("accepts an e-mail of 254 characters (its account's, any case) and answers user does not exist for 255", async () => {
    const email254 = `${"a".repeat(64)}@${"b".repeat(254 - 64 - 1 - 4)}.com`;
    expect(email254).toHaveLength(254);
    await db.query(
      `with account as (insert into public.accounts (email, display_name) values ($1, 'Long') returning id)
       insert into public.license_keys (key, account_id, email) select 'LONG-0000-0000-0254', id, $1 from account`,
      [email254],
    );
    expect(await post({ license_key: "LONG-0000-0000-0254", email_address: email254.toUpperCase() })).toEqual({
      status: 200,
      body: { key: "LONG-0000-0000-0254", email_address: email254, systemNameStatus: "unchanged" },
    });
    expect(await post({ license_key: "LONG-0000-0000-0254", email_address: `a${email254}` })).toEqual(failure("user does not exist"));
  });

  it("answers 400 key does not belong to specified user when the key is another user's", async () => {
    expect(await post({ license_key: "DEMO-0000-0000-0004", email_address: "demo@example.com" })).toEqual(
      failure("key does not belong to specified user"),
    );
    expect(await post({ license_key: "DEMO-0000-0000-0005", email_address: "demo@example.com" })).toEqual(
      failure("key does not belong to specified user"),
    );
  });

  it("answers the first failure in the spec's list when several apply", async () => {
    expect(await post({})).toEqual(failure("license_key is required"));
    expect(await post({ license_key: "nope" })).toEqual(failure("email_address is required"));
    expect(await post({ license_key: "nope", email_address: "nope" })).toEqual(failure("license key not found"));
    expect(await post({ license_key: "ZZZZ-0000-0000-0001", email_address: "nobody@example.com" })).toEqual(
      failure("license key not found"),
    );
    expect(await post({ license_key: "DEMO-0000-0000-0003", email_address: "nobody@example.com" })).toEqual(
      failure("license key is not active"),
    );
    expect(await post({ license_key: "DEMO-0000-0000-0003", email_address: "other@example.com" })).toEqual(
      failure("license key is not active"),
    );
    expect(await post({ license_key: "DEMO-0000-0000-0003", email_address: "demo@example.com" }, {})).toEqual(
      failure("content-type must be application/json"),
    );
  });

  it("answers 413 for a body over 64 KiB with Content-Length, and takes one at the limit", async () => {
    const pad = (size: number) => {
      const base = JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com", pad: "" });
      return base.replace('"pad":""', `"pad":"${"x".repeat(size - base.length)}"`);
    };
    const over = await request("/api/v2/license", { method: "POST", headers: json, body: pad(64 * 1024 + 1) });
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({ message: "request body must not exceed 64 KiB" });
    const atLimit = await request("/api/v2/license", { method: "POST", headers: json, body: pad(64 * 1024) });
    expect(atLimit.status).toBe(200);
  });

  it("answers 413 for a body without Content-Length, cutting it off at the limit instead of reading it whole", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
    let sent = 0;
    // An endless body: only a reader that stops at the limit can answer at all.
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const init = { method: "POST", headers: json, body: endless, duplex: "half" } as RequestInit;
    const response = await request("/api/v2/license", init);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ message: "request body must not exceed 64 KiB" });
    expect(sent).toBeLessThan(256 * 1024);
  });

  it("answers 413 for a body larger than its Content-Length claims", async () => {
    const body = new TextEncoder().encode(`{"pad":"${"x".repeat(70 * 1024)}"}`);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(body);
        controller.close();
      },
    });
    const init = { method: "POST", headers: { ...json, "content-length": "20" }, body: stream, duplex: "half" } as RequestInit;
    expect((await request("/api/v2/license", init)).status).toBe(413);
  });

  it("answers 429 with Retry-After on the 11th request in a minute from one client IP, before any other check", async () => {
    const clock = testClock();
    const limited = testApp(db, { now: clock.now });
    const from = (body: string) =>
      limited.request("/api/v2/license", { method: "POST", headers: { ...json, "x-forwarded-for": "203.0.113.7" }, body });
    const valid = JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com" });
    for (let i = 0; i < 10; i++) expect((await from(valid)).status).toBe(200);
    const refused = await from("{ not json");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const elsewhere = await limited.request("/api/v2/license", {
      method: "POST",
      headers: { ...json, "x-forwarded-for": "203.0.113.8" },
      body: valid,
    });
    expect(elsewhere.status).toBe(200);
  });

  describe("systemName", () => {
    it("is ok and stored trimmed", async () => {
      const { email, keys } = await newAccount(1);
      const answer = await post({ license_key: keys[0], email_address: email, systemName: "  Front desk \t" });
      expect(answer).toEqual({ status: 200, body: { key: keys[0], email_address: email, systemNameStatus: "ok" } });
      expect((await keyRow(keys[0])).system_name).toBe("Front desk");
    });

    it("counts 40 characters as code points, not UTF-16 units", async () => {
      const { email, keys } = await newAccount(1);
      const forty = "🎵".repeat(40);
      expect((await post({ license_key: keys[0], email_address: email, systemName: forty })).body.systemNameStatus).toBe("ok");
      expect((await keyRow(keys[0])).system_name).toBe(forty);
      expect((await post({ license_key: keys[0], email_address: email, systemName: `${forty}♪` })).body.systemNameStatus).toBe(
        "invalid",
      );
    });

    it("is unchanged when omitted, and leaves the stored name untouched", async () => {
      const { email, keys } = await newAccount(1);
      await post({ license_key: keys[0], email_address: email, systemName: "Lobby" });
      const answer = await post({ license_key: keys[0], email_address: email });
      expect(answer.body.systemNameStatus).toBe("unchanged");
      expect((await keyRow(keys[0])).system_name).toBe("Lobby");
    });

    it("is invalid when empty, whitespace-only, over 40 characters or not a string, and never clears the stored name", async () => {
      const { email, keys } = await newAccount(1);
      await post({ license_key: keys[0], email_address: email, systemName: "Lobby" });
      for (const systemName of ["", "   ", "\t\n", "x".repeat(41), 42, null, true, ["Lobby"], { name: "Lobby" }, "a\u0000b"]) {
        const answer = await post({ license_key: keys[0], email_address: email, systemName });
        expect(answer).toEqual({ status: 200, body: { key: keys[0], email_address: email, systemNameStatus: "invalid" } });
      }
      expect((await keyRow(keys[0])).system_name).toBe("Lobby");
      const forty = await post({ license_key: keys[0], email_address: email, systemName: ` ${"x".repeat(40)} ` });
      expect(forty.body.systemNameStatus).toBe("ok");
      const one = await post({ license_key: keys[0], email_address: email, systemName: " B " });
      expect(one.body.systemNameStatus).toBe("ok");
      expect((await keyRow(keys[0])).system_name).toBe("B");
    });

    it("is conflict when another key of the same account holds the name in any case, and stores nothing", async () => {
      const { email, keys } = await newAccount(2);
      expect((await post({ license_key: keys[0], email_address: email, systemName: "Lobby" })).body.systemNameStatus).toBe("ok");
      const answer = await post({ license_key: keys[1], email_address: email, systemName: "LOBBY" });
      expect(answer).toEqual({ status: 200, body: { key: keys[1], email_address: email, systemNameStatus: "conflict" } });
      expect((await keyRow(keys[1])).system_name).toBeNull();
      expect((await keyRow(keys[1])).last_validated_at).toBeInstanceOf(Date);
    });

    it("is ok for a name a key of another account holds", async () => {
      const first = await newAccount(1);
      const second = await newAccount(1);
      expect((await post({ license_key: first.keys[0], email_address: first.email, systemName: "Lobby" })).body.systemNameStatus).toBe("ok");
      expect((await post({ license_key: second.keys[0], email_address: second.email, systemName: "lobby" })).body.systemNameStatus).toBe("ok");
    });

    it("is ok when re-sending the key's current name, and when changing the case of its own name", async () => {
      const { email, keys } = await newAccount(1);
      await post({ license_key: keys[0], email_address: email, systemName: "Lobby" });
      expect((await post({ license_key: keys[0], email_address: email, systemName: "Lobby" })).body.systemNameStatus).toBe("ok");
      expect((await post({ license_key: keys[0], email_address: email, systemName: "LOBBY" })).body.systemNameStatus).toBe("ok");
      expect((await keyRow(keys[0])).system_name).toBe("LOBBY");
    });

    it("is not set when validation fails", async () => {
      const { keys } = await newAccount(1);
      expect(await post({ license_key: keys[0], email_address: "demo@example.com", systemName: "Lobby" })).toEqual(
        failure("key does not belong to specified user"),
      );
      expect((await keyRow(keys[0])).system_name).toBeNull();
    });
  });

  describe("validations that set a system name, asked for together: one statement a batch (cadence.validate_and_name_licenses)", () => {
    const validateNaming = (inputs: Array<[string, string, string]>) =>
      validateAndNameLicenses(db, inputs.map(([key, email, systemName]) => ({ key, email, systemName })));

    it("answers each validation of a batch as it answers it alone, its name's status included", async () => {
      const { email, keys } = await newAccount(3);
      await db.query("update public.license_keys set active = false where key = $1", [keys[2]]);
      expect(await validateNaming([[keys[0], email, "Lobby"], [keys[1], email, "Lobby"], [keys[2], email, "Bar"], ["ZZZZ-0000-0000-0002", email, "Bar"], [keys[0], "nobody@example.com", "Bar"]]))
        .toEqual([
          { outcome: "valid", ownerEmail: email, systemNameStatus: "ok" },
          { outcome: "valid", ownerEmail: email, systemNameStatus: "conflict" },
          { outcome: "key_inactive" },
          { outcome: "key_not_found" },
          { outcome: "user_not_found" },
        ]);
      expect([(await keyRow(keys[0])).system_name, (await keyRow(keys[1])).system_name, (await keyRow(keys[2])).system_name]).toEqual(["Lobby", null, null]);
    });

    it("sets no name for a validation that fails, and still sets the names of the valid ones beside it", async () => {
      const first = await newAccount(1);
      const second = await newAccount(1);
      expect(await validateNaming([[first.keys[0], second.email, "Stolen"], [second.keys[0], second.email, "Kept"]]))
        .toEqual([{ outcome: "not_owner" }, { outcome: "valid", ownerEmail: second.email, systemNameStatus: "ok" }]);
      expect([(await keyRow(first.keys[0])).system_name, (await keyRow(second.keys[0])).system_name]).toEqual([null, "Kept"]);
    });

    it("gives a name two keys of one account ask for in one batch to the first asked; the other is valid with conflict", async () => {
      const { email, keys } = await newAccount(2);
      expect(await validateNaming([[keys[1], email, "Porch"], [keys[0], email, "PORCH"]])).toEqual([
        { outcome: "valid", ownerEmail: email, systemNameStatus: "ok" },
        { outcome: "valid", ownerEmail: email, systemNameStatus: "conflict" },
      ]);
      expect([(await keyRow(keys[0])).system_name, (await keyRow(keys[1])).system_name]).toEqual([null, "Porch"]);
      expect((await keyRow(keys[0])).last_validated_at).toBeInstanceOf(Date);
    });

    it("answers ok to a name re-sent as stored, and to a key renaming itself twice in one batch", async () => {
      const { email, keys } = await newAccount(1);
      await validateNaming([[keys[0], email, "Deck"]]);
      expect(await validateNaming([[keys[0], email, "Deck"], [keys[0], email, "Upper deck"]])).toEqual([
        { outcome: "valid", ownerEmail: email, systemNameStatus: "ok" },
        { outcome: "valid", ownerEmail: email, systemNameStatus: "ok" },
      ]);
      expect((await keyRow(keys[0])).system_name).toBe("Upper deck");
    });
  });
});
