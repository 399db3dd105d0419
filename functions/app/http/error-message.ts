import { z } from "@hono/zod-openapi";

/** The body of every error answer the contract gives (`{"message": ...}`), but the onboarding signature's 401. */
export const ErrorMessage = z.object({ message: z.string() }).openapi("ErrorMessage");
