import { z } from "@hono/zod-openapi";

/** The license key format shared by every route: four blocks of four of [A-Z0-9]. */
export const LicenseKey = z
  .string()
  .regex(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/)
  .openapi({ example: "DEMO-0000-0000-0001" });
