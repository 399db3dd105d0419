/**
 * The types of Cadence's v2 interface: openapi-typescript's output for GET /api/v2/openapi.json.
 * Generated, do not edit: `npx vitest run -u test/openapi/document.test.ts` rewrites this file
 * and openapi.json from what the server serves.
 */

export interface paths {
    "/api/v2/categories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Proclamation categories */
        get: operations["listCategories"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/proclamation-categories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Proclamation categories */
        get: operations["listProclamationCategories"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/groups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Proclamation groups, by sortOrder */
        get: operations["listGroups"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/proclamation-groups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Proclamation groups, by sortOrder */
        get: operations["listProclamationGroups"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/frequencies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The nine canonical frequencies */
        get: operations["listFrequencies"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/color-palettes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One palette per canonical frequency */
        get: operations["listColorPalettes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/proclamations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Proclamations: all, or the subset entitled to a license key's owner */
        get: operations["listProclamations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/licenses/{licenseKey}/schedule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The schedule of a license key, with conditional GET */
        get: operations["getLicenseSchedule"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/schedule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Legacy schedule read with e-mail and license key in the query */
        get: operations["getLegacySchedule"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/license": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Validate a license key against its owner's e-mail, optionally setting the system name */
        post: operations["validateLicense"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/licenses/{licenseKey}/system-name": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Set the kiosk's system name on a license key */
        put: operations["setSystemName"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/automations/create/account": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Signed webhook: create the account if absent, issue a license key and e-mail it */
        post: operations["createAccount"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/automations/suspend/key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Signed call: suspend a license key (it then fails validation as a key that is not active)
         * @description Sets the key not active: POST /api/v2/license answers `license key is not active` for it from then on, and nothing else a kiosk reads changes (its schedule reads go on, as for any key that is not active). Suspending a suspended key changes nothing and answers 200 with `changed: false`. To end a key for good, suspend it: there is no separate revoke.
         */
        post: operations["suspendKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/automations/reinstate/key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Signed call: reinstate a suspended license key (it validates again)
         * @description Sets the key active again. Reinstating an active key changes nothing and answers 200 with `changed: false`.
         */
        post: operations["reinstateKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/automations/move/key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Signed call: move a license key to another existing account
         * @description From then on the key belongs to the account of `account_email`: its kiosk validates with that e-mail (the old one is refused), and it is served that account's proclamations and schedule; a schedule of the key's own moves with it. The account must exist (404 `unknown_account`): a move never creates one; onboard it first. A key already in that account answers 200 with `changed: false`. 409 `name_taken` when a kiosk of that account already has this kiosk's system name (regardless of case): nothing moved.
         */
        post: operations["moveKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/automations/change/email": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Signed call: change an account's e-mail
         * @description From then on the account's kiosks validate with `new_email`, and the old e-mail is refused (`user does not exist`); keys that belonged to the account by the old e-mail alone keep belonging to it. On Supabase, the account's Auth user gets `new_email` too (right after the answer, else by the outbox pass's retries), so the old address no longer signs in. 409 `email_taken` when another account has `new_email`; 409 `name_taken` when keys stored under `new_email` without an account would join it with a system name it uses. The same e-mail again answers 200 with `changed: false`.
         */
        post: operations["changeAccountEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/automations/resend/license-email": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Signed call: send a key's license e-mail again
         * @description Queues the license e-mail onboarding sent (the key and the e-mail to enter it with) to the key's account's e-mail now, through the same outbox: sent after the answer, retried if the mail service fails. At most 3 times per key per 24 hours. 409 `license_not_active` for a suspended key.
         */
        post: operations["resendLicenseEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Category: {
            id: number;
            name: string;
            sortOrder: number;
        };
        ErrorMessage: {
            message: string;
        };
        Group: {
            id: number;
            name: string;
            sortOrder: number;
        };
        Frequency: {
            id: number;
            name: string;
            value: number;
        };
        ColorPalette: {
            solfeggioFrequencyId: number;
            colors: string[];
        };
        Proclamation: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @description HTML */
            content: string;
            categoryId: number;
            groupId: number;
            solfeggioFrequencyId: number;
            colorPalette?: string[];
        };
        SchedulePayload: {
            /** @enum {string|null} */
            type: "daily" | "weekly" | null;
            daily: components["schemas"]["ScheduleBlock"][];
            /** @description Exactly the keys monday .. sunday when type is weekly; {} otherwise */
            weekly: {
                [key: string]: components["schemas"]["ScheduleBlock"][];
            };
            /** @description Legacy daily flattening; [] unless type is daily */
            blocks: components["schemas"]["ScheduleBlock"][];
            /** @description Content-derived hash; the ETag, quoted */
            version: string;
        };
        ScheduleBlock: {
            /** Format: uuid */
            id: string;
            /** @example 22:00 */
            startTime: string;
            startMinutes: number;
            /** @example 06:00 */
            endTime: string;
            endMinutes: number;
            /** @description True when the end clock time is at or before the start */
            overnight: boolean;
            /** @description The wrap past midnight counts as the next day */
            durationMinutes: number;
            dynamicAudio: boolean;
            /** @description In play order; the same id may appear twice */
            proclamationIds: string[];
        };
        ScheduleResponse: {
            /** @enum {string|null} */
            type?: "daily" | "weekly" | null;
            daily?: components["schemas"]["ScheduleBlock"][];
            /** @description Exactly the keys monday .. sunday when type is weekly; {} otherwise */
            weekly?: {
                [key: string]: components["schemas"]["ScheduleBlock"][];
            };
            /** @description Legacy daily flattening; [] unless type is daily */
            blocks: components["schemas"]["ScheduleBlock"][];
            /** @description Content-derived hash; the ETag, quoted */
            version?: string;
            /**
             * Format: email
             * @example demo@example.com
             */
            email: string;
        };
        LicenseResponse: {
            /** @example DEMO-0000-0000-0001 */
            key: string;
            /**
             * Format: email
             * @description The owner's e-mail
             * @example demo@example.com
             */
            email_address: string;
            /**
             * @description `unchanged` when systemName was omitted
             * @enum {string}
             */
            systemNameStatus: "ok" | "unchanged" | "conflict" | "invalid";
        };
        LicenseRequest: {
            /** @example DEMO-0000-0000-0001 */
            license_key: string;
            /**
             * Format: email
             * @example demo@example.com
             */
            email_address: string;
            /**
             * @description Omitted: the stored name is untouched. Empty or whitespace-only is invalid and never clears it.
             * @example Front desk
             */
            systemName?: string;
        };
        SystemNameResponse: {
            /** @description The stored name */
            systemName: string;
            /** @enum {string} */
            systemNameStatus: "ok";
        };
        SystemNameRequest: {
            /** @example Front desk */
            systemName: string;
        };
        OnboardingResponse: {
            success: boolean;
            message: string;
            user_id: string;
        };
        /**
         * @example {
         *       "error": "invalid signature"
         *     }
         */
        SignatureError: {
            error: string;
        };
        OnboardingRequest: {
            /**
             * Format: email
             * @description Trimmed and lower-cased; at most 254 characters
             * @example demo@example.com
             */
            email: string;
            /**
             * @description Display name, at most 120 characters; defaults to the local part of the e-mail
             * @example Ada Lovelace
             */
            name?: string;
        };
        LifecycleResponse: {
            success: boolean;
            message: string;
            /** @description false when the call found it done already (a key already suspended, already in that account, an e-mail unchanged) */
            changed: boolean;
            /** @description The account the key now belongs to (move), or whose e-mail changed (change-email) */
            user_id?: string;
        };
        SuspendKeyRequest: {
            /**
             * @description `suspend`: the call this body is for. A body signed for another call is refused (400), whatever its signature
             * @enum {string}
             */
            type: "suspend";
            /**
             * @description The license key, as issued: four blocks of four of A-Z and 0-9
             * @example DEMO-0000-0000-0001
             */
            license_key: string;
        };
        ReinstateKeyRequest: {
            /**
             * @description `reinstate`: the call this body is for. A body signed for another call is refused (400), whatever its signature
             * @enum {string}
             */
            type: "reinstate";
            /**
             * @description The license key, as issued: four blocks of four of A-Z and 0-9
             * @example DEMO-0000-0000-0001
             */
            license_key: string;
        };
        MoveKeyRequest: {
            /**
             * @description `move`: the call this body is for. A body signed for another call is refused (400), whatever its signature
             * @enum {string}
             */
            type: "move";
            /** @example DEMO-0000-0000-0001 */
            license_key: string;
            /**
             * Format: email
             * @description The e-mail of the account the key moves to (trimmed, compared regardless of case). The account must exist: onboarding creates accounts, a move never does
             * @example demo@example.com
             */
            account_email: string;
        };
        ChangeEmailRequest: {
            /**
             * @description `change-email`: the call this body is for. A body signed for another call is refused (400), whatever its signature
             * @enum {string}
             */
            type: "change-email";
            /**
             * Format: email
             * @description The account's e-mail now (trimmed, compared regardless of case)
             * @example demo@example.com
             */
            account_email: string;
            /**
             * Format: email
             * @description Its new e-mail, stored trimmed and lower-cased; no other account may have it
             * @example new@example.com
             */
            new_email: string;
        };
        ResendLicenseEmailRequest: {
            /**
             * @description `resend`: the call this body is for. A body signed for another call is refused (400), whatever its signature
             * @enum {string}
             */
            type: "resend";
            /**
             * @description The license key, as issued: four blocks of four of A-Z and 0-9
             * @example DEMO-0000-0000-0001
             */
            license_key: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description Whole seconds to wait before trying again */
        "Retry-After": number;
        /** @description Requests this route allows a client per window. On every answer of a rate-limited route, unless its limiter's store was unavailable (then nothing is known) */
        "RateLimit-Limit": number;
        /** @description Requests left to this client in the current window (see RateLimit-Limit) */
        "RateLimit-Remaining": number;
        /** @description Whole seconds until the current window resets (see RateLimit-Limit) */
        "RateLimit-Reset": number;
        /** @description Only on an answer from this instance's last known good copy, while the database is unavailable: whole seconds since that copy was read */
        Age: number;
        /** @description The schedule's `version` in double quotes; send it back in If-None-Match */
        ETag: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listCategories: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Proclamation categories */
            200: {
                headers: {
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Category"][];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance has not read this payload since it started */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    listProclamationCategories: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Proclamation categories */
            200: {
                headers: {
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Category"][];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance has not read this payload since it started */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    listGroups: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Proclamation groups, by sortOrder */
            200: {
                headers: {
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Group"][];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance has not read this payload since it started */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    listProclamationGroups: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Proclamation groups, by sortOrder */
            200: {
                headers: {
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Group"][];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance has not read this payload since it started */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    listFrequencies: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The nine canonical frequencies */
            200: {
                headers: {
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Frequency"][];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance has not read this payload since it started */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    listColorPalettes: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One palette per canonical frequency */
            200: {
                headers: {
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ColorPalette"][];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance has not read this payload since it started */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    listProclamations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Proclamations with canonical frequency ids */
            200: {
                headers: {
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Proclamation"][];
                };
            };
            /** @description `not-authorized` or `this key doesn't appear to belong to you` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance has no last known answer: it never read the whole list, or never read this key and e-mail's entitlement */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    getLicenseSchedule: {
        parameters: {
            query?: never;
            header?: {
                "if-none-match"?: string;
            };
            path: {
                licenseKey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The schedule payload */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    Age: components["headers"]["Age"];
                    ETag: components["headers"]["ETag"];
                    /** @description Caches may keep the payload but must revalidate it before each use */
                    "Cache-Control": "no-cache";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SchedulePayload"];
                };
            };
            /** @description If-None-Match matches the current ETag; no body */
            304: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    Age: components["headers"]["Age"];
                    ETag: components["headers"]["ETag"];
                    /** @description Caches may keep the payload but must revalidate it before each use */
                    "Cache-Control": "no-cache";
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `unknown_license` */
            404: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance never served this key's schedule */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    getLegacySchedule: {
        parameters: {
            query: {
                email: string;
                licenseKey?: string;
                /** @description Alias of licenseKey */
                key?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The e-mail and the schedule payload */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ScheduleResponse"];
                };
            };
            /** @description `not-authorized` or `this key doesn't appear to belong to you` */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable and this instance never answered this key and e-mail */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    validateLicense: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The key, the owner's e-mail and an optional system name */
        requestBody: {
            content: {
                "application/json": components["schemas"]["LicenseRequest"];
            };
        };
        responses: {
            /** @description The key is valid; systemNameStatus tells what became of the system name */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    Age: components["headers"]["Age"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LicenseResponse"];
                };
            };
            /** @description Malformed body, a missing field, or a key that fails validation */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable, and the request sets a system name or this instance validated this key and e-mail in none of the last 24 hours */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    setSystemName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                licenseKey: string;
            };
            cookie?: never;
        };
        /** @description The new name */
        requestBody: {
            content: {
                "application/json": components["schemas"]["SystemNameRequest"];
            };
        };
        responses: {
            /** @description The stored name (also when it was already the name: nothing is written) */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SystemNameResponse"];
                };
            };
            /** @description `invalid_name`: the body is not a JSON object with a valid systemName */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `unknown_license` */
            404: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `name_taken`: another key of the same account has a name that looks the same: regardless of case, compatibility forms (fullwidth, mathematical, circled letters), repeated spaces and look-alike letters of another script in the name */
            409: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `service temporarily unavailable`: the database is unavailable */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    createAccount: {
        parameters: {
            query?: never;
            header?: {
                /** @description With the x-signature scheme (onboardingSignature): carry this request out once for 24 hours. A retry with the same key and the same body (re-signed, with a new x-nonce) gets the first answer again, byte for byte, and creates, changes, sends and counts nothing; the same key with another body, or at another signed call (one namespace for all of them), is 422; while the first is still running, 409 with Retry-After. Under Standard Webhooks the signed webhook-id plays this part and this header is not used. A UUID is ideal. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The account to onboard */
        requestBody: {
            content: {
                "application/json": components["schemas"]["OnboardingRequest"];
            };
        };
        responses: {
            /** @description Account ready; a new license key is on its way by e-mail. A retry of an id gets this first answer again */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    /** @description `true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OnboardingResponse"];
                };
            };
            /** @description `request body is required`, `invalid JSON body`, `email is required`, an invalid e-mail or name, or a malformed Idempotency-Key */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `invalid signature`, whatever the cause, and for a request carrying both schemes' headers */
            401: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignatureError"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `a request with this idempotency key is still in progress; retry shortly` */
            409: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `this idempotency key was already used with a different request body`: nothing was changed */
            422: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `the account could not be created`: nothing was carried out and no e-mail's limit used; retry with the same id */
            500: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `rate limiting is unavailable, try again shortly`: the rate-limit store cannot be reached, and this route is never served unlimited */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    suspendKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description With the x-signature scheme (onboardingSignature): carry this request out once for 24 hours. A retry with the same key and the same body (re-signed, with a new x-nonce) gets the first answer again, byte for byte, and creates, changes, sends and counts nothing; the same key with another body, or at another signed call (one namespace for all of them), is 422; while the first is still running, 409 with Retry-After. Under Standard Webhooks the signed webhook-id plays this part and this header is not used. A UUID is ideal. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description What to change */
        requestBody: {
            content: {
                "application/json": components["schemas"]["SuspendKeyRequest"];
            };
        };
        responses: {
            /** @description Done (`changed` false when it was already so). A retry of an id gets the first answer again */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    /** @description `true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleResponse"];
                };
            };
            /** @description `request body is required`, `invalid JSON body`, `type is required`, `type must name the call of this path`, a field missing or invalid (its name in the message), or a malformed Idempotency-Key */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `invalid signature`, whatever the cause, and for a request carrying both schemes' headers */
            401: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignatureError"];
                };
            };
            /** @description `unknown_license`: nothing was changed */
            404: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `a request with this idempotency key is still in progress; retry shortly`, with Retry-After */
            409: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `this idempotency key was already used with a different request body` (or at another call): nothing was changed */
            422: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `rate limiting is unavailable, try again shortly`: the rate-limit store cannot be reached, and this route is never served unlimited */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    reinstateKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description With the x-signature scheme (onboardingSignature): carry this request out once for 24 hours. A retry with the same key and the same body (re-signed, with a new x-nonce) gets the first answer again, byte for byte, and creates, changes, sends and counts nothing; the same key with another body, or at another signed call (one namespace for all of them), is 422; while the first is still running, 409 with Retry-After. Under Standard Webhooks the signed webhook-id plays this part and this header is not used. A UUID is ideal. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description What to change */
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReinstateKeyRequest"];
            };
        };
        responses: {
            /** @description Done (`changed` false when it was already so). A retry of an id gets the first answer again */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    /** @description `true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleResponse"];
                };
            };
            /** @description `request body is required`, `invalid JSON body`, `type is required`, `type must name the call of this path`, a field missing or invalid (its name in the message), or a malformed Idempotency-Key */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `invalid signature`, whatever the cause, and for a request carrying both schemes' headers */
            401: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignatureError"];
                };
            };
            /** @description `unknown_license`: nothing was changed */
            404: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `a request with this idempotency key is still in progress; retry shortly`, with Retry-After */
            409: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `this idempotency key was already used with a different request body` (or at another call): nothing was changed */
            422: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `rate limiting is unavailable, try again shortly`: the rate-limit store cannot be reached, and this route is never served unlimited */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    moveKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description With the x-signature scheme (onboardingSignature): carry this request out once for 24 hours. A retry with the same key and the same body (re-signed, with a new x-nonce) gets the first answer again, byte for byte, and creates, changes, sends and counts nothing; the same key with another body, or at another signed call (one namespace for all of them), is 422; while the first is still running, 409 with Retry-After. Under Standard Webhooks the signed webhook-id plays this part and this header is not used. A UUID is ideal. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description What to change */
        requestBody: {
            content: {
                "application/json": components["schemas"]["MoveKeyRequest"];
            };
        };
        responses: {
            /** @description Done (`changed` false when it was already so). A retry of an id gets the first answer again */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    /** @description `true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleResponse"];
                };
            };
            /** @description `request body is required`, `invalid JSON body`, `type is required`, `type must name the call of this path`, a field missing or invalid (its name in the message), or a malformed Idempotency-Key */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `invalid signature`, whatever the cause, and for a request carrying both schemes' headers */
            401: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignatureError"];
                };
            };
            /** @description `unknown_license`, `unknown_account`: nothing was changed */
            404: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `name_taken`: nothing was changed; or `a request with this idempotency key is still in progress; retry shortly`, with Retry-After */
            409: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `this idempotency key was already used with a different request body` (or at another call): nothing was changed */
            422: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `rate limiting is unavailable, try again shortly`: the rate-limit store cannot be reached, and this route is never served unlimited */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    changeAccountEmail: {
        parameters: {
            query?: never;
            header?: {
                /** @description With the x-signature scheme (onboardingSignature): carry this request out once for 24 hours. A retry with the same key and the same body (re-signed, with a new x-nonce) gets the first answer again, byte for byte, and creates, changes, sends and counts nothing; the same key with another body, or at another signed call (one namespace for all of them), is 422; while the first is still running, 409 with Retry-After. Under Standard Webhooks the signed webhook-id plays this part and this header is not used. A UUID is ideal. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description What to change */
        requestBody: {
            content: {
                "application/json": components["schemas"]["ChangeEmailRequest"];
            };
        };
        responses: {
            /** @description Done (`changed` false when it was already so). A retry of an id gets the first answer again */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    /** @description `true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleResponse"];
                };
            };
            /** @description `request body is required`, `invalid JSON body`, `type is required`, `type must name the call of this path`, a field missing or invalid (its name in the message), or a malformed Idempotency-Key */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `invalid signature`, whatever the cause, and for a request carrying both schemes' headers */
            401: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignatureError"];
                };
            };
            /** @description `unknown_account`: nothing was changed */
            404: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `email_taken`, `name_taken`: nothing was changed; or `a request with this idempotency key is still in progress; retry shortly`, with Retry-After */
            409: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `this idempotency key was already used with a different request body` (or at another call): nothing was changed */
            422: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `rate limiting is unavailable, try again shortly`: the rate-limit store cannot be reached, and this route is never served unlimited */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
    resendLicenseEmail: {
        parameters: {
            query?: never;
            header?: {
                /** @description With the x-signature scheme (onboardingSignature): carry this request out once for 24 hours. A retry with the same key and the same body (re-signed, with a new x-nonce) gets the first answer again, byte for byte, and creates, changes, sends and counts nothing; the same key with another body, or at another signed call (one namespace for all of them), is 422; while the first is still running, 409 with Retry-After. Under Standard Webhooks the signed webhook-id plays this part and this header is not used. A UUID is ideal. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description What to change */
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResendLicenseEmailRequest"];
            };
        };
        responses: {
            /** @description Done (`changed` false when it was already so). A retry of an id gets the first answer again */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    /** @description `true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleResponse"];
                };
            };
            /** @description `request body is required`, `invalid JSON body`, `type is required`, `type must name the call of this path`, a field missing or invalid (its name in the message), or a malformed Idempotency-Key */
            400: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `invalid signature`, whatever the cause, and for a request carrying both schemes' headers */
            401: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignatureError"];
                };
            };
            /** @description `unknown_license`: nothing was changed */
            404: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body was not received in time`: the body did not arrive within 10 seconds */
            408: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `license_not_active`: nothing was changed; or `a request with this idempotency key is still in progress; retry shortly`, with Retry-After */
            409: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `request body must not exceed 64 KiB` */
            413: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `this idempotency key was already used with a different request body` (or at another call): nothing was changed */
            422: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `too many requests`: over the route's rate limit; Retry-After is when a request passes again */
            429: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
            /** @description `rate limiting is unavailable, try again shortly`: the rate-limit store cannot be reached, and this route is never served unlimited */
            503: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorMessage"];
                };
            };
        };
    };
}
