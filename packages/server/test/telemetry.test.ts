// The route label of the request metrics: bounded, whatever paths arrive, with each path of the API
// counted under its OpenAPI template, parameters included.
import { assert, it } from "vitest"
import * as Telemetry from "../src/internal/telemetry.js"

it("labels a path by its template: one segment after /emails/ is /emails/{id}, anything else is bounded", () => {
  const routeOf = Telemetry.routeOf(Telemetry.knownRoutes(["ses"]))
  const cases: Array<[string, string]> = [
    ["/emails", "/emails"],
    ["/emails/0190c3b2-0000-7000-8000-000000000000", "/emails/{id}"],
    ["/suppressions/eve%40example.com", "/suppressions/{email}"],
    ["/suppressions", "/suppressions"],
    ["/webhooks/ses", "/webhooks/ses"],
    ["/emails/0190c3b2-0000-7000-8000-000000000000/cancel", "/emails/{id}/cancel"],
    ["/emails/batch", "/emails/batch"],
    ["/emails/x/y", "unmatched"],
    ["/emails/x/y/cancel", "unmatched"],
    ["/emails/", "unmatched"],
    ["/nope/x", "unmatched"],
    ["/_mailroom/storage/attachments/org_acme/1-a.pdf", "/_mailroom/storage/*"],
    ["/metrics", "/metrics"]
  ]
  assert.deepStrictEqual(
    cases.map(([path]) => [path, routeOf(path)]),
    cases
  )
})
