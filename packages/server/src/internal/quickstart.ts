// What `npm start` prints under the listening line: the example credential and a copy-paste curl
// for each step of the flow, for the first organisation of the config.
import type { Config } from "../ServerConfig.js"

export const quickstartText = (url: string, config: Config, viewer?: string): string => {
  const org = config.organizations[0]
  const apiKey = org?.apiKeys?.find((k) => !k.startsWith("sha256:"))
  const token = org?.accessTokens?.find((k) => !k.startsWith("sha256:"))
  if (org === undefined || apiKey === undefined) return "(no plain API key in the config: nothing to show)"
  const from = `hello@${org.slug}.${config.serviceDomain}`
  const sendBody = JSON.stringify({
    from,
    from_name: "Mailroom Quick Start",
    to: ["alice@example.com"],
    subject: "Hello from mailroom",
    body: { text: "It works.", html: "<p>It <b>works</b>.</p>" },
    attachments: [{ filename: "hello.txt", key: "KEY" }]
  })
  const where =
    config.provider.kind === "outbox"
      ? `\nSent messages are written as .eml files to ${config.provider.dir}${
          viewer === undefined ? "" : `\nSee them in your browser, live: ${viewer}`
        }`
      : ""
  return `
Organisation ${org.id}: API key ${apiKey}${token === undefined ? "" : `, bearer token ${token}`}

1. Presign an upload (note the url and key it answers):
   curl -s -X POST ${url}/attachments/presign -H 'x-api-key: ${apiKey}' -H 'content-type: application/json' -d '{"filename":"hello.txt","content_type":"text/plain"}'
2. Upload the file to the url:
   curl -s -X PUT 'URL' -H 'content-type: text/plain' --data-binary 'Hello, attachment!'
3. Send it:
   curl -s -X POST ${url}/emails -H 'x-api-key: ${apiKey}' -H 'content-type: application/json' -d '${sendBody}'
4. Get a download URL:
   curl -s '${url}/attachments/download?key=KEY' -H 'x-api-key: ${apiKey}'
5. Delete it:
   curl -s -X DELETE '${url}/attachments/delete?key=KEY' -H 'x-api-key: ${apiKey}'
6. Read the message's record (each recipient's state and delivery events), with the message_id step 3 answered:
   curl -s ${url}/emails/MESSAGE_ID -H 'x-api-key: ${apiKey}'

Or run all of it at once: npm run quickstart${where}
OpenAPI: ${url}/openapi.json`
}
