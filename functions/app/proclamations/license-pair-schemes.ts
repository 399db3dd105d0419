import type { HeaderScheme } from "../http/openapi-security.ts";

/** The optional, paired headers of the proclamation list (section 4.2), as the OpenAPI document describes them. */
export const LICENSE_PAIR_SCHEMES = {
  licenseKey: {
    name: "x-license-key",
    description: "A license key (`XXXX-XXXX-XXXX-XXXX`, A-Z and 0-9), sent together with x-email: the answer is then only the proclamations entitled to the key's owner. One without the other is `400 not-authorized`.",
  },
  accountEmail: {
    name: "x-email",
    description: "The e-mail of the license key's owner, sent together with x-license-key. A key that is not this account's is `400 this key doesn't appear to belong to you`.",
  },
} satisfies Record<string, HeaderScheme>;
