/**
 * Optional e-mail for invites (FOLIO_SMTP_URL, FOLIO_SMTP_FROM). Without it, the link is shown to
 * the person who made the invite, to pass on themselves: no mail server is assumed.
 */
import nodemailer from "nodemailer";
import type { Config } from "../../core/config.ts";

export interface Mailer {
  sendInvite(to: string, url: string, context: string): Promise<void>;
}

export function smtpMailer(config: Config): Mailer | null {
  if (!config.FOLIO_SMTP_URL) return null;
  const transport = nodemailer.createTransport(config.FOLIO_SMTP_URL);
  const from = config.FOLIO_SMTP_FROM;
  return {
    async sendInvite(to, url, context) {
      await transport.sendMail({
        from,
        to,
        subject: "Your Folio sign-in link",
        text: `You have been invited to ${context} on Folio.\n\nSet your password here (the link works once, for 24 hours):\n${url}\n\nIf you did not expect this, ignore this message.`,
      });
    },
  };
}
