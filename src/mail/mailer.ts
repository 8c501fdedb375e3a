// Mail to account owners, through the operator's SMTP server (config `smtp`), with
// nodemailer. Only what lmgate sends: plain-text messages with a link.
import { createTransport, type Transporter } from 'nodemailer';
import { ConfigError, readSecretEnv } from '../config/load.js';
import type { SmtpConfig } from '../config/schema.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

// A slow or silent server must not hold a request (or a sign-up) for long.
const SMTP_TIMEOUT_MS = 10_000;

export function openMailer(config: SmtpConfig | undefined, readSecret: (name: string) => string | undefined = readSecretEnv): Mailer | undefined {
  if (!config) return undefined;
  const password = config.password_env === undefined ? undefined : readSecret(config.password_env);
  if (config.password_env !== undefined && password === undefined) throw new ConfigError([`smtp.password_env: ${config.password_env} is not set`]);
  const transport: Transporter = createTransport({
    host: config.host,
    port: config.port,
    secure: config.secure,
    auth: config.user === undefined ? undefined : { user: config.user, pass: password },
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
  return {
    async send(message) {
      await transport.sendMail({ from: config.from, ...message });
    },
    close: () => transport.close(),
  };
}
