// The settings of the outside services lmgate talks to beside model backends: Stripe for
// payments and an SMTP server for mail. schema.ts mounts them as `payments.stripe` and `smtp`.
import { z } from 'zod';

// Stripe: top-ups, paid tiers and auto-recharge. Amounts in config are in currency units
// (dollars, euros); the code turns them into Stripe's integer minor units once.
export const stripePayments = z
  .object({
    secret_key_env: z.string().min(1).default('STRIPE_SECRET_KEY'), // variable holding the secret key
    webhook_secret_env: z.string().min(1).default('STRIPE_WEBHOOK_SECRET'), // holding the signing secret
    api_base: z.string().url().optional(), // Stripe's API host; a local stand-in in tests
    currency: z.string().regex(/^[a-z]{3}$/, 'an ISO 4217 code in lower case').default('usd'),
    credits_per_unit: z.number().positive().default(1), // credits one unit of currency buys
    top_up: z
      .object({
        presets: z.array(z.number().positive()).default([5, 10, 25, 50]),
        min: z.number().positive().default(5),
        max: z.number().positive().default(500),
      })
      .strict()
      .prefault({}),
    prices: z.record(z.string().min(1), z.string().min(1)).default({}), // paid tier → Stripe price id
    grace_days: z.number().min(0).max(60).default(3), // past_due keeps the tier this long
  })
  .strict();

// Outgoing mail (password-reset and sign-up confirmation links), through an SMTP server.
export const smtp = z
  .object({
    host: z.string().min(1),
    port: z.number().int().min(1).max(65_535).default(587),
    secure: z.boolean().default(false), // TLS from the start (port 465); otherwise STARTTLS when offered
    user: z.string().min(1).optional(),
    password_env: z.string().min(1).optional(), // variable holding the SMTP password
    from: z.string().min(3), // "lmgate <no-reply@example.com>"
  })
  .strict();
