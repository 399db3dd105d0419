import { describe, expect, it } from "vitest";
import { Email } from "../../functions/app/email.ts";
import { memoryMailer } from "../support/mailer.ts";
import { ONBOARDING_PATH, SECRET, signedInit } from "../support/onboarding.ts";
import { suiteApp } from "../support/suite.ts";

// An e-mail with a control character (BEL) or a bidi control (RIGHT-TO-LEFT OVERRIDE) in it is
// malformed on every route that takes one, as the accounts table's constraint says for every writer.
const BEL = "demo\u0007@example.com";
const RLO = "demo\u202e@example.com";
const ZWSP = "demo@exa\u200bmple.com";

const suite = suiteApp({ signingSecret: SECRET, mailer: memoryMailer().mailer });
const post = (path: string, body: unknown) =>
  suite.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const answer = async (response: Response) => ({ status: response.status, body: await response.json() });

describe("the e-mail schema (functions/app/email.ts)", () => {
  it("refuses control and format characters, and keeps accepting ordinary addresses", () => {
    for (const email of [BEL, RLO, ZWSP, "demo@example.com\u0000", "de\u0085mo@example.com", "demo@example.c\u00ado"]) {
      expect(Email.safeParse(email).success, JSON.stringify(email)).toBe(false);
    }
    for (const email of ["demo@example.com", "ünïcode@exämple.com", "a+b@sub.example.co.uk"]) expect(Email.safeParse(email).success, email).toBe(true);
  });
});

describe("GET /api/v2/proclamations", () => {
  it("answers 400 not-authorized for an x-email with a control character", async () => {
    const response = await suite.request("/api/v2/proclamations", { headers: { "x-license-key": "DEMO-0000-0000-0001", "x-email": BEL } });
    expect(await answer(response)).toEqual({ status: 400, body: { message: "not-authorized" } });
  });
});

describe("GET /api/v2/schedule", () => {
  it("answers 400 not-authorized for an e-mail with a control or bidi-control character", async () => {
    for (const email of [BEL, RLO]) {
      const response = await suite.request(`/api/v2/schedule?email=${encodeURIComponent(email)}&licenseKey=DEMO-0000-0000-0001`);
      expect(await answer(response), JSON.stringify(email)).toEqual({ status: 400, body: { message: "not-authorized" } });
    }
  });
});

describe("POST /api/v2/license", () => {
  it("answers 400 user does not exist for an email_address with a control or bidi-control character", async () => {
    for (const email of [BEL, RLO]) {
      const response = await post("/api/v2/license", { license_key: "DEMO-0000-0000-0001", email_address: email });
      expect(await answer(response), JSON.stringify(email)).toEqual({ status: 400, body: { message: "user does not exist" } });
    }
  });
});

describe("POST /api/v2/automations/create/account", () => {
  it("answers 400 for an email with a control or bidi-control character, and creates no account", async () => {
    for (const email of [BEL, RLO, ZWSP]) {
      const response = await suite.request(ONBOARDING_PATH, await signedInit({ email }, { nowMs: Date.now() }));
      expect(await answer(response), JSON.stringify(email)).toEqual({
        status: 400,
        body: { message: "email must be a valid e-mail address of at most 254 characters" },
      });
    }
    expect(await suite.database.db.query("select id from public.accounts where email ~ '[[:cntrl:]]' or email like '%' || chr(8238) || '%'")).toEqual([]);
  });
});

describe("public.accounts", () => {
  it("refuses an e-mail with a control or format character by account_email_has_no_invisible_characters, for every writer", async () => {
    for (const email of [BEL, RLO, ZWSP]) {
      await expect(suite.database.db.query("insert into public.accounts (email, display_name) values ($1, 'x')", [email]), JSON.stringify(email))
        .rejects.toThrow(/account_email_has_no_invisible_characters/);
    }
  });
});
