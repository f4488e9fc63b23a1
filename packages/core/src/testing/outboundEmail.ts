// The message an adapter's tests send, so each provider's tests build it alike: plain text from a
// verified sender to one recipient, every list empty, and whatever a test sets over it.
import type { OutboundEmail } from "../EmailProvider.js"

/** `billing@acme.example` to `alice@example.com`, "Your invoice", "See attached.", with `parts` over it. */
export const outboundEmail = (parts: Partial<OutboundEmail> = {}): OutboundEmail => ({
  from: { address: "billing@acme.example" },
  to: ["alice@example.com"],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: "Your invoice",
  text: "See attached.",
  attachments: [],
  ...parts
})
