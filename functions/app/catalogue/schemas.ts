import { z } from "@hono/zod-openapi";

const hexColor = z.string().regex(/^#[0-9A-Fa-f]{6}$/);
const canonicalId = z.number().int().min(1).max(9);

export const Category = z
  .object({ id: z.number().int(), name: z.string(), sortOrder: z.number().int() })
  .openapi("Category");

export const Group = z
  .object({ id: z.number().int(), name: z.string(), sortOrder: z.number().int() })
  .openapi("Group");

export const Frequency = z
  .object({ id: canonicalId, name: z.string(), value: z.number().int() })
  .openapi("Frequency");

export const ColorPalette = z
  .object({ solfeggioFrequencyId: canonicalId, colors: z.array(hexColor).min(1) })
  .openapi("ColorPalette");

export const Proclamation = z
  .object({
    id: z.uuid(),
    name: z.string(),
    content: z.string().openapi({ description: "HTML" }),
    categoryId: z.number().int(),
    groupId: z.number().int(),
    solfeggioFrequencyId: canonicalId,
    colorPalette: z.array(hexColor).min(1).optional(),
  })
  .openapi("Proclamation");
