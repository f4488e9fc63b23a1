import { Effect, Layer } from "effect"
import { EmailProvider, ObjectStore } from "../src/index.js"
import { EmailProviderSuite, ObjectStoreSuite } from "../src/testing/index.js"

const store = ObjectStore.makeMemory()
ObjectStoreSuite("memory", { layer: Layer.succeed(ObjectStore.ObjectStore, store), fetch: store.fetch })

// The memory provider delivers to its `sent` list and nowhere else, so that list is its peer. The
// suite overwrites every message it handed over once `send` returns: the list must hold copies.
const provider = EmailProvider.makeMemory()
EmailProviderSuite("memory", {
  layer: Layer.succeed(EmailProvider.EmailProvider, provider),
  read: (messageId) =>
    Effect.sync(() => {
      const sent = provider.sent.find((s) => s.messageId === messageId)
      if (sent === undefined) throw new Error(`no message ${messageId}`)
      const { email } = sent
      return {
        from: email.from,
        to: email.to,
        cc: email.cc,
        bcc: email.bcc,
        replyTo: email.replyTo,
        subject: email.subject,
        text: email.text,
        html: email.html,
        attachments: email.attachments.map((a) => ({
          filename: a.filename,
          contentType: a.contentType,
          content: a.content,
          contentId: a.contentId,
          disposition: a.contentId === undefined ? ("attachment" as const) : ("inline" as const)
        })),
        headers: email.headers ?? [],
        tags: email.tags ?? [],
        metadata: email.metadata ?? {}
      }
    })
})
